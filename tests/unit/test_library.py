from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.context import AppContext
from app.errors import NotFound
from ingest import IngestError, Segment
from tests.fixtures.pdfs import (
    GOVERNING_LAW_PAGE,
    make_contract_pdf,
    make_encrypted_pdf,
    make_text_pdf,
    make_zero_page_pdf,
)

TABLES = ["documents", "document_sources", "pages", "segments", "segments_fts"]


def table_counts(ctx: AppContext) -> dict[str, int]:
    return {t: ctx.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def test_add_contract_stores_pages_segments_and_anchors(ctx: AppContext, contract_pdf: Path) -> None:
    result = ctx.library.add(contract_pdf)
    assert result.created
    doc = result.document
    assert doc.kind == "pdf" and doc.page_count == 4 and doc.title == "Master Services Agreement"
    segments = ctx.library.segments(doc.id)
    law = [s for s in segments if "State of Delaware" in s.text]
    assert len(law) == 1
    assert law[0].page == GOVERNING_LAW_PAGE
    assert law[0].label == str(GOVERNING_LAW_PAGE)
    assert law[0].bbox is not None and law[0].bbox[1] > 0
    hits = ctx.db.execute(
        "SELECT s.page FROM segments_fts f JOIN segments s ON s.id = f.rowid WHERE segments_fts MATCH 'delaware'"
    ).fetchall()
    assert [h[0] for h in hits] == [GOVERNING_LAW_PAGE]


def test_same_content_is_stored_once(ctx: AppContext, contract_pdf: Path, tmp_path: Path) -> None:
    first = ctx.library.add(contract_pdf)
    copy = tmp_path / "copy of contract.pdf"
    copy.write_bytes(contract_pdf.read_bytes())
    second = ctx.library.add(copy)
    assert not second.created and second.document.id == first.document.id
    assert ctx.library.count() == 1
    # Both paths now resolve to the one document, even after the files are gone.
    copy.unlink()
    assert ctx.library.resolve(str(copy)).id == first.document.id
    assert ctx.library.resolve(str(contract_pdf)).id == first.document.id
    assert ctx.library.resolve(str(first.document.id)).id == first.document.id


def test_resolve_unknown_reference_is_a_clear_error(ctx: AppContext, tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        ctx.library.resolve("999")
    other = make_text_pdf(tmp_path / "other.pdf", ["Not added yet."])
    with pytest.raises(NotFound) as err:
        ctx.library.resolve(str(other))
    assert "not in the library" in str(err.value)


def test_page_labels_are_kept(ctx: AppContext, tmp_path: Path) -> None:
    pdf = make_text_pdf(
        tmp_path / "labels.pdf",
        ["Cover page.", "Table of contents.", "First body page.", "Second body page."],
        labels=[
            {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
            {"startpage": 2, "prefix": "A-", "style": "D", "firstpagenum": 1},
        ],
    )
    doc = ctx.library.add(pdf).document
    assert ctx.library.page_labels(doc.id) == {"i": 1, "ii": 2, "A-1": 3, "A-2": 4}


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    fake = tmp_path / "fake.pdf"
    fake.write_bytes(b"GIF89a" + bytes(200))  # a picture format Folio does not read (text files it does)
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    truncated = tmp_path / "truncated.pdf"
    full = make_contract_pdf(tmp_path / "full.pdf").read_bytes()
    truncated.write_bytes(full[:300])
    return {
        "missing": (tmp_path / "missing.pdf", "no such file"),
        "not a pdf": (fake, "unsupported file type"),
        "encrypted": (make_encrypted_pdf(tmp_path / "locked.pdf"), "password required"),
        "zero bytes": (empty, "empty"),
        "zero pages": (make_zero_page_pdf(tmp_path / "zero.pdf"), "no pages"),
        "truncated": (truncated, "PDF"),
    }


@pytest.mark.parametrize("case", ["missing", "not a pdf", "encrypted", "zero bytes", "zero pages", "truncated"])
def test_bad_input_is_one_clear_line_and_library_unchanged(ctx: AppContext, tmp_path: Path, case: str) -> None:
    ctx.library.add(make_contract_pdf(tmp_path / "good.pdf", extra_text="kept"))
    before = table_counts(ctx)
    path, fragment = _bad_files(tmp_path)[case]
    with pytest.raises(IngestError) as err:
        ctx.library.add(path)
    message = str(err.value)
    assert fragment in message
    assert "\n" not in message and len(message) < 200
    assert table_counts(ctx) == before


def test_encrypted_pdf_opens_with_password(ctx: AppContext, tmp_path: Path) -> None:
    pdf = make_encrypted_pdf(tmp_path / "locked.pdf", password="s3cret")
    with pytest.raises(IngestError, match="wrong"):
        ctx.library.add(pdf, password="nope")
    doc = ctx.library.add(pdf, password="s3cret").document
    assert "settlement terms" in ctx.library.page_text(doc.id, 1)


def test_failure_inside_the_transaction_leaves_nothing(ctx: AppContext, contract_pdf: Path) -> None:
    from ingest.load import load

    document = load(contract_pdf)
    before = table_counts(ctx)
    # A segment whose text is not a string makes the segments insert fail half-way through.
    bad = Segment(kind="text", anchor=document.segments[0].anchor, text=object())  # type: ignore[arg-type]
    document.segments = [*document.segments, bad]
    with pytest.raises(Exception):  # noqa: B017 - any failure must roll back
        ctx.library.store(document)
    assert table_counts(ctx) == before


def test_page_images_of_an_add_killed_before_its_commit_are_deleted_at_the_next_start(folio_home: Path) -> None:
    import subprocess
    import sys

    from app.context import open_app

    ctx = open_app()
    blobs, pending = ctx.library.blobs_dir, ctx.library.pending_dir
    ctx.close()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan, running = "ab/" + "a" * 64 + ".png", "cd/" + "c" * 64 + ".png"
    for name in (orphan, running):
        (blobs / name).parent.mkdir(parents=True, exist_ok=True)
        (blobs / name).write_bytes(b"png")
    pending.mkdir(parents=True, exist_ok=True)
    (pending / f"{dead.pid}-killed.txt").write_text(orphan + "\n")
    (pending / f"{os.getpid()}-running.txt").write_text(running + "\n")  # an add still in progress
    open_app().close()
    assert not (blobs / orphan).exists() and not (pending / f"{dead.pid}-killed.txt").exists()
    assert (blobs / running).exists() and (pending / f"{os.getpid()}-running.txt").exists()
