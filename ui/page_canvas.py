"""One page drawn at a zoom, with the cited passage (or search words) marked on top, and the areas
marked for redaction; in marking mode a drag over the page marks a new area."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.citations.passages import Rect

PASSAGE_FILL = QColor(255, 213, 0, 90)
PASSAGE_EDGE = QColor(230, 120, 0)
TERM_FILL = QColor(80, 160, 255, 80)
REDACT_FILL = QColor(220, 30, 30, 60)
REDACT_EDGE = QColor(200, 0, 0)
PAD = 2.0  # page units around a marked line, so the mark does not clip the letters
MIN_MARK = 3.0  # page units: a click without a drag marks nothing


class PageCanvas(QWidget):
    area_marked = Signal(object)  # a rectangle in page units (as the page is shown), in marking mode

    def __init__(self) -> None:
        super().__init__()
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.image: QImage | None = None
        self.image_scale = 1.0  # image pixels per page unit
        self.page_size = (595.0, 842.0)  # page units
        self.zoom = 1.0  # logical pixels per page unit
        self.highlights: tuple[Rect, ...] = ()
        self.terms: tuple[Rect, ...] = ()
        self.redactions: tuple[Rect, ...] = ()  # areas marked for redaction on this page
        self.marking = False
        self._drag: tuple[QPointF, QPointF] | None = None

    def set_marking(self, on: bool) -> None:
        self.marking = on
        self._drag = None
        self.setCursor(Qt.CursorShape.CrossCursor if on else Qt.CursorShape.ArrowCursor)
        self.update()

    def set_redactions(self, rects: tuple[Rect, ...]) -> None:
        self.redactions = rects
        self.update()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.marking and event.button() == Qt.MouseButton.LeftButton:
            self._drag = (event.position(), event.position())
            self.update()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._drag is not None:
            self._drag = (self._drag[0], event.position())
            self.update()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._drag is None:
            super().mouseReleaseEvent(event)
            return
        start, end = self._drag[0], event.position()
        self._drag = None
        self.update()
        z = self.zoom or 1.0
        x0, x1 = sorted((start.x() / z, end.x() / z))
        y0, y1 = sorted((start.y() / z, end.y() / z))
        w, h = self.page_size
        rect = (max(0.0, x0), max(0.0, y0), min(w, x1), min(h, y1))
        if rect[2] - rect[0] >= MIN_MARK and rect[3] - rect[1] >= MIN_MARK:
            self.area_marked.emit(rect)

    def set_page(
        self,
        image: QImage | None,
        image_scale: float,
        page_size: tuple[float, float],
        highlights: tuple[Rect, ...] = (),
        terms: tuple[Rect, ...] = (),
    ) -> None:
        self.image, self.image_scale, self.page_size = image, image_scale, page_size
        self.highlights, self.terms = highlights, terms
        self._resize()

    def set_zoom(self, zoom: float) -> None:
        self.zoom = zoom
        self._resize()

    def _resize(self) -> None:
        self.setFixedSize(self.sizeHint())
        self.update()

    def sizeHint(self) -> QSize:
        w, h = self.page_size
        return QSize(max(1, round(w * self.zoom)), max(1, round(h * self.zoom)))

    def to_widget(self, rect: Rect) -> QRectF:
        x0, y0, x1, y1 = rect
        z = self.zoom
        return QRectF((x0 - PAD) * z, (y0 - PAD) * z, (x1 - x0 + 2 * PAD) * z, (y1 - y0 + 2 * PAD) * z)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), Qt.GlobalColor.white)
        if self.image is not None and self.width() > 0 and self.height() > 0:
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            # Only the part being repainted, from the matching part of the image: a page zoomed in is
            # several thousand pixels a side, and scaling all of it for each scroll step held the UI
            # thread past 50 ms (bench_ui's paging and zooming).
            target = QRectF(event.rect())
            sx, sy = self.image.width() / self.width(), self.image.height() / self.height()
            source = QRectF(target.x() * sx, target.y() * sy, target.width() * sx, target.height() * sy)
            painter.drawImage(target, self.image, source)
        painter.setPen(Qt.PenStyle.NoPen)
        for rect in self.terms:
            painter.fillRect(self.to_widget(rect), TERM_FILL)
        if self.highlights:
            painter.setPen(QPen(PASSAGE_EDGE, 1.5))
            painter.setBrush(PASSAGE_FILL)
            for rect in self.highlights:
                painter.drawRoundedRect(self.to_widget(rect), 2, 2)
        if self.redactions or self._drag is not None:
            painter.setPen(QPen(REDACT_EDGE, 1.5, Qt.PenStyle.DashLine))
            painter.setBrush(REDACT_FILL)
            z = self.zoom
            for x0, y0, x1, y1 in self.redactions:
                painter.drawRect(QRectF(x0 * z, y0 * z, (x1 - x0) * z, (y1 - y0) * z))
            if self._drag is not None:
                painter.drawRect(QRectF(self._drag[0], self._drag[1]).normalized())
        painter.end()
