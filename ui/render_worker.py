"""Draws document pages off the UI thread: a 300-page PDF or a zoomed-in poster never freezes the window.

Requests carry a generation number; the viewer bumps it whenever what it wants changes (another
page, zoom, document), and the worker drops requests that are no longer wanted before doing the
work. QImage (unlike QPixmap) may be made on any thread, so pictures travel as QImage.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QImage

from app.context import AppContext
from app.errors import USER_ERRORS, one_line
from app.processes.page_render import PageContent, PagePixels, PageRenderer, decode_image
from app.store.library import Library, StoredKeyframe

THUMB_WIDTH = 96
THUMB_BATCH = 6


@dataclass(frozen=True)
class PageRequest:
    generation: int
    document_id: int
    page: int
    scale: float  # device pixels per page unit
    quote: str | None = None
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class RenderedPage:
    generation: int
    content: PageContent
    image: QImage | None
    image_scale: float  # image pixels per page unit


@dataclass(frozen=True)
class Thumbnail:
    generation: int
    document_id: int
    page: int
    image: QImage


@dataclass(frozen=True)
class VideoFrames:
    generation: int
    document_id: int
    frames: list[tuple[StoredKeyframe, QImage]]
    contact_sheet: QImage | None


def to_qimage(pixels: PagePixels | bytes) -> QImage:
    if isinstance(pixels, bytes):
        pixels = decode_image(pixels)  # not QImage.loadFromData: it holds the GIL, see decode_image
    # copy(): the QImage must own its bytes, the Python buffer goes away with this frame.
    return QImage(pixels.samples, pixels.width, pixels.height, pixels.stride, QImage.Format.Format_RGB888).copy()


class RenderWorker(QObject):
    page_ready = Signal(object)  # RenderedPage
    thumbnails_ready = Signal(list)  # list[Thumbnail]
    keyframes_ready = Signal(object)  # VideoFrames
    failed = Signal(int, str)  # generation, one-line reason

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._base = ctx
        self._ctx: AppContext | None = None
        self._renderer: PageRenderer | None = None
        self.wanted = 0  # set from the UI thread: the newest generation; older requests are skipped
        self.wanted_thumbs = 0

    def _library(self) -> Library:
        if self._ctx is None:
            self._ctx = self._base.reopen()
        return self._ctx.library

    def _render(self) -> PageRenderer:
        if self._renderer is None:
            self._renderer = PageRenderer(self._library())
        return self._renderer

    @Slot(object)
    def page(self, request: PageRequest) -> None:
        if request.generation < self.wanted:
            return
        try:
            doc = self._library().get(request.document_id)
            content = self._render().content(doc, request.page, request.scale, quote=request.quote, terms=request.terms)
        except USER_ERRORS as exc:
            self.failed.emit(request.generation, one_line(exc))
            return
        except (OSError, RuntimeError, ValueError) as exc:  # a damaged original or blob
            self.failed.emit(request.generation, f"cannot show page {request.page}: {one_line(exc)}")
            return
        image, scale = None, 1.0
        if content.pixels is not None:
            image, scale = to_qimage(content.pixels), content.pixels.scale
        elif content.png is not None:
            image = to_qimage(content.png)
            scale = image.width() / max(content.page.width, 1.0)
        self.page_ready.emit(RenderedPage(request.generation, content, image, scale))

    @Slot(int, int)
    def thumbnails(self, generation: int, document_id: int) -> None:
        try:
            library = self._library()
            doc = library.get(document_id)
            pages = library.pages(document_id)
            batch: list[Thumbnail] = []
            for page in pages:
                if generation < self.wanted_thumbs:
                    return
                picture = self._render().thumbnail(doc, page, THUMB_WIDTH)
                if picture is None:
                    continue
                image = to_qimage(picture)
                batch.append(Thumbnail(generation, document_id, page.number, image))
                if len(batch) >= THUMB_BATCH:
                    self.thumbnails_ready.emit(batch)
                    batch = []
            if batch:
                self.thumbnails_ready.emit(batch)
        except (*USER_ERRORS, OSError, RuntimeError, ValueError) as exc:  # type: ignore[misc]
            self.failed.emit(generation, f"cannot draw page thumbnails: {one_line(exc)}")

    @Slot(int, int)
    def keyframes(self, generation: int, document_id: int) -> None:
        try:
            library = self._library()
            frames = []
            for frame in library.keyframes(document_id):
                if generation < self.wanted_thumbs:
                    return
                frames.append((frame, to_qimage(library.blob(frame.image_blob))))
            sheet = library.contact_sheet(document_id)
        except (*USER_ERRORS, OSError) as exc:  # type: ignore[misc]
            self.failed.emit(generation, f"cannot show the video's frames: {one_line(exc)}")
            return
        self.keyframes_ready.emit(
            VideoFrames(generation, document_id, frames, to_qimage(sheet) if sheet is not None else None)
        )

    @Slot()
    def shutdown(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None
