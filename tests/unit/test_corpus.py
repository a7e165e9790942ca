"""Every real-world file in ../shared/corpus is added or rejected with a one-line reason; nothing
crashes, an added file is stored in full, and a rejection leaves the library as it was."""

from __future__ import annotations

import pytest

from app.context import AppContext, open_app
from app.errors import USER_ERRORS, one_line
from app.store.library import DocumentRow
from ingest.document import FLOWING_KINDS
from ingest.load import file_sha256
from tests.conftest import CORPUS, CorpusAdd

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"real-world corpus not found at {CORPUS}")

# What must happen to particular files (the rest must simply be added or rejected cleanly).
EXPECTED_REJECTIONS = {
    "odd_pdfs/password.pdf": "password required",
    "odd_pdfs/issue3371.pdf": "password required",
    "odd_pdfs/issue6010_2.pdf": "password required",
    "odd_pdfs/print_protection.pdf": "password required",
    "odd_pdfs/hugemono.pdf": "decompression bomb",
    "odd_pdfs/issue15590.pdf": "no pages",
}
PASSWORDS = {"odd_pdfs/password.pdf": "password", "odd_pdfs/print_protection.pdf": "1234"}


def _files() -> list[str]:
    if not CORPUS.is_dir():
        return []
    return sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.is_file())


def _tables(ctx: AppContext) -> tuple[int, int, int, int, tuple[str, ...]]:
    """Row counts, every row change this connection made (committed or rolled back), and the page
    images on disk: a rejected file must leave all of them as they were."""
    row = ctx.db.execute(
        "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM pages), (SELECT count(*) FROM segments)"
    ).fetchone()
    blobs = tuple(sorted(str(p) for p in ctx.paths.blobs_dir.rglob("*")))
    return int(row[0]), int(row[1]), int(row[2]), ctx.db.conn.total_changes, blobs


@pytest.mark.parametrize("relpath", _files())
def test_corpus_file_is_added_or_rejected_in_one_line(
    corpus_add: CorpusAdd, ctx: AppContext, relpath: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file as the one `folio add` of the whole corpus left it (the `corpus_add` run); a file it
    rejected is tried again here, in-process on an empty library, to see that nothing was written."""
    path = CORPUS / relpath
    cli_line = corpus_add.rejections.get(path.name)
    if cli_line is not None:
        assert len(cli_line) < 300, cli_line
        if relpath in EXPECTED_REJECTIONS:
            assert EXPECTED_REJECTIONS[relpath] in cli_line
        _rejected_without_a_write(ctx, relpath)
        return
    assert relpath not in EXPECTED_REJECTIONS, f"{relpath} should have been rejected"
    monkeypatch.setenv("FOLIO_HOME", str(corpus_add.home))
    added = open_app()
    try:
        sha = file_sha256(path)
        doc = next((d for d in added.library.all() if d.sha256 == sha), None)
        assert doc is not None, f"{relpath}: neither added nor rejected by folio add"
        _stored_in_full(added, relpath, doc)
    finally:
        added.close()


def _rejected_without_a_write(ctx: AppContext, relpath: str) -> None:
    path = CORPUS / relpath
    before = _tables(ctx)
    with pytest.raises(USER_ERRORS) as caught:
        ctx.library.add(path)
    message = one_line(caught.value)
    assert str(caught.value) == message and len(message) < 240, message
    assert _tables(ctx) == before
    if relpath in EXPECTED_REJECTIONS:
        assert EXPECTED_REJECTIONS[relpath] in message
    else:
        assert path.suffix.lower() not in (".mp4", ".webm", ".tif", ".jpg", ".png"), message
        assert not relpath.startswith(("contracts_pdf/", "scans/")), message
        assert path.suffix.lower() not in (".txt", ".md", ".tsv", ".csv"), message  # text files are read


def _stored_in_full(ctx: AppContext, relpath: str, doc: DocumentRow) -> None:
    segments = ctx.library.segments(doc.id)
    assert segments
    for segment in segments:
        if doc.kind == "video":
            assert segment.t_seconds is not None and segment.image_blob
        elif doc.kind in FLOWING_KINDS:  # paragraphs: a clause number only where the text has one
            assert segment.page is not None and 1 <= segment.page <= doc.page_count
        else:
            assert segment.page is not None and 1 <= segment.page <= doc.page_count and segment.label
    if doc.kind == "video":
        assert doc.duration_s and doc.duration_s > 1
        assert ctx.library.contact_sheet(doc.id)
    if relpath.startswith("scans/") and doc.kind != "text":
        pages = ctx.library.pages(doc.id)
        assert any(p.scanned for p in pages)
        assert all(p.ocr for p in pages if p.scanned)  # a fresh install reads scans with its own OCR


@pytest.mark.parametrize("relpath", sorted(PASSWORDS))
def test_encrypted_corpus_pdfs_open_with_their_password(ctx: AppContext, relpath: str) -> None:
    doc = ctx.library.add(CORPUS / relpath, password=PASSWORDS[relpath]).document
    assert doc.page_count >= 1
