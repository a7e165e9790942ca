"""E-mails (.eml, .msg): headers first, the body in paragraphs, each attachment its own document
linked to the e-mail (stored together in one transaction), cited as [attachment N, p. M] and opened
from the citation; a broken MIME tree refused in one line with the library unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.citations.markers import check, find_citations
from app.citations.targets import targets
from app.context import AppContext
from ingest import IngestError
from ingest.load import load
from tests.conftest import run_folio
from tests.fixtures.office import DATA, broken_mime_email, draft_email, email_with_attachments
from tests.fixtures.pdfs import make_contract_pdf


def test_eml_headers_body_and_attachments(tmp_path: Path) -> None:
    doc = load(draft_email(tmp_path))
    assert doc.kind == "email" and doc.title == "Draft MSA for review"
    headers = doc.segments[0]
    assert headers.role == "email_headers" and headers.anchor.cited() == "¶ 1"
    lines = headers.text.splitlines()
    assert lines[:5] == [
        "From: Alice Counsel <alice@firm.example>",
        "To: Bob Client <bob@client.example>",
        "Cc: Carol Reviewer <carol@firm.example>",
        "Date: Wed, 01 May 2024 10:00:00 +0000",
        "Subject: Draft MSA for review",
    ]
    assert lines[5].startswith("Attachments: 1. contract.pdf; 2. memo.docx; 3. budget.xlsx (not read: ")
    assert [s.text for s in doc.segments[1:]] == [
        "Bob,",
        "The draft is attached. Clause 2.1 now gives sixty days for payment.",
        "Alice",
    ]
    kinds = [(a.name, a.document.kind if a.document else None) for a in doc.attachments]
    assert kinds == [("contract.pdf", "pdf"), ("memo.docx", "word"), ("budget.xlsx", None)]
    assert "damaged" in doc.attachments[2].skipped


def test_html_only_body_is_read_as_text(tmp_path: Path) -> None:
    doc = load(draft_email(tmp_path, html=True))
    body = [s.text for s in doc.segments[1:]]
    assert body == ["Bob,", "The draft is attached. Clause 2.1 now gives sixty days for payment.", "Alice"]


def test_email_and_attachments_are_stored_linked_and_cited(ctx: AppContext, tmp_path: Path) -> None:
    from app.citations.grounding import document_indexes
    from app.engine.documents import prompt_documents

    mail = ctx.library.add(draft_email(tmp_path)).document
    attachments = ctx.library.attachments(mail.id)
    assert [(a.position, a.name, a.document_id is not None) for a in attachments] == [
        (1, "contract.pdf", True),
        (2, "memo.docx", True),
        (3, "budget.xlsx", False),
    ]
    pdf_id = attachments[0].document_id
    assert pdf_id is not None
    assert ctx.library.count() == 3
    assert ctx.library.attachment_places()[pdf_id] == (mail.id, 1)
    # The attachment's own bytes are kept by the library: its pages can be drawn without the e-mail.
    kept = ctx.library.original_path(pdf_id)
    assert kept is not None and kept.read_bytes() == (tmp_path / "contract.pdf").read_bytes()
    markers = [b.marker for b in prompt_documents(ctx, [mail.id])[0].blocks]
    assert markers[:2] == ["[¶ 1]", "[¶ 2]"]
    assert "[attachment 1, p. 1]" in markers and "[attachment 2, § 2]" in markers
    answer = (
        'Alice says "sixty days for payment" [¶ 3]. The contract: "notice period is ninety days" '
        '[attachment 1, p. 1]; the memo: "The buyer pays within thirty days" [D1, attachment 2, § 2]. '
        "No such attachment: [attachment 3, p. 1]."
    )
    checked = check(find_citations(answer), document_indexes(ctx, [mail.id]))
    assert [(c.text, c.valid, c.quote_found) for c in checked] == [
        ("[¶ 3]", True, True),
        ("[attachment 1, p. 1]", True, True),
        ("[D1, attachment 2, § 2]", True, True),
        ("[attachment 3, p. 1]", False, None),
    ]
    opened = targets([c.to_dict() for c in checked], [mail.id])
    assert [(t.document_id, t.page) for t in opened[:3]] == [(mail.id, 3), (pdf_id, 1), (attachments[1].document_id, 3)]


def test_the_same_attachment_twice_is_stored_once(ctx: AppContext, tmp_path: Path) -> None:
    pdf = make_contract_pdf(tmp_path / "contract.pdf").read_bytes()
    mail = email_with_attachments(
        tmp_path / "twice.eml", [("a.pdf", pdf, "application/pdf"), ("b.pdf", pdf, "application/pdf")]
    )
    stored = ctx.library.add(mail).document
    ids = [a.document_id for a in ctx.library.attachments(stored.id)]
    assert ids[0] is not None and ids[0] == ids[1] and ctx.library.count() == 2


def test_outlook_msg_from_msg_extractor() -> None:
    """strangeDate.msg from the msg-extractor project (tests/data/README.md), read by extract-msg."""
    doc = load(DATA / "strangeDate.msg")
    assert doc.kind == "email" and doc.title == "MSG Test File"
    assert doc.segments[0].text.splitlines() == [
        "To: time2talk@online-convert.com <time2talk@online-convert.com>",
        "Subject: MSG Test File",
    ]
    body = "\n".join(s.text for s in doc.segments[1:])
    assert body.startswith("MSG test file\nPurpose: Provide example of this file type")
    assert '"John Doe" for males' in body


def test_broken_mime_tree_is_refused_and_the_library_unchanged(tmp_path: Path) -> None:
    broken = broken_mime_email(tmp_path / "broken.eml")
    with pytest.raises(IngestError, match=r"^broken\.eml: the e-mail's MIME structure is broken \(start boundary"):
        load(broken)
    code, out, err = run_folio("add", str(broken))
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert "library is empty" in run_folio("list")[1]


def test_a_damaged_msg_is_refused(tmp_path: Path) -> None:
    whole = (DATA / "strangeDate.msg").read_bytes()
    cut = tmp_path / "cut.msg"
    cut.write_bytes(whole[:4096])
    with pytest.raises(IngestError, match=r"^cut\.msg: .*damaged and cannot be read"):
        load(cut)


def test_purging_an_email_purges_its_attachments_and_their_files(ctx: AppContext, tmp_path: Path) -> None:
    from app.purge import purge_document

    mail = ctx.library.add(draft_email(tmp_path)).document
    kept = [ctx.library.original_path(a.document_id) for a in ctx.library.attachments(mail.id) if a.document_id]
    assert len(kept) == 2 and all(p is not None and p.is_file() for p in kept)
    purge_document(ctx, mail.id)
    assert ctx.library.count() == 0
    assert not any(p is not None and p.exists() for p in kept)
    assert ctx.db.execute("SELECT count(*) FROM attachments").fetchone()[0] == 0


def test_a_mail_bomb_nested_2000_levels_deep_is_refused_in_one_line(tmp_path: Path) -> None:
    from tests.fixtures.office import nested_mime_email

    bomb = nested_mime_email(tmp_path / "bomb.eml", 2000)
    code, out, err = run_folio("add", str(bomb))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "nested more than 50 levels deep" in err and err.startswith("folio: error: bomb.eml:")
    assert run_folio("list", "--json")[1].strip() == "[]"


def test_mime_nesting_up_to_the_limit_is_read_and_one_more_level_is_not(tmp_path: Path) -> None:
    from ingest.limits import Limits
    from tests.fixtures.office import nested_mime_email

    limits = Limits(max_mime_depth=20)
    # The message is the outermost multipart (level 1), and the text part sits one level below the last.
    doc = load(nested_mime_email(tmp_path / "ok.eml", 19), limits=limits)
    assert "The innermost words." in "\n".join(s.text for s in doc.segments)
    with pytest.raises(IngestError, match="nested more than 20 levels deep"):
        load(nested_mime_email(tmp_path / "deep.eml", 20), limits=limits)


def test_e_mails_attached_inside_e_mails_are_read_only_so_deep(tmp_path: Path) -> None:
    from ingest.limits import Limits
    from tests.fixtures.office import forwarded_chain

    doc = load(forwarded_chain(tmp_path / "chain.eml", 6), limits=Limits(max_attachment_depth=3))
    depth, part = 0, doc
    while part.attachments:
        attachment = part.attachments[0]
        if attachment.document is None:
            assert "deeper than Folio reads (3)" in attachment.skipped
            break
        depth, part = depth + 1, attachment.document
    assert depth == 3 and f"Level {depth + 1} of the chain." in "\n".join(s.text for s in part.segments)


def test_deeply_nested_html_bodies_are_read_in_linear_time() -> None:
    import time

    from ingest.email_read import html_to_text

    started = time.process_time()
    text = html_to_text("<div>" * 50_000 + "<p>Clause 1.</p><script>x()</script>" + "</div>" * 50_000)
    assert text == "Clause 1." and time.process_time() - started < 30
