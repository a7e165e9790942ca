"""A one-line label for names that can be very long (a CUAD file name runs to 120 characters).

It never asks for more width than a few characters: the text is elided in the middle, where file
names differ least (the start names the company, the end the kind of agreement), and the whole text
is in the tooltip and is what a screen reader reads.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

MIN_CHARS = 12  # the narrowest it gets: enough to tell two documents apart by their ends


class ElidedLabel(QLabel):
    """setText() and text() take and give the whole text; shown_text() is what fits on screen."""

    def __init__(self, text: str = "", parent: QWidget | None = None, *, prefix: str = "") -> None:
        super().__init__(parent)
        self._full = ""
        self._tip = ""  # a tooltip of the label's own (a model's path), kept under the whole text
        self._prefix = prefix  # said before the text to screen readers ("Document: ")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setText(text)

    def setText(self, text: str) -> None:  # Qt's name; Folio's code calls it from Python
        self._full = text
        self.setAccessibleName(f"{self._prefix}{text}" if text else self._prefix.rstrip(": "))
        self._elide()
        self.updateGeometry()

    def text(self) -> str:
        return self._full

    def setToolTip(self, tip: str) -> None:
        self._tip = tip
        self._elide()

    def shown_text(self) -> str:
        return super().text()

    def is_elided(self) -> bool:
        return self.shown_text() != self._full

    def _elide(self) -> None:
        width = max(self.contentsRect().width(), 1)
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideMiddle, width)
        super().setText(shown)
        whole = self._full if shown != self._full else ""
        super().setToolTip("\n".join(t for t in (whole, self._tip) if t))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def sizeHint(self) -> QSize:
        margins = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance(self._full) + margins.left() + margins.right() + 2
        return QSize(width, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        width = self.fontMetrics().averageCharWidth() * MIN_CHARS
        return QSize(min(width, self.sizeHint().width()), super().minimumSizeHint().height())
