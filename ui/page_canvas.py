"""One page drawn at a zoom, with the cited passage (or search words) marked on top."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.citations.passages import Rect

PASSAGE_FILL = QColor(255, 213, 0, 90)
PASSAGE_EDGE = QColor(230, 120, 0)
TERM_FILL = QColor(80, 160, 255, 80)
PAD = 2.0  # page units around a marked line, so the mark does not clip the letters


class PageCanvas(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.image: QImage | None = None
        self.image_scale = 1.0  # image pixels per page unit
        self.page_size = (595.0, 842.0)  # page units
        self.zoom = 1.0  # logical pixels per page unit
        self.highlights: tuple[Rect, ...] = ()
        self.terms: tuple[Rect, ...] = ()

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
        if self.image is not None:
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            painter.drawImage(QRectF(self.rect()), self.image)
        painter.setPen(Qt.PenStyle.NoPen)
        for rect in self.terms:
            painter.fillRect(self.to_widget(rect), TERM_FILL)
        if self.highlights:
            painter.setPen(QPen(PASSAGE_EDGE, 1.5))
            painter.setBrush(PASSAGE_FILL)
            for rect in self.highlights:
                painter.drawRoundedRect(self.to_widget(rect), 2, 2)
        painter.end()
