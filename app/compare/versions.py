"""A version to compare: a document's text blocks in reading order, each with the page it sits on.

It comes from the library (the stored segments) or from a file read through Folio's own ingest
without storing it. Only text a reader reads as the document's body is kept: running headers and
footers, comments and images are left out here or in words.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.errors import FolioError, NotFound

if TYPE_CHECKING:
    from app.context import AppContext
    from ingest.document import Document

# Segment roles that are the document's own text. 'header'/'footer' are running ones ingest found;
# 'annotation'/'comment' were added by a reader, not agreed by the parties.
TEXT_ROLES = frozenset({"body", "heading", "table", "ocr", "footnote", "email_headers"})


@dataclass(frozen=True)
class Block:
    """One block of text as read: its page (paragraph number in a flowing document) and printed label."""

    page: int
    label: str | None
    text: str


@dataclass(frozen=True)
class Version:
    """One side of a comparison."""

    title: str
    reference: str  # how the user named it: '#3' for a library document, else the file path
    unit: str  # 'page' or 'paragraph' (ingest.document.unit_of)
    page_count: int
    blocks: tuple[Block, ...]


def version_from_library(ctx: AppContext, doc_id: int) -> Version:
    from ingest.document import unit_of

    library = ctx.library
    doc = library.get(doc_id)
    blocks = tuple(
        Block(s.page, s.label, s.text)
        for s in library.segments(doc_id)
        if s.kind == "text" and s.role in TEXT_ROLES and s.page is not None and s.text.strip()
    )
    return _checked(Version(doc.title, f"#{doc.id}", unit_of(doc.kind), doc.page_count, blocks))


def version_from_document(document: Document) -> Version:
    from ingest.document import unit_of

    blocks = tuple(
        Block(s.anchor.page, s.anchor.label, s.text)
        for s in document.segments
        if s.kind == "text" and s.role in TEXT_ROLES and s.anchor.page is not None and s.text.strip()
    )
    version = Version(document.title, document.source_path, unit_of(document.kind), document.page_count, blocks)
    return _checked(version)


def open_version(ctx: AppContext, ref: str) -> Version:
    """A document named as other commands name it (an id, or the path it was added from); a file not in
    the library is read through ingest for this comparison only, and not added."""
    try:
        return version_from_library(ctx, ctx.library.resolve(ref).id)
    except NotFound:
        path = Path(ref).expanduser()
        if not path.is_file():
            raise
    from ingest.load import load

    return version_from_document(load(path, limits=ctx.limits, ocr=ctx.library.ocr))


def _checked(version: Version) -> Version:
    if not version.blocks:
        raise FolioError(f"{version.reference} {version.title}: has no text to compare (no text layer or OCR text)")
    return version
