"""Matters: the migration that files an existing library under "Unfiled", one copy of a document in
several matters, the CLI (`folio matter ...`, `--matter`), the refusal of a question across matters,
and a matter's destruction that leaves no byte of its text behind and a verifiable audit record."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.commands import main
from app.context import AppContext, open_app
from app.errors import FolioError
from app.store.audit import AuditLog, entry_hash
from app.store.conversations import Conversations
from app.store.db import KNOWN, applied_migrations, build_migrations, open_db
from app.store.extraction import ExtractionStore
from app.store.matters import UNFILED, Matters

PHRASE = "Vorquillian brambleshade escrow"  # words that exist nowhere else


def _text_file(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _folio(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# -- the migration ------------------------------------------------------------------------------
def test_migration_files_an_old_library_under_unfiled_and_loses_nothing(tmp_path: Path) -> None:
    from sqlite_utils import Database

    path = tmp_path / "old.sqlite3"
    old = Database(path)
    build_migrations().apply(old, stop_before="m037_matters")  # type: ignore[attr-defined]
    assert "m037_matters" not in applied_migrations(old)
    for doc_id in (1, 2):
        old.execute(
            "INSERT INTO documents(id, sha256, kind, title, mime, size_bytes, source_path, added_at) "
            "VALUES (?, ?, 'text', ?, 'text/plain', 10, '/x', '2025-01-02T03:04:05+00:00')",
            [doc_id, f"{doc_id:064x}", f"doc {doc_id}"],
        )
    old.execute("INSERT INTO conversations(id, title, created_at, updated_at) VALUES (7, 'c', 'x', 'x')")
    old.execute("INSERT INTO conversation_documents(conversation_id, document_id, position) VALUES (7, 1, 0)")
    old.execute(
        "INSERT INTO extraction_runs(id, template_key, template_name, template_version, template_sha256, "
        "template_json, model, model_sha256, created_at, updated_at) VALUES (3, 'nda', 'NDA', 1, 't', '{}', 'm', "
        "'s', 'x', 'x')"
    )
    # An audit entry written before matters: its hash must still verify after the migration.
    row = {
        "id": 1, "at": "x", "os_user": "u", "action": "add", "documents": '["a"]', "model_sha256": None,
        "settings": "{}", "details": "{}", "prev_hash": "0" * 64,
    }  # fmt: skip
    row["hash"] = entry_hash(row)
    old.table("audit_log").insert(row)
    old.conn.commit()
    old.close()
    (tmp_path / "audit-head.json").write_text(json.dumps({"id": 1, "hash": row["hash"]}))

    db = open_db(path)
    assert applied_migrations(db) == KNOWN
    matters = Matters(db)
    unfiled = matters.get(UNFILED)
    assert [m.name for m in matters.all()] == [UNFILED]
    assert matters.document_ids(unfiled.id) == [1, 2]
    assert Conversations(db).get(7).matter_id == unfiled.id
    assert Conversations(db).get(7).document_ids == [1]
    assert ExtractionStore(db).matter_of(3) == unfiled.id
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 2
    log = AuditLog(db, tmp_path / "audit-head.json")
    assert log.verify().ok, log.verify().problem
    assert log.entries()[0].matter_id is None  # append-only: entries from before keep no matter
    log.record("add", documents=["b"], model_sha256=None, settings={}, details={}, matter_id=unfiled.id)
    assert log.verify().ok and log.entries()[-1].matter_id == unfiled.id
    db.close()


def test_an_entrys_matter_is_covered_by_its_hash(ctx: AppContext) -> None:
    log = ctx.audit
    log.record("add", documents=["a"], model_sha256=None, settings={}, details={}, matter_id=1)
    assert log.verify().ok
    ctx.db.execute("DROP TRIGGER audit_log_no_update")
    ctx.db.execute("UPDATE audit_log SET matter_id = 2 WHERE id = 1")
    assert not log.verify().ok


# -- one copy, several matters ------------------------------------------------------------------
def test_the_same_file_in_two_matters_is_one_document_linked_twice(ctx: AppContext, tmp_path: Path) -> None:
    matters = Matters(ctx.db)
    acme, beta = matters.create("Acme v. Beta", number="2024-017"), matters.create("Beta merger")
    source = _text_file(tmp_path / "nda.txt", "Mutual NDA. Governed by the laws of Delaware.\n")
    ctx.chosen_matter = acme.id
    first = ctx.library.add(source)
    ctx.chosen_matter = beta.id
    second = ctx.library.add(source)
    assert first.created and not second.created and first.document.id == second.document.id
    assert ctx.db.execute("SELECT count(*) FROM documents").fetchone()[0] == 1
    assert matters.of_documents([first.document.id]) == {first.document.id: {acme.id, beta.id}}
    assert [d.id for d in ctx.library.all(matter_id=acme.id)] == [first.document.id]
    assert ctx.library.all(matter_id=matters.unfiled().id) == []
    assert [e.matter_id for e in ctx.audit.entries() if e.action == "add"] == [acme.id, beta.id]
    assert ctx.audit.verify().ok


def test_an_email_added_to_another_matter_brings_its_attachments(ctx: AppContext, tmp_path: Path) -> None:
    from tests.fixtures.office import email_with_attachments

    matters = Matters(ctx.db)
    acme, beta = matters.create("Acme"), matters.create("Beta")
    mail = email_with_attachments(tmp_path / "m.eml", [("terms.txt", b"Terms: ninety days.\n", "text/plain")])
    ctx.chosen_matter = acme.id
    email = ctx.library.add(mail).document
    ctx.chosen_matter = beta.id
    assert ctx.library.add(mail).linked
    both = {acme.id, beta.id}
    assert [held for held in matters.of_documents(matters.document_ids(acme.id)).values()] == [both, both]
    assert matters.one_for([email.id], prefer=beta.id) == beta.id


def test_a_matters_list_comes_a_page_at_a_time_with_attachments_under_their_email(
    ctx: AppContext, tmp_path: Path
) -> None:
    from tests.fixtures.office import email_with_attachments

    matters = Matters(ctx.db)
    acme, beta = matters.create("Acme"), matters.create("Beta")
    ctx.chosen_matter = acme.id
    texts = [ctx.library.add(_text_file(tmp_path / f"t{i}.txt", f"Letter {i}.")).document.id for i in range(5)]
    parts = [("a.txt", b"Terms: ninety days.\n", "text/plain"), ("b.txt", b"Fees: ten.\n", "text/plain")]
    email = ctx.library.add(email_with_attachments(tmp_path / "m.eml", parts)).document.id
    later = ctx.library.add(_text_file(tmp_path / "later.txt", "A later letter.")).document.id
    ctx.chosen_matter = beta.id
    own = ctx.library.add(_text_file(tmp_path / "beta.txt", "Beta's letter.")).document.id
    matters.link(beta.id, texts[0])
    library = ctx.library
    attachments = [a.document_id for a in library.attachments(email)]

    def listed(rows: list) -> list[tuple[int, int | None]]:  # type: ignore[type-arg]
        return [(r.document.id, r.attachment) for r in rows]

    first = library.listing(acme.id, limit=3)
    assert listed(first) == [(i, None) for i in texts[:3]]
    second = library.listing(acme.id, after=texts[2], limit=3)
    assert listed(second) == [
        (texts[3], None),
        (texts[4], None),
        (email, None),
        (attachments[0], 1),
        (attachments[1], 2),
    ]
    assert listed(library.listing(acme.id, after=email, limit=3)) == [(later, None)]
    # Up to a document by id: an attachment is reached through its e-mail, with the e-mail's others.
    assert listed(library.listing(acme.id, after=texts[4], limit=None, through=attachments[1]))[-2:] == [
        (attachments[0], 1),
        (attachments[1], 2),
    ]
    assert library.listing(acme.id, limit=None, through=own) == []  # not in this matter: nothing
    assert listed(library.listing(beta.id)) == [(texts[0], None), (own, None)]


def test_a_matters_list_and_search_read_through_indexes(ctx: AppContext, tmp_path: Path) -> None:
    """The window's list page and its search scoped to a matter never scan a table whole (a scan grows
    with the library; an index search does not): checked on SQLite's own query plans."""
    from app.store.search import Search

    matters = Matters(ctx.db)
    acme = matters.create("Acme")
    ctx.chosen_matter = acme.id
    first = ctx.library.add(_text_file(tmp_path / "a.txt", "Letter about the escrow.")).document.id
    statements: list[str] = []
    ctx.db.conn.set_trace_callback(statements.append)
    try:
        ctx.library.listing(acme.id, limit=100)
        ctx.library.listing(acme.id, after=0, limit=None, through=first)
        Search(ctx.db).query("escrow", matter_id=acme.id, conversations=False)
    finally:
        ctx.db.conn.set_trace_callback(None)
    selects = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]
    assert len(selects) >= 4
    for statement in selects:
        plan = [row[3] for row in ctx.db.execute("EXPLAIN QUERY PLAN " + statement).fetchall()]
        scans = [step for step in plan if step.startswith("SCAN") and "VIRTUAL TABLE" not in step]
        assert not scans, (statement, plan)


def test_a_question_across_matters_is_refused_in_one_line(ctx: AppContext, tmp_path: Path) -> None:
    from app.chat import ChatService

    matters = Matters(ctx.db)
    acme, beta = matters.create("Acme"), matters.create("Beta")
    ctx.chosen_matter = acme.id
    a = ctx.library.add(_text_file(tmp_path / "a.txt", "Acme's lease.\n")).document
    ctx.chosen_matter = beta.id
    b = ctx.library.add(_text_file(tmp_path / "b.txt", "Beta's loan.\n")).document
    with pytest.raises(FolioError) as refused:
        Conversations(ctx.db).create([a.id, b.id], "mixed")
    assert "different matters ('Acme', 'Beta')" in str(refused.value) and "\n" not in str(refused.value)
    service = ChatService(ctx)
    try:
        with pytest.raises(FolioError, match="different matters"):
            service.ask([a.id, b.id], "Which law governs?")
        assert service.matter_for([b.id]) == beta.id
    finally:
        service.close()
    assert Conversations(ctx.db).all() == []  # nothing was stored


# -- the CLI ------------------------------------------------------------------------------------
def test_matter_commands_and_the_matter_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lease = _text_file(tmp_path / "lease.txt", "The tenant pays rent to Brindlewood monthly.\n")
    loan = _text_file(tmp_path / "loan.txt", "The borrower repays Brindlewood in 2029.\n")
    assert _folio(capsys, "matter", "new", "Acme", "--number", "A-1", "--retain-until", "2001-01-01")[0] == 0
    assert _folio(capsys, "matter", "new", "Beta", "--description", "the loan")[0] == 0
    code, _, err = _folio(capsys, "matter", "new", "acme")
    assert code == 1 and err.strip() == "folio: error: a matter named 'acme' already exists"
    assert _folio(capsys, "add", str(lease), "--matter", "Acme")[0] == 0  # document 1
    deed = _text_file(tmp_path / "deed.txt", "The deed of Brindlewood House.\n")
    assert _folio(capsys, "add", str(deed), "--matter", "Acme")[0] == 0  # document 2
    assert _folio(capsys, "matter", "use", "Beta")[0] == 0
    code, out, _ = _folio(capsys, "add", str(loan))
    assert code == 0 and "added:" in out
    code, out, _ = _folio(capsys, "add", str(lease))  # into Beta too: linked, not copied
    assert code == 0 and "already in library, now also in matter 'Beta'" in out

    code, out, _ = _folio(capsys, "list")  # the current matter, Beta
    assert " loan " in out and " lease " in out
    code, out, _ = _folio(capsys, "list", "--matter", "Acme")
    assert " lease " in out and " deed " in out and " loan " not in out
    code, out, _ = _folio(capsys, "list", "--matter", UNFILED)
    assert "holds no documents" in out
    code, out, _ = _folio(capsys, "search", "repays", "--matter", "Acme")
    assert out.strip() == "No matches."
    code, out, _ = _folio(capsys, "search", "repays")
    assert "loan" in out

    assert _folio(capsys, "matter", "close", "Acme")[0] == 0
    code, out, _ = _folio(capsys, "matter", "list")
    assert "* Beta" in out and "due for destruction, closed" in out
    code, out, _ = _folio(capsys, "matter", "list", "--due")
    assert "Acme" in out and "Beta" not in out
    code, out, _ = _folio(capsys, "matter", "show", "Acme", "--json")
    shown = json.loads(out)
    assert shown["number"] == "A-1" and shown["documents"] == 2 and shown["due"] is True

    assert _folio(capsys, "matter", "rename", "Beta", "Beta loan")[0] == 0
    code, out, _ = _folio(capsys, "matter", "show")  # the current matter followed the rename
    assert "matter:        Beta loan" in out and "2 document(s)" in out
    code, _, err = _folio(capsys, "list", "--matter", "Gamma")
    assert code == 1 and "no matter named 'Gamma'" in err
    code, _, err = _folio(capsys, "ask", "2", "3", "Who pays?")  # the deed (Acme) and the loan (Beta loan)
    assert code == 1 and err.count("\n") == 1 and "different matters ('Acme', 'Beta loan')" in err

    code, out, _ = _folio(capsys, "matter", "purge", "Acme", "--yes")  # the deed goes, the lease stays
    assert code == 0 and "destroyed: matter 'Acme' (1 document(s)" in out and "1 document(s) kept" in out
    code, out, _ = _folio(capsys, "matter", "list")
    assert "Acme" not in out

    ctx = open_app()
    try:
        assert ctx.db.execute("SELECT count(*) FROM documents").fetchone()[0] == 2
        assert ctx.audit.verify().ok
        events = [e.details.get("event") for e in ctx.audit.entries() if e.action == "matter"]
        assert events == ["opened", "opened", "closed", "renamed"]
        assert ctx.audit.entries()[-1].action == "destroy"
    finally:
        ctx.close()


# -- destroying a matter ------------------------------------------------------------------------
def _files_holding(root: Path, needle: bytes) -> list[str]:
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and needle in path.read_bytes().lower():
            found.append(str(path.relative_to(root)))
    return found


def test_purge_destroys_the_matter_and_leaves_no_trace_of_its_text(
    capsys: pytest.CaptureFixture[str], folio_home: Path, tmp_path: Path
) -> None:
    from app.purge import purge_matter
    from tests.fixtures.office import email_with_attachments

    needle = PHRASE.lower().encode()
    ctx = open_app()
    try:
        matters = Matters(ctx.db)
        secret, other = matters.create("Secret deal", number="S-9"), matters.create("Other")
        ctx.chosen_matter = secret.id
        memo = ctx.library.add(_text_file(tmp_path / "memo.txt", f"The {PHRASE} closes on Friday.\n")).document
        mail = email_with_attachments(
            tmp_path / "deal.eml", [("terms.txt", f"Terms: {PHRASE} of 40,000.\n".encode(), "text/plain")]
        )
        email = ctx.library.add(mail).document
        shared = ctx.library.add(_text_file(tmp_path / "shared.txt", "A shared template of Delaware law.\n"))
        ctx.chosen_matter = other.id
        ctx.library.add(tmp_path / "shared.txt")
        kept = ctx.library.add(_text_file(tmp_path / "kept.txt", "The other matter's lease.\n")).document
        attachment_blobs = [
            p for p in (folio_home / "data" / "blobs").rglob("*") if p.is_file() and needle in p.read_bytes().lower()
        ]
        assert attachment_blobs  # the attachment's original is stored beside the database

        # The matter's conversation (an answer quoting the phrase) and extraction table.
        conversations = Conversations(ctx.db)
        conv = conversations.create([memo.id], "About the escrow", matter_id=secret.id)
        conversations.add_message(conv, "assistant", f"The {PHRASE} closes on Friday [p. 1].")
        kept_conv = conversations.create([kept.id], "Lease", matter_id=other.id)
        store = ExtractionStore(ctx.db)
        run = {
            "template_key": "nda", "template_name": "NDA", "template_version": 1, "template_sha256": "t",
            "template_json": "{}", "model": "m", "model_sha256": "s", "matter_id": secret.id,
        }  # fmt: skip
        run_id = store.start(None, run, [memo.id, shared.document.id])
        cell = {"document_id": shared.document.id, "field_key": "parties", "found": 1, "quote_status": "exact",
                "value": PHRASE, "created_at": "x"}  # fmt: skip
        store.add_cells(run_id, [cell])
        # A playbook review of the shared document on the matter's run, quoting the phrase, with a
        # reviewer's decision; an answer part kept of a question read in parts; the e-mail's checks; and a
        # redacted copy's log. Stored by their own code.
        from app.checks.service import Checker
        from app.playbook.book import PlaybookStore
        from app.playbook.review import REJECTED, Finding, decide_finding, store_review
        from app.playbook.values import NOT_MET
        from app.store.conversations import KeptPart
        from app.store.redactions import Redactions

        playbook = PlaybookStore.for_config(ctx.paths.config_dir).get("commercial_contract")
        rule = playbook.rules[0].key
        finding = Finding(rule, NOT_MET, "The clause falls short.", quote=f"The {PHRASE} survives termination.")
        review = store_review(ctx, playbook, shared.document.id, run_id, [finding], "m", "s")
        # The note stays clear of the phrase: the decision's audit entry records it, and the audit log is
        # append-only (as a question's text in its audit entry, it outlives a purge by design).
        decide_finding(ctx, review, rule, REJECTED, "acceptable for this client")
        part = conversations.add_message(conv, "assistant", "", status="incomplete")
        conversations.update_message(part, part=KeptPart(0, "key", f"Pages 1-2: the {PHRASE} closes [p. 1]."))
        from app.store.playbook import ReviewStore

        assert PHRASE in ReviewStore(ctx.db).findings(review)[0]["quote"]
        assert PHRASE in conversations.kept_part("key").text  # type: ignore[union-attr]
        Checker(ctx).check(email.id)  # the memo is in a run of a bare template, which checks would read
        with ctx.db.atomic():
            redaction = Redactions(ctx.db).add(
                document_id=memo.id, source_sha256=memo.sha256, output_path=str(tmp_path / "memo-redacted.pdf"),
                output_sha256="0" * 64, output_bytes=10, areas=[{"kind": "term", "page": 1, "count": 1}],
                removed=[], proof={}, labelled=False,
            )  # fmt: skip
        # A model-state snapshot and a reading record of the memo (caches), and one of the kept document.
        states = ctx.paths.state_cache_dir
        states.mkdir(parents=True, exist_ok=True)
        for key, sha in (("a" * 16, memo.sha256), ("b" * 16, kept.sha256)):
            (states / f"{key}.state").write_bytes(b"state " + (needle if sha == memo.sha256 else b"other"))
            (states / f"{key}.json").write_text(json.dumps({"tags": [sha], "size": 1}))
        assert _files_holding(folio_home, needle)
    finally:
        ctx.close()

    code, out, _ = _folio(capsys, "conversations", "--matter", "Other", "--json")
    assert [c["id"] for c in json.loads(out)] == [kept_conv]
    code, _, err = _folio(capsys, "matter", "purge", "Secret deal")
    assert code == 2 and "add --yes" in err  # no terminal, no --yes: nothing happens
    ctx = open_app()
    try:
        result = purge_matter(ctx, "Secret deal")
        # No byte of the phrase in the database, its write-ahead log (checked with the library still
        # open), the FTS index, page images, originals or caches.
        assert _files_holding(folio_home, needle) == []
    finally:
        ctx.close()
    assert [d["title"] for d in result.removed] == ["memo", "Draft MSA for review", "terms"] and result.blobs >= 1
    assert not any(p.exists() for p in attachment_blobs)
    assert not (states / f"{'a' * 16}.state").exists() and (states / f"{'b' * 16}.state").exists()

    ctx = open_app()
    try:
        matters = Matters(ctx.db)
        assert matters.find("Secret deal") is None
        titles = {d.title for d in ctx.library.all()}
        assert titles == {"shared", "kept"}  # the shared one stays, for the other matter
        assert [d.title for d in ctx.library.all(matter_id=other.id)] == ["shared", "kept"]
        assert [c.id for c in Conversations(ctx.db).all()] == [kept_conv]
        assert ExtractionStore(ctx.db).run_ids() == []
        for table in ("playbook_reviews", "playbook_findings", "playbook_decisions", "answer_parts", "check_runs",
                      "check_findings"):  # fmt: skip
            assert ctx.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
        # A redaction log holds no text of the document: it stays, as a record, without the link.
        from app.store.redactions import Redactions

        assert Redactions(ctx.db).get(redaction).document_id is None
        assert (
            ctx.db.execute("SELECT count(*) FROM segments_fts WHERE segments_fts MATCH 'vorquillian'").fetchone()[0]
            == 0
        )
        verified = ctx.audit.verify()
        assert verified.ok, verified.problem
        record = ctx.audit.entries()[-1]
        assert record.action == "destroy" and record.matter_id == secret.id and record.os_user
        assert set(record.documents) == {memo.sha256, email.sha256} | {
            d["sha256"] for d in record.details["removed"] if d["title"].startswith("terms")
        }
        assert record.details["matter"] == "Secret deal" and record.details["matter_number"] == "S-9"
        assert record.details["counts"]["documents"] == 3 and record.details["counts"]["documents_kept"] == 1
        assert record.details["counts"]["conversations"] == 1 and record.details["counts"]["extraction_runs"] == 1
        assert [k["title"] for k in record.details["kept"]] == ["shared"]
    finally:
        ctx.close()


@pytest.fixture
def ctx() -> Iterator[AppContext]:
    context = open_app()
    yield context
    context.close()


# -- moving a matter between machines -----------------------------------------------------------
_COMPARED = {
    "documents": "SELECT sha256, kind, title, mime, size_bytes, page_count, token_estimate, metadata, added_at, "
    "contact_sheet_blob FROM documents ORDER BY sha256",
    "pages": "SELECT d.sha256, p.number, p.label, p.width, p.height, p.scanned, p.ocr, p.image_blob FROM pages p "
    "JOIN documents d ON d.id = p.document_id ORDER BY 1, 2",
    "segments": "SELECT d.sha256, s.seq, s.kind, s.page, s.label, s.bbox, s.t_seconds, s.role, s.text, s.image_blob, "
    "s.words FROM segments s JOIN documents d ON d.id = s.document_id ORDER BY 1, 2",
    "attachments": "SELECT e.sha256, a.position, a.name, d.sha256, a.note FROM attachments a "
    "JOIN documents e ON e.id = a.email_id LEFT JOIN documents d ON d.id = a.document_id ORDER BY 1, 2",
    "conversations": "SELECT c.title, c.created_at, c.updated_at, m.name FROM conversations c "
    "JOIN matters m ON m.id = c.matter_id ORDER BY 1",
    "conversation_documents": "SELECT c.title, d.sha256, cd.position FROM conversation_documents cd "
    "JOIN conversations c ON c.id = cd.conversation_id JOIN documents d ON d.id = cd.document_id ORDER BY 1, 3",
    "messages": "SELECT c.title, m.seq, m.role, m.text, m.citations, m.status, m.model FROM messages m "
    "JOIN conversations c ON c.id = m.conversation_id ORDER BY 1, 2",
    "claims": "SELECT m.text, cl.seq, cl.kind, cl.text, cl.verdict, cl.page, d.sha256, cl.passage FROM claims cl "
    "JOIN messages m ON m.id = cl.message_id LEFT JOIN documents d ON d.id = cl.document_id ORDER BY 1, 2",
    "extraction_runs": "SELECT r.template_key, r.template_json, r.model_sha256, r.status, m.name "
    "FROM extraction_runs r "
    "JOIN matters m ON m.id = r.matter_id ORDER BY 1",
    "extraction_run_documents": "SELECT d.sha256, x.position, x.status FROM extraction_run_documents x "
    "JOIN documents d ON d.id = x.document_id ORDER BY 1",
    "extraction_cells": "SELECT d.sha256, x.field_key, x.found, x.value, x.quote, x.quote_status, x.verdict "
    "FROM extraction_cells x JOIN documents d ON d.id = x.document_id ORDER BY 1, 2",
    "extraction_reviews": "SELECT d.sha256, x.field_key, x.decision, x.value, x.reviewer FROM extraction_reviews x "
    "JOIN documents d ON d.id = x.document_id ORDER BY 1, 2",
    "matters": "SELECT name, number, description, opened_at, retain_until, closed FROM matters "
    "WHERE name != 'Unfiled' ORDER BY name",
    # The link's added_at is when the import linked it, on the other machine.
    "matter_documents": "SELECT m.name, d.sha256 FROM matter_documents md JOIN matters m ON m.id = md.matter_id "
    "JOIN documents d ON d.id = md.document_id ORDER BY 1, 2",
    "document_sources": "SELECT d.sha256, s.path, s.added_at FROM document_sources s "
    "JOIN documents d ON d.id = s.document_id ORDER BY 1, 2",
    "answer_parts": "SELECT m.text, p.seq, p.request_key, p.text, p.thinking, p.claims, p.citations "
    "FROM answer_parts p JOIN messages m ON m.id = p.message_id ORDER BY 1, 2",
    "check_runs": "SELECT d.sha256, r.fingerprint, r.rules, r.inputs_from, r.problems, r.elapsed_ms, r.created_at "
    "FROM check_runs r JOIN documents d ON d.id = r.document_id ORDER BY 1, 7",
    "check_findings": "SELECT d.sha256, r.created_at, f.seq, f.section, f.kind, f.status, f.problem, f.text, f.note, "
    "f.page, f.label, f.detail FROM check_findings f JOIN check_runs r ON r.id = f.run_id "
    "JOIN documents d ON d.id = r.document_id ORDER BY 1, 2, 3",
    "redactions": "SELECT d.sha256, x.source_sha256, x.output_path, x.output_sha256, x.output_bytes, x.areas, "
    "x.removed, x.proof, x.labelled, x.created_at FROM redactions x LEFT JOIN documents d ON d.id = x.document_id "
    "ORDER BY 2, 10",
    "playbook_reviews": "SELECT d.sha256, r.template_key, m.name, p.playbook_key, p.playbook_version, "
    "p.playbook_sha256, p.playbook_json, p.model, p.model_sha256, p.created_at FROM playbook_reviews p "
    "JOIN documents d ON d.id = p.document_id JOIN extraction_runs r ON r.id = p.run_id "
    "JOIN matters m ON m.id = p.matter_id ORDER BY 1, 10",
    "playbook_findings": "SELECT d.sha256, p.created_at, f.seq, f.rule_key, f.verdict, f.reason, f.value, "
    "f.read_value, f.quote, f.page, f.label, f.grounding, f.score, f.confidence, f.decided_by "
    "FROM playbook_findings f JOIN playbook_reviews p ON p.id = f.review_id "
    "JOIN documents d ON d.id = p.document_id ORDER BY 1, 2, 3",
    "playbook_decisions": "SELECT d.sha256, p.created_at, x.rule_key, x.decision, x.note, x.reviewer, x.at "
    "FROM playbook_decisions x JOIN playbook_reviews p ON p.id = x.review_id "
    "JOIN documents d ON d.id = p.document_id ORDER BY 1, 2, 7",
}
# Tables the archive does not carry, each with why. Every other table in sqlite_master must be in
# _COMPARED: a table added later fails the round trip until the archive carries it or it is listed here.
_NOT_CARRIED = {
    # Per machine: registered models are paths on this disk (a model is never exported), and the
    # starter's reserved number is this library's own.
    "models": "a model file registered on this machine, by its path",
    "model_numbers": "this library's numbering of its models",
    # Per machine and per use: what was opened here lately, and files a purge here still has to delete.
    "document_opens": "File > Recent documents on this machine",
    "blob_trash": "page images a purge on this machine still has to delete",
    # The audit log is a hash chain per library: the matter's entries travel in audit.jsonl for the
    # record (checked below), and the import is recorded as an entry of the receiving chain.
    "audit_log": "each library's own hash chain; the matter's entries travel in audit.jsonl",
    # Bookkeeping of the schema, the same in every library of one version.
    "_sqlite_migrations": "schema migrations applied, per database",
    "sqlite_sequence": "SQLite's AUTOINCREMENT counters, per database",
    # Full-text indexes: derived from segments and messages by triggers, rebuilt by the import's inserts
    # (the search below finds the imported text). The virtual tables and their shadow tables.
    **{
        f"{index}{shadow}": "a full-text index derived from the carried rows"
        for index in ("segments_fts", "messages_fts")
        for shadow in ("", "_config", "_data", "_docsize", "_idx", "_content")
    },
}


def _tables(home_ctx: AppContext) -> dict[str, list[tuple[object, ...]]]:
    return {name: [tuple(r) for r in home_ctx.db.execute(sql).fetchall()] for name, sql in _COMPARED.items()}


def _every_table(home_ctx: AppContext) -> set[str]:
    rows = home_ctx.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(r[0]) for r in rows}


def _build_matter(ctx: AppContext, tmp_path: Path) -> None:
    from tests.fixtures.office import email_with_attachments

    matter = Matters(ctx.db).create("Acme", number="A-7", description="the lease", retain_until="2030-01-01")
    ctx.chosen_matter = matter.id
    memo = ctx.library.add(_text_file(tmp_path / "memo.txt", f"The {PHRASE} closes on Friday.\n")).document
    mail = email_with_attachments(tmp_path / "deal.eml", [("terms.txt", b"Terms: forty thousand.\n", "text/plain")])
    email = ctx.library.add(mail).document
    conversations = Conversations(ctx.db)
    conv = conversations.create([memo.id, email.id], "Escrow")
    conversations.add_message(conv, "user", "When does it close?")
    answer = conversations.add_message(conv, "assistant", "", status="incomplete")
    claim = {"start": 0, "end": 10, "kind": "sentence", "text": "It closes on Friday.", "verdict": "quoted",
             "document_id": memo.id, "page": 1, "passage": "closes on Friday", "checked": ["Friday"]}  # fmt: skip
    conversations.update_message(answer, claims=[claim], text="It closes on Friday [p. 1].", status="complete")
    from app.extraction.templates import TemplateStore

    template = TemplateStore.for_config(ctx.paths.config_dir).get("nda")
    store = ExtractionStore(ctx.db)
    run = {"template_key": "nda", "template_name": "NDA", "template_version": template.version,
           "template_sha256": template.sha256, "template_json": template.to_json(), "model": "m",
           "model_sha256": "s"}  # fmt: skip
    run_id = store.start(None, run, [memo.id])
    key = template.fields[0].key
    store.add_cells(run_id, [{"document_id": memo.id, "field_key": key, "found": 1, "quote_status": "exact",
                              "value": "Acme", "created_at": "x"}])  # fmt: skip
    store.add_review({"run_id": run_id, "document_id": memo.id, "field_key": key, "decision": "accepted",
                      "reviewer": "alice", "at": "y"})  # fmt: skip


def _build_work(ctx: AppContext, tmp_path: Path) -> int:
    """The rest of a matter's work, each stored by its own code: a contract with sample extraction
    cells, a playbook review of them with a reviewer's decision, a cited answer with a kept part, the
    contract's checks and a redaction log. Needs the starter home (the extraction service's session).
    Returns the contract's id."""
    from app.checks.service import Checker
    from app.playbook.review import ACCEPTED, decide_finding, load_review
    from app.store.conversations import KeptPart
    from app.store.redactions import Redactions
    from tests.fixtures.answers import store_cited_answer, store_sample_cells, store_sample_review
    from tests.fixtures.pdfs import make_contract_pdf

    contract = ctx.library.add(make_contract_pdf(tmp_path / "msa.pdf")).document
    run = store_sample_cells(ctx, contract.id)
    review = store_sample_review(ctx, contract.id, run)
    decide_finding(ctx, review, load_review(ctx, review).findings[0].rule_key, ACCEPTED, "checked with the client")
    _conv, answer = store_cited_answer(ctx, [contract.id], "It is governed by Delaware law [p. 4].")
    part = KeptPart(0, "part-key", "Pages 1-4: Delaware law governs [p. 4].", "", [], [{"page": 4}])
    Conversations(ctx.db).update_message(answer, part=part)
    assert Checker(ctx).check(contract.id).run_id is not None
    with ctx.db.atomic():
        Redactions(ctx.db).add(
            document_id=contract.id, source_sha256=contract.sha256, output_path=str(tmp_path / "msa-redacted.pdf"),
            output_sha256="0" * 64, output_bytes=1234, areas=[{"kind": "name", "page": 1, "count": 2}],
            removed=["metadata"], proof={"checked": ["text"]}, labelled=True,
        )  # fmt: skip
    return contract.id


def test_export_and_import_carry_a_matter_whole_between_two_homes(
    capsys: pytest.CaptureFixture[str], starter_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zipfile

    home_a, home_b, archive = starter_home, tmp_path / "b", tmp_path / "acme.zip"
    ctx = open_app()
    try:
        _build_matter(ctx, tmp_path)
        _build_work(ctx, tmp_path)
        before = _tables(ctx)
        # Every table is either compared or exempt with a reason; a new one is neither and fails here.
        unaccounted = _every_table(ctx) - set(_COMPARED) - set(_NOT_CARRIED)
        assert not unaccounted, f"tables neither carried by the archive nor exempt: {sorted(unaccounted)}"
        empty = [name for name, rows in before.items() if not rows]
        assert not empty, f"the source matter has no rows in {empty}: the round trip would prove nothing"
        audit_before = [e.hash for e in ctx.audit.entries() if e.matter_id == Matters(ctx.db).get("Acme").id]
        checks_a = [r[0] for r in ctx.db.execute("SELECT count(*) FROM check_runs UNION ALL "
                                                  "SELECT count(*) FROM redactions").fetchall()]  # fmt: skip
    finally:
        ctx.close()
    code, out, _ = _folio(capsys, "matter", "export", "Acme", "--out", str(archive))
    assert code == 0 and "exported: matter 'Acme'" in out and " 1 playbook review(s)" in out
    with zipfile.ZipFile(archive) as opened:
        names = opened.namelist()
        assert json.loads(opened.read("manifest.json"))["version"] == 2
        audit_lines = opened.read("audit.jsonl").decode("utf-8").splitlines()
    assert "manifest.json" in names and any(n.startswith("originals/") for n in names)
    assert [json.loads(line)["hash"] for line in audit_lines] == audit_before  # the export is recorded after

    monkeypatch.setenv("FOLIO_HOME", str(home_b))
    code, out, err = _folio(capsys, "matter", "import", str(archive))
    assert code == 0, err
    assert "imported: matter 'Acme' (4 document(s) stored, 0 already" in out
    assert " 1 playbook review(s)); every checksum matched" in out
    ctx = open_app()
    try:
        assert _every_table(ctx) - set(_NOT_CARRIED) == set(_COMPARED)
        after = _tables(ctx)
        for name in _COMPARED:
            assert after[name] == before[name], name
        # The search index was rebuilt from the imported text, and the original files came along.
        code, out, _ = _folio(capsys, "search", "brambleshade", "--matter", "Acme")
        assert "memo" in out
        memo = next(d for d in ctx.library.all() if d.title == "memo")
        original = ctx.library.original_path(memo.id)
        assert original is not None and PHRASE.encode() in original.read_bytes()
        entry = ctx.audit.entries()[-1]
        assert entry.action == "import" and entry.details["documents_stored"] == 4 and ctx.audit.verify().ok
        conv_id = Conversations(ctx.db).all()[0].id
        code, _, err = _folio(capsys, "export", "conversation", str(conv_id), "--out", str(tmp_path / "c.md"))
        assert code == 0, err
        assert "\nMatter: Acme\n" in (tmp_path / "c.md").read_text(encoding="utf-8")
        run_id = ExtractionStore(ctx.db).run_ids()[0]
        code, _, err = _folio(capsys, "export", "table", str(run_id), "--out", str(tmp_path / "t.json"))
        assert code == 0, err
        assert json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))["run"]["matter"] == "Acme"
    finally:
        ctx.close()
    # Into a library that holds the files already: reused, not stored twice. A matter of the same name
    # there is refused in one line that says how; --as imports it under another name.
    monkeypatch.setenv("FOLIO_HOME", str(home_a))
    code, _, err = _folio(capsys, "matter", "import", str(archive))
    assert code == 1 and err.count("\n") == 1 and "already exists here; import it under another name" in err
    code, out, _ = _folio(capsys, "matter", "import", str(archive), "--as", "Acme (from the laptop)")
    assert code == 0 and "matter 'Acme (from the laptop)'" in out
    assert "0 document(s) stored, 4 already in the library" in out
    code, _, err = _folio(capsys, "matter", "import", str(archive), "--as", "acme (FROM the laptop)")
    assert code == 1 and "choose another name" in err  # names are compared without case, as everywhere
    ctx = open_app()
    try:
        imported = Matters(ctx.db).get("Acme (from the laptop)")
        assert len(ctx.library.all(imported.id)) == 4
        # Reused documents keep their own check runs and redaction logs: the archive's are not added.
        assert [r[0] for r in ctx.db.execute("SELECT count(*) FROM check_runs UNION ALL "
                                              "SELECT count(*) FROM redactions").fetchall()] == checks_a  # fmt: skip
        # The matter's work is new here all the same: its playbook review goes with its copy of the run.
        reviews = ctx.db.execute(
            "SELECT p.matter_id, r.matter_id FROM playbook_reviews p JOIN extraction_runs r ON r.id = p.run_id"
        ).fetchall()
        assert sorted(tuple(r) for r in reviews) == sorted([(m, m) for m in (Matters(ctx.db).get("Acme").id,
                                                                            imported.id)])  # fmt: skip
        entry = ctx.db.execute("SELECT details FROM audit_log WHERE action = 'import'").fetchall()[-1][0]
        assert json.loads(entry)["named_in_archive"] == "Acme"
        assert ctx.audit.verify().ok
    finally:
        ctx.close()


def _as_version_1(archive: Path, out: Path) -> None:
    """The archive as Folio wrote it before version 2: no check runs, redaction logs, answer parts or
    playbook reviews in matter.json, version 1 in a manifest whose checksums match."""
    import hashlib
    import zipfile

    with zipfile.ZipFile(archive) as source:
        entries = {n: source.read(n) for n in source.namelist() if n != "manifest.json"}
        manifest = json.loads(source.read("manifest.json"))
    data = json.loads(entries["matter.json"])
    for doc in data["documents"]:
        del doc["check_runs"], doc["redactions"]
    for conv in data["conversations"]:
        for message in conv["messages"]:
            del message["parts"]
    for run in data["extraction_runs"]:
        del run["playbook_reviews"]
    entries["matter.json"] = json.dumps(data).encode("utf-8")
    manifest["version"] = 1
    manifest["entries"] = {n: hashlib.sha256(b).hexdigest() for n, b in sorted(entries.items())}
    with zipfile.ZipFile(out, "w") as target:
        target.writestr("manifest.json", json.dumps(manifest))
        for name, body in sorted(entries.items()):
            target.writestr(name, body)


def test_an_archive_of_version_1_still_imports_with_none_of_what_it_lacks(
    capsys: pytest.CaptureFixture[str], starter_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zipfile

    archive, old = tmp_path / "acme.zip", tmp_path / "acme-v1.zip"
    ctx = open_app()
    try:
        _build_matter(ctx, tmp_path)
        _build_work(ctx, tmp_path)
        before = _tables(ctx)
    finally:
        ctx.close()
    assert _folio(capsys, "matter", "export", "Acme", "--out", str(archive))[0] == 0
    _as_version_1(archive, old)

    monkeypatch.setenv("FOLIO_HOME", str(tmp_path / "b"))
    code, out, err = _folio(capsys, "matter", "import", str(old))
    assert code == 0, err
    assert "imported: matter 'Acme' (4 document(s) stored" in out
    ctx = open_app()
    try:
        after = _tables(ctx)
    finally:
        ctx.close()
    added_in_2 = {"check_runs", "check_findings", "redactions", "answer_parts", "playbook_reviews",
                  "playbook_findings", "playbook_decisions"}  # fmt: skip
    for name in _COMPARED:
        assert after[name] == ([] if name in added_in_2 else before[name]), name
    # A version this Folio does not know is refused in one line, before anything is written.
    with zipfile.ZipFile(old) as source, zipfile.ZipFile(tmp_path / "v9.zip", "w") as target:
        for name in source.namelist():
            body = source.read(name)
            target.writestr(name, body.replace(b'"version": 1', b'"version": 9') if name == "manifest.json" else body)
    monkeypatch.setenv("FOLIO_HOME", str(tmp_path / "c"))
    code, _, err = _folio(capsys, "matter", "import", str(tmp_path / "v9.zip"))
    assert code == 1 and err.count("\n") == 1 and "archive version 9" in err


def test_a_tampered_archive_is_refused_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zipfile

    archive, tampered = tmp_path / "acme.zip", tmp_path / "tampered.zip"
    monkeypatch.setenv("FOLIO_HOME", str(tmp_path / "a"))
    ctx = open_app()
    try:
        _build_matter(ctx, tmp_path)
    finally:
        ctx.close()
    assert _folio(capsys, "matter", "export", "Acme", "--out", str(archive))[0] == 0
    with zipfile.ZipFile(archive) as source, zipfile.ZipFile(tampered, "w") as target:
        for item in source.infolist():
            body = source.read(item.filename)
            if item.filename == "matter.json":
                body = body.replace(b"closes on Friday", b"closes on Monday")
            target.writestr(item, body)

    monkeypatch.setenv("FOLIO_HOME", str(tmp_path / "b"))
    code, _, err = _folio(capsys, "matter", "import", str(tampered))
    assert code == 1 and err.count("\n") == 1
    assert "damaged or was changed: matter.json does not match its checksum" in err
    (tmp_path / "junk.zip").write_bytes(b"PK\x03\x04 not really a zip")
    code, _, err = _folio(capsys, "matter", "import", str(tmp_path / "junk.zip"))
    assert code == 1 and err.count("\n") == 1 and "junk.zip" in err
    ctx = open_app()
    try:
        assert ctx.library.count() == 0 and Matters(ctx.db).find("Acme") is None
        assert not [p for p in (tmp_path / "b" / "data" / "blobs").rglob("*") if p.is_file()]
    finally:
        ctx.close()


# -- read-ahead ---------------------------------------------------------------------------------
def test_read_ahead_reads_the_current_matter_most_recently_opened_first(starter_home: Path, tmp_path: Path) -> None:
    from app.engine.session import Session
    from app.reading import ReadAhead
    from app.store.recent import RecentDocuments

    ctx = open_app()
    try:
        matters = Matters(ctx.db)
        acme, beta = matters.create("Acme"), matters.create("Beta")
        ctx.chosen_matter = acme.id
        older = ctx.library.add(_text_file(tmp_path / "older.txt", "Acme's first letter.")).document
        newer = ctx.library.add(_text_file(tmp_path / "newer.txt", "Acme's second letter.")).document
        ctx.chosen_matter = beta.id
        other = ctx.library.add(_text_file(tmp_path / "other.txt", "Beta's only letter.")).document
        reader = ReadAhead(ctx, Session.for_context(ctx))  # in the context's matter: Beta
        doc = reader.next_document()
        assert doc is not None and doc.id == other.id  # the newest document of the library is Beta's...
        reader.use_matter(acme.id)
        doc = reader.next_document()
        assert doc is not None and doc.id == newer.id  # ...and after the switch Acme's newest is next
        RecentDocuments(ctx.db).touch(older.id)
        doc = reader.next_document()
        assert doc is not None and doc.id == older.id  # what the user opened goes first
    finally:
        ctx.close()


def test_read_ahead_plans_only_what_the_snapshot_cache_keeps(starter_home: Path, tmp_path: Path) -> None:
    from app.engine.session import Session
    from app.reading import PROMPT_TOKENS, ReadAhead, ReadAheadStatus

    ctx = open_app()
    try:
        ctx.settings.state_cache_gb = 1
        clause = "The Supplier shall deliver the goods to the Customer's warehouse within thirty days. " * 500
        docs = [
            ctx.library.add(_text_file(tmp_path / f"c{i}.txt", f"Contract {i}. " + clause)).document for i in range(12)
        ]
        reader = ReadAhead(ctx, Session.for_context(ctx))
        planned = reader.plan()
        plan = reader.last_plan
        per_token, per_document = reader._state_size()
        sizes = {d.id: (d.token_estimate + PROMPT_TOKENS) * per_token + per_document for d in docs}
        # Never more than the cache keeps, and the newest first; the rest is counted, not read.
        assert 0 < len(planned) < len(docs) and plan.left_out == len(docs) - len(planned)
        assert sum(sizes[d.id] for d in planned) <= 1024**3 < sum(sizes.values())
        assert [d.id for d in planned] == sorted((d.id for d in docs), reverse=True)[: len(planned)]
        assert reader.next_document() == planned[0]
        # The budget in words: documents and a time once a reading speed is known.
        assert plan.words().startswith(f"{len(planned)} documents planned, time known after the first read;")
        reader.tokens_per_s = 100.0
        reader.plan()
        words = ReadAheadStatus("idle", plan=reader.last_plan).words()
        assert f"{len(planned)} documents planned, about " in words
        assert words.endswith(f"{plan.left_out} more do not fit the 1 GB snapshot cache")
        assert words.startswith("all it can keep read · ")
    finally:
        ctx.close()
