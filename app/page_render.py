"""Pages for the viewer: text PDF pages rendered from the original file by PyMuPDF, scanned pages
from the cleaned images in the library, and where a quoted passage sits on each.

The library keeps a document's text and its scanned-page images, not a copy of the PDF: text pages
are drawn from the file the document was added from, after checking it still has the same sha256.
When it has moved or changed, the viewer shows the page's stored text instead and says why.
Everything here is slow enough to belong on a worker thread; nothing here knows about Qt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.library import DocumentRow, Library, StoredPage
from app.passages import PassageMatch, Rect, Word, find_in_blocks, find_passage, find_terms, words_from_pymupdf
from ingest.load import file_sha256

MAX_PIXELS = 40_000_000  # a zoomed-in poster page is drawn smaller rather than eating gigabytes
OPEN_DOCUMENTS = 2
BAND_PIXELS = 600_000  # per get_pixmap call: ~10-20 ms of drawing, the longest the UI thread may wait


@dataclass(frozen=True)
class PagePixels:
    """An RGB888 picture of a page; `scale` is pixels per page unit (PDF point or image pixel)."""

    width: int
    height: int
    stride: int
    samples: bytes
    scale: float


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
    rows = library.db.execute(
        "SELECT path FROM document_sources WHERE document_id = ? ORDER BY id DESC", [doc.id]
    ).fetchall()
    paths = [Path(doc.source_path), *(Path(r[0]) for r in rows)]
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
    """Keeps the last few originals open; use from one thread only (PyMuPDF documents are not shared)."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self._open: dict[int, Any] = {}  # document id -> pymupdf.Document, most recent last
        self._missing: set[int] = set()

    def close(self) -> None:
        for doc in self._open.values():
            doc.close()
        self._open.clear()

    def _pdf(self, doc: DocumentRow) -> Any | None:
        if doc.id in self._open:
            self._open[doc.id] = self._open.pop(doc.id)
            return self._open[doc.id]
        if doc.id in self._missing or doc.kind != "pdf":
            return None
        path = locate_original(self.library, doc)
        if path is None:
            self._missing.add(doc.id)
            return None
        import pymupdf

        try:
            opened = pymupdf.open(path)
        except (RuntimeError, ValueError):
            self._missing.add(doc.id)
            return None
        if opened.needs_pass:  # encrypted originals were opened with a password we do not keep
            opened.close()
            self._missing.add(doc.id)
            return None
        self._open[doc.id] = opened
        while len(self._open) > OPEN_DOCUMENTS:
            self._open.pop(next(iter(self._open))).close()
        return opened

    def original_note(self, doc: DocumentRow) -> str:
        where = doc.source_path
        return f"The original file is no longer at {where} (or has changed): showing the page's text."

    def words(self, doc: DocumentRow, number: int) -> list[Word]:
        pdf = self._pdf(doc)
        if pdf is None:
            return []
        return words_from_pymupdf(pdf[number - 1].get_text("words", sort=True))

    def render(self, doc: DocumentRow, number: int, scale: float) -> PagePixels | None:
        pdf = self._pdf(doc)
        if pdf is None:
            return None
        import pymupdf

        page = pdf[number - 1]
        area = float(page.rect.width * page.rect.height) or 1.0
        scale = min(scale, (MAX_PIXELS / area) ** 0.5)
        matrix = pymupdf.Matrix(scale, scale)
        whole = (page.rect * matrix).irect
        # MuPDF holds Python's GIL for a whole get_pixmap call: one call for a big page would stall
        # the UI thread for as long as it draws. Drawn in bands, the GIL is free between them.
        target = pymupdf.Pixmap(pymupdf.csRGB, whole, False)
        band = max(16, BAND_PIXELS // max(whole.width, 1))
        top = whole.y0
        while top < whole.y1:
            bottom = min(whole.y1, top + band)
            clip = pymupdf.Rect(whole.x0, top, whole.x1, bottom) * ~matrix
            piece = page.get_pixmap(matrix=matrix, clip=clip, colorspace=pymupdf.csRGB, alpha=False)
            target.copy(piece, piece.irect)
            top = bottom
        return PagePixels(target.width, target.height, target.stride, bytes(target.samples_mv), scale)

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
        words = self.words(doc, page.number) if pixels is not None else []
        highlight = None
        if quote:
            highlight = find_passage(words, quote) if words else None
            if highlight is None:
                highlight = find_in_blocks(self._blocks(doc.id, page.number), quote)
        found_terms = find_terms(words, terms) if words and terms else ()
        return PageContent(doc.id, page, pixels, png, text, note, highlight, found_terms)

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
