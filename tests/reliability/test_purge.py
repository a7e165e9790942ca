"""`folio purge DOC`: the document, its segments, search entries, page images, model-state snapshots,
conversations and extraction cells go - down to the bytes of the database files - and nothing of
the other documents is touched."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from app.context import open_app
from tests.conftest import run_folio
from tests.fixtures.media import make_scan, make_scanned_pdf, render_text_page

pytestmark = pytest.mark.e2e

MARKER = "Quoxalbrinthe"  # a word that exists nowhere else


def _db_bytes(data_dir: Path) -> bytes:
    files = [data_dir / name for name in ("folio.sqlite3", "folio.sqlite3-wal", "folio.sqlite3-shm")]
    return b"".join(f.read_bytes() for f in files if f.exists()).lower()


def _outside_the_audit_log(data: bytes, word: str) -> int:
    """Occurrences of word in the database bytes, except in an audit entry's question: the audit log
    is append-only by design (a hash chain over the stored text), so it keeps what was asked."""
    needle = word.lower().encode()
    count, at = 0, data.find(needle)
    while at >= 0:
        line_start = data.rfind(b'"question":"', max(0, at - 300), at)
        if line_start < 0 or b'"' in data[line_start + len(b'"question":"') : at]:
            count += 1
        at = data.find(needle, at + 1)
    return count


def _snapshot_tags(states: Path) -> list[list[str]]:
    return sorted(json.loads(p.read_text())["tags"] for p in states.glob("*.json"))


def test_purge_removes_the_document_and_everything_derived_from_it(qwen35_home: Path, tmp_path: Path) -> None:
    from app.chat import ChatService
    from app.extraction.runner import Cell, ExtractionService
    from app.extraction.templates import TemplateStore
    from inference.events import GenerationStats

    page = render_text_page()
    shared, own = make_scan(page, degrees=1.5), make_scan(page, degrees=-2.0, noise=25.0)
    secret = make_scanned_pdf(
        tmp_path / "secret.pdf", [shared, own], text_page=f"Settlement code {MARKER}. The parties agree to 40,000."
    )
    other = make_scanned_pdf(tmp_path / "other.pdf", [shared], text_page="Governed by the laws of Delaware.")
    ctx = open_app()
    try:
        a = ctx.library.add(secret).document
        b = ctx.library.add(other).document
        service = ChatService(ctx)
        try:
            for doc in (a, b):
                service.ask([doc.id], f"What does {MARKER} mean?" if doc is a else "Which law?", max_tokens=4)
        finally:
            service.close()
        extraction = ExtractionService(ctx)
        template = TemplateStore.for_config(ctx.paths.config_dir).get("nda")
        run = extraction.start_run(template, [a.id, b.id])
        stats = GenerationStats(1, 0, 1, 1, 1, 1, "eos")
        for doc, word in ((a, MARKER), (b, "Delaware")):
            cell = Cell(doc.id, template.fields[0].key, True, f"{word} value", f"code {word}", "1", 1, "1", None,
                        "exact", 1.0)  # fmt: skip
            extraction._store(run, [cell], {}, stats)
        blobs_a = {s.image_blob for s in ctx.library.segments(a.id) if s.image_blob}
        blobs_b = {s.image_blob for s in ctx.library.segments(b.id) if s.image_blob}
    finally:
        ctx.close()
    data, states = qwen35_home / "data", qwen35_home / "cache" / "states"
    assert len(blobs_a) == 2 and len(blobs_b) == 1 and blobs_b < blobs_a  # one page image is shared
    assert _snapshot_tags(states) == sorted([[a.sha256], [b.sha256]])
    code, out, _err = run_folio("search", MARKER)
    assert code == 0 and MARKER in out and "conversation" in out  # found in the document and the question
    assert _outside_the_audit_log(_db_bytes(data), MARKER) > 0  # so the byte check below can fail

    code, out, err = run_folio("purge", str(a.id))
    assert code == 2 and "add --yes" in err  # never without confirmation
    code, out, err = run_folio("purge", str(secret), "--yes")
    assert code == 0, err
    assert f"purged: #{a.id}" in out and "2 images" not in out and "1 images" in out and "1 snapshots" in out

    code, out, _err = run_folio("search", MARKER)
    assert code == 0 and out.strip() == "No matches."
    left = _outside_the_audit_log(_db_bytes(data), MARKER)
    assert left == 0, "text of the purged document left in the database files"
    db = sqlite3.connect(data / "folio.sqlite3")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.execute("INSERT INTO segments_fts(segments_fts) VALUES ('integrity-check')")
        db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
        left = {
            table: db.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", [a.id]).fetchone()[0]
            for table, column in [("documents", "id"), ("pages", "document_id"), ("segments", "document_id"),
                                  ("document_sources", "document_id"), ("conversation_documents", "document_id"),
                                  ("extraction_cells", "document_id"), ("extraction_run_documents", "document_id")]
        }  # fmt: skip
        assert set(left.values()) == {0}, left
        assert db.execute("SELECT count(*) FROM conversations").fetchone()[0] == 1  # the one about b
        assert db.execute("SELECT count(*) FROM extraction_cells WHERE document_id = ?", [b.id]).fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM blob_trash").fetchone()[0] == 0
        last = db.execute("SELECT action, documents FROM audit_log ORDER BY id DESC LIMIT 1").fetchone()
        assert last == ("purge", json.dumps([a.sha256]))
    finally:
        db.close()
    blobs = data / "blobs"
    assert [n for n in blobs_a - blobs_b if (blobs / n).exists()] == []
    assert all((blobs / n).exists() for n in blobs_b)
    assert _snapshot_tags(states) == [[b.sha256]]
    code, out, err = run_folio("audit", "verify")
    assert code == 0, err
    code, out, err = run_folio("show", str(b.id), "--segments")
    assert code == 0 and "Delaware" in out


def test_page_images_queued_by_an_interrupted_purge_are_deleted_at_the_next_start(folio_home: Path) -> None:
    """The purge commits first and deletes page images after; a crash in between leaves them queued."""
    ctx = open_app()
    try:
        orphan = ctx.library.blob_path("ab/" + "ab" * 32 + ".png")
        orphan.parent.mkdir(parents=True)
        orphan.write_bytes(b"\x89PNG page of a purged document")
        ctx.db.execute("INSERT INTO blob_trash(name, queued_at) VALUES (?, 'now')", ["ab/" + "ab" * 32 + ".png"])
        ctx.db.conn.commit()
    finally:
        ctx.close()
    assert orphan.exists()
    ctx = open_app()
    try:
        assert not orphan.exists()
        assert ctx.db.execute("SELECT count(*) FROM blob_trash").fetchone()[0] == 0
    finally:
        ctx.close()


def test_snapshots_without_tags_are_purged_too(tmp_path: Path) -> None:
    """Snapshots written before tags existed may hold any document: a purge removes them."""
    from inference.state_cache import StateStore

    store = StateStore(tmp_path, 1 << 30)

    def write(path: Path) -> int:
        path.write_bytes(b"state")
        return 5

    store.save("k1", 10, write, ("doc-a",))
    store.save("k2", 10, write, ("doc-b",))
    store.save("k3", 10, write, ("doc-a", "doc-b"))
    store.save("k4", 10, write)
    old = tmp_path / "k4.json"
    old.write_text(json.dumps({k: v for k, v in json.loads(old.read_text()).items() if k != "tags"}))
    assert store.discard_tagged("doc-a") == 3
    assert [key for _t, key, _s in store.entries()] == ["k2"]
