"""Dialog sizes from the text they hold, never fixed pixels: readable at 125%, 150% and large fonts.

Long dialogs scroll instead of clipping when the screen is small (a 1366x768 laptop at 150% has a
911x512 desktop), and open as tall as their wrapped text needs at the chosen width.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication, QFrame, QScrollArea, QWidget


def scrolling(body: QWidget) -> QScrollArea:
    scroll = QScrollArea()
    scroll.setWidget(body)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    return scroll


def text_width(widget: QWidget, chars: int) -> int:
    return widget.fontMetrics().averageCharWidth() * chars


def initial_size(dialog: QWidget, body: QWidget, chars: int, extra_height: int = 0) -> QSize:
    """chars wide (in the dialog's font), as tall as the body's wrapped text needs, within the screen."""
    width = text_width(dialog, chars)
    layout = body.layout()
    body_height = layout.totalHeightForWidth(width) if layout is not None and layout.hasHeightForWidth() else 0
    height = max(body_height, body.sizeHint().height()) + extra_height
    screen = dialog.screen() or QApplication.primaryScreen()
    if screen is not None:
        room = screen.availableGeometry().size()
        width = min(width, int(room.width() * 0.95))
        height = min(height, int(room.height() * 0.9))
    return QSize(width, height)
