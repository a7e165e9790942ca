"""Window sizes from the screen and the text they hold, never fixed pixels: readable at 125%, 150%,
200% and large fonts.

Long dialogs scroll instead of clipping when the screen is small (a 1366x768 laptop at 150% has a
911x512 desktop, a 1280x720 one at 200% 640x360), and open as tall as their wrapped text needs at
the chosen width; windows open at a share of the screen they are on, never larger.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QAbstractButton, QApplication, QFrame, QScrollArea, QWidget


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
    room = available(dialog).size()
    return QSize(min(width, int(room.width() * 0.95)), min(height, int(room.height() * 0.9)))


def available(widget: QWidget) -> QRect:
    """The room on the screen the widget is on (the primary screen before it is shown): without the
    task bar, the dock, the menu bar."""
    screen = widget.screen() or QApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1280, 720)


def on_screen(widget: QWidget, wanted: QSize, share: float = 0.95) -> QSize:
    """`wanted`, shrunk to `share` of the room on the widget's screen where it would not fit."""
    room = available(widget).size()
    return wanted.boundedTo(QSize(int(room.width() * share), int(room.height() * share)))


def place_on_screen(window: QWidget, wanted: QSize, share: float = 0.92) -> None:
    """Size a top-level window as `on_screen` does and centre it in the room there."""
    room = available(window)
    size = on_screen(window, wanted, share)
    window.resize(size)
    x = max(room.left(), room.center().x() - size.width() // 2)
    y = max(room.top(), room.center().y() - size.height() // 2)
    window.move(x, y)


def compact(*buttons: QAbstractButton) -> None:
    """Let push buttons shrink to their text in a narrow panel (the style's 80-pixel minimum made a
    row of four buttons too wide for a 1280x720 screen at 150%); they keep their usual width where
    there is room."""
    for button in buttons:
        metrics = button.fontMetrics()
        text = metrics.horizontalAdvance(button.text().replace("&", ""))
        button.setMinimumWidth(text + 2 * metrics.averageCharWidth() + 8)
