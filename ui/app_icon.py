"""Folio's icon: one SVG (assets/icons/folio.svg) drawn by Qt at every size a desktop asks for."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QIcon, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from assets import asset_path

ICON_SVG = asset_path("icons", "folio.svg")
ICON_SIZES = (16, 20, 24, 32, 40, 48, 64, 128, 256, 512)


def render_icon(size: int) -> QImage:
    """The icon as a square image with a transparent background. Works without Qt's SVG plugins."""
    renderer = QSvgRenderer(str(ICON_SVG))
    if not renderer.isValid():
        raise RuntimeError(f"cannot draw the icon {ICON_SVG}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def app_icon() -> QIcon:
    icon = QIcon()
    for size in ICON_SIZES:
        icon.addPixmap(QPixmap.fromImage(render_icon(size)))
    return icon
