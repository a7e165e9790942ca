"""MuPDF's part of showing a page: its pixels and its words, drawn in a child process.

MuPDF holds Python's GIL for the whole of each call. Drawn on the window's render thread, a page
(even in 20 ms bands) or a page's words for a highlight kept the UI thread waiting for the GIL for
up to 78 ms while the model and the file reader kept both cores busy (benchmarks/bench_ui.py, D).
PageDrawProcess runs the same PdfPages in a long-lived child (app/processes/pool.py): the render
thread only waits on a pipe. A child that crashes costs the page being drawn, in one line; the
next page gets a new child.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.citations.passages import Word, words_from_pymupdf
from app.errors import FolioError
from app.processes.pool import ChildDied, ChildProcess

MAX_PIXELS = 40_000_000  # a zoomed-in poster page is drawn smaller rather than eating gigabytes
OPEN_DOCUMENTS = 2


@dataclass(frozen=True)
class PagePixels:
    """An RGB888 picture of a page; `scale` is pixels per page unit (PDF point or image pixel)."""

    width: int
    height: int
    stride: int
    samples: bytes
    scale: float


class DrawingFailed(FolioError):
    pass


class PdfPages:
    """Draws pages of PDF files in this process, keeping the last few open; one thread only.

    pixels() and words() return None when the file cannot be opened (damaged, or encrypted: the
    password it was added with is not kept)."""

    def __init__(self) -> None:
        self._open: dict[str, Any] = {}  # path -> pymupdf.Document, most recent last

    def close(self) -> None:
        for doc in self._open.values():
            doc.close()
        self._open.clear()

    def _pdf(self, path: str) -> Any | None:
        if path in self._open:
            self._open[path] = self._open.pop(path)
            return self._open[path]
        import pymupdf

        try:
            opened = pymupdf.open(path)
        except (RuntimeError, ValueError):
            return None
        if opened.needs_pass:
            opened.close()
            return None
        self._open[path] = opened
        while len(self._open) > OPEN_DOCUMENTS:
            self._open.pop(next(iter(self._open))).close()
        return opened

    def pixels(self, path: str, number: int, scale: float) -> PagePixels | None:
        pdf = self._pdf(path)
        if pdf is None:
            return None
        import pymupdf

        page = pdf[number - 1]
        area = float(page.rect.width * page.rect.height) or 1.0
        scale = min(scale, (MAX_PIXELS / area) ** 0.5)
        pix = page.get_pixmap(matrix=pymupdf.Matrix(scale, scale), colorspace=pymupdf.csRGB, alpha=False)
        return PagePixels(pix.width, pix.height, pix.stride, pix.samples, scale)

    def words(self, path: str, number: int) -> list[Word] | None:
        pdf = self._pdf(path)
        if pdf is None:
            return None
        return words_from_pymupdf(pdf[number - 1].get_text("words", sort=True))


_child_pages: PdfPages | None = None  # in the child: its own open documents, kept between calls


def _in_child() -> PdfPages:
    global _child_pages
    if _child_pages is None:
        _child_pages = PdfPages()
    return _child_pages


def _child_pixels(path: str, number: int, scale: float) -> PagePixels | None:
    return _in_child().pixels(path, number, scale)


def _child_words(path: str, number: int) -> list[Word] | None:
    return _in_child().words(path, number)


class PageDrawProcess(ChildProcess):
    """PdfPages in a child process, started on first use; call from one thread (the render worker's)."""

    def pixels(self, path: str, number: int, scale: float) -> PagePixels | None:
        try:
            # Drawing is safe to repeat: one retry covers a child that died between two pages.
            return self.call(_child_pixels, path, number, scale, retries=1)
        except ChildDied as exc:
            raise DrawingFailed(f"page {number} could not be drawn: the page drawing process stopped") from exc

    def words(self, path: str, number: int) -> list[Word] | None:
        try:
            return self.call(_child_words, path, number, retries=1)
        except ChildDied as exc:
            raise DrawingFailed(f"page {number}'s words could not be read: the page drawing process stopped") from exc
