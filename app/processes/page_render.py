"""Pages for the viewer: text PDF pages rendered from the original file by PyMuPDF, scanned pages
from the cleaned images in the library, and where a quoted passage sits on each.

The library keeps a document's text and its scanned-page images, not a copy of the PDF: text pages
are drawn from the file the document was added from, after checking it still has the same sha256.
When it has moved or changed, the viewer shows the page's stored text instead and says why.
Everything here is slow enough to belong on a worker thread; nothing here knows about Qt. MuPDF's
part (pixels, words) runs in a child process by default, see app/processes/page_drawing.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from app.citations.passages import PassageMatch, Rect, Word, find_in_blocks, find_passage, find_terms
from app.processes.page_drawing import PageDrawProcess, PagePixels
from app.store.library import DocumentRow, Library, StoredPage
from ingest.load import file_sha256

__all__ = ["PageContent", "PageDrawer", "PagePixels", "PageRenderer", "decode_image", "locate_original"]


class PageDrawer(Protocol):
    """Draws pages of a PDF file: app.processes.page_drawing's PageDrawProcess (a child process) or PdfPages."""

    def pixels(self, path: str, number: int, scale: float) -> PagePixels | None: ...

    def words(self, path: str, number: int) -> list[Word] | None: ...

    def close(self) -> None: ...


def decode_image(data: bytes, max_width: int | None = None) -> PagePixels:
    """A stored PNG/JPEG (a scanned page, a keyframe) as RGB pixels, at most max_width wide.

    OpenCV lets go of Python's GIL while it decodes and shrinks; Qt's decoder does not, and a scanned
    page's PNG held the window's UI thread for 50-90 ms (benchmarks/bench_ui.py)."""
    import cv2
    import numpy as np

    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError("the stored picture cannot be read")
    height, width = image.shape[:2]
    if max_width is not None and width > max_width:
        height, width = max(1, round(height * max_width / width)), max_width
        image = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
    image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    return PagePixels(width, height, width * 3, image.tobytes(), 1.0)


@dataclass(frozen=True)
class PageContent:
    document_id: int
    page: StoredPage
    pixels: PagePixels | None  # a text page drawn from the original file
    png: bytes | None  # a scanned page's cleaned image (its scale is png width / page width)
    text: str  # the stored text, shown when there is no picture
    note: str  # why there is no picture, for the user ('' when there is one)
    highlight: PassageMatch | None
    terms: tuple[Rect, ...] = ()


def source_paths(library: Library, doc: DocumentRow) -> list[Path]:
    """Where the document's file may be: the library's own copy (an e-mail attachment's), then the
    paths it was added from, newest first."""
    kept = library.original_path(doc.id)
    paths = [*([kept] if kept else []), Path(doc.source_path), *library.added_from(doc.id)]
    return list(dict.fromkeys(paths))


def locate_original(library: Library, doc: DocumentRow) -> Path | None:
    """The first path the document was added from that still holds exactly the same bytes."""
    for path in source_paths(library, doc):
        try:
            if path.is_file() and path.stat().st_size == doc.size_bytes and file_sha256(path) == doc.sha256:
                return path
        except OSError:
            continue
    return None


class PageRenderer:
    """Finds each document's original once; MuPDF's work is done by `drawer`, by default in a child
    process started on first use (app/processes/page_drawing.py). Use from one thread only."""

    def __init__(self, library: Library, drawer: PageDrawer | None = None) -> None:
        self.library = library
        self.drawer: PageDrawer = drawer if drawer is not None else PageDrawProcess()
        self._originals: dict[int, str] = {}  # document id -> a path holding exactly its bytes
        self._missing: set[int] = set()

    def close(self) -> None:
        self.drawer.close()

    def _original(self, doc: DocumentRow) -> str | None:
        if doc.id in self._originals:
            return self._originals[doc.id]
        if doc.id in self._missing or doc.kind != "pdf":
            return None
        path = locate_original(self.library, doc)
        if path is None:
            self._missing.add(doc.id)
            return None
        self._originals[doc.id] = str(path)
        return str(path)

    def _unreadable(self, doc: DocumentRow) -> None:
        """Damaged, or encrypted (the password it was added with is not kept): show the stored text."""
        self._originals.pop(doc.id, None)
        self._missing.add(doc.id)

    def original_note(self, doc: DocumentRow) -> str:
        where = doc.source_path
        return f"The original file is no longer at {where} (or has changed): showing the page's text."

    def words(self, doc: DocumentRow, number: int) -> list[Word]:
        path = self._original(doc)
        if path is None:
            return []
        words = self.drawer.words(path, number)
        if words is None:
            self._unreadable(doc)
            return []
        return words

    def render(self, doc: DocumentRow, number: int, scale: float) -> PagePixels | None:
        path = self._original(doc)
        if path is None:
            return None
        pixels = self.drawer.pixels(path, number, scale)
        if pixels is None:
            self._unreadable(doc)
        return pixels

    def content(
        self,
        doc: DocumentRow,
        number: int,
        scale: float,
        *,
        quote: str | None = None,
        terms: tuple[str, ...] = (),
    ) -> PageContent:
        pages = {p.number: p for p in self.library.pages(doc.id)}
        page = pages.get(number) or pages[min(pages)]
        png = self.library.blob(page.image_blob) if page.image_blob else None
        pixels = None if png is not None else self.render(doc, page.number, scale)
        text = self.library.page_text(doc.id, page.number)
        note = "" if png is not None or pixels is not None else self.original_note(doc)
        # A drawn page has its words from the original; a scanned page has the OCR words stored with it.
        words = self.words(doc, page.number) if pixels is not None else self._ocr_words(doc.id, page.number)
        highlight = None
        if quote:
            highlight = find_passage(words, quote) if words else None
            if highlight is None:
                highlight = find_in_blocks(self._blocks(doc.id, page.number), quote)
        found_terms = find_terms(words, terms) if words and terms else ()
        return PageContent(doc.id, page, pixels, png, text, note, highlight, found_terms)

    def _ocr_words(self, document_id: int, number: int) -> list[Word]:
        return [
            Word((w[0], w[1], w[2], w[3]), w[4], (s.seq, w[5]))
            for s in self.library.segments(document_id)
            if s.page == number and s.words
            for w in s.words
        ]

    def _blocks(self, document_id: int, number: int) -> list[tuple[Rect, str]]:
        return [
            (s.bbox, s.text)
            for s in self.library.segments(document_id)
            if s.page == number and s.bbox is not None and s.text
        ]

    def thumbnail(self, doc: DocumentRow, page: StoredPage, width_px: int) -> PagePixels | None:
        """A small picture of a page: drawn for a text page, the stored image shrunk for a scanned one."""
        if page.image_blob:
            return decode_image(self.library.blob(page.image_blob), 2 * width_px)  # a scan's strokes stay legible
        return self.render(doc, page.number, width_px / max(page.width, 1.0))
