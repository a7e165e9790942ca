"""The hint over the chat once the first document is in: what to do next, in two lines, until the
user dismisses it (the window remembers that, in ui/window_state.py)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from ui.sizing import compact

TEXT = (
    "Next: ask a question below (Ctrl+Enter sends it). Each sentence of the answer is checked against the "
    "pages; click its check, or Tab to it and press Enter, to see the passage."
)


class FirstHint(QFrame):
    dismissed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("firstHint")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Hint")
        self.label = QLabel(TEXT)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.button = QPushButton("Got it")
        self.button.setObjectName("dismissHint")
        self.button.setAccessibleName("Dismiss the hint")
        self.button.setToolTip("Hide this hint for good")
        self.button.clicked.connect(self._dismiss)
        compact(self.button)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 6, 8, 6)
        row.addWidget(self.label, 1)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignTop)
        self.setVisible(False)

    def _dismiss(self) -> None:
        self.setVisible(False)
        self.dismissed.emit()
