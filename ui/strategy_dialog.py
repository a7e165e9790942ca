"""The choice offered when a question's documents do not fit the model's context: read every page in
passes, only the pages a word search ranks highest, or pages the user names (one document), each
reading with how long it would take on this computer (app/passes/estimate.py). The question itself is
asked again by the window with the choice (app/passes)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.pages import parse_pages
from app.passes.estimate import ReadingEstimate, ReadingEstimates
from ui.wording import without_advice


@dataclass(frozen=True)
class ReadingChoice:
    strategy: str | None  # 'passes' | 'search' | None (the pages chosen)
    pages: tuple[int, ...] | None = None


class StrategyDialog(QDialog):
    """Non-modal to the test and the event loop (opened with open()); `chosen` carries the choice."""

    chosen = Signal(object)  # ReadingChoice

    def __init__(
        self,
        parent: QWidget,
        reason: str,
        *,
        pages: int,
        one_document: bool,
        estimates: ReadingEstimates | None = None,
    ) -> None:
        super().__init__(parent)
        self.page_count = pages
        self.setWindowTitle("The selection does not fit")
        self.setAccessibleName("The selection does not fit the model's context")
        layout = QVBoxLayout(self)
        why = without_advice(reason)  # the choices follow instead
        said = QLabel(f"{why[:1].upper()}{why[1:]}.\n\nHow should Folio read it?")
        said.setWordWrap(True)
        layout.addWidget(said)
        how = "in passes" if one_document else "document by document"
        self.passes = QPushButton(f"Read all {pages:,} pages, {how}")
        self.passes.setToolTip("Every page is read; the answer says which pages each pass read")
        self.search = QPushButton("Only the pages a word search finds")
        self.search.setToolTip("The pages that best match the question's words, as many as fit")
        self.passes_time = _time_label(self.passes, estimates.passes if estimates else None)
        self.search_time = _time_label(self.search, estimates.search if estimates else None)
        for button, said in ((self.passes, self.passes_time), (self.search, self.search_time)):
            layout.addWidget(button)
            layout.addWidget(said)
        self.page_list = QLineEdit()
        self.page_list.setPlaceholderText("Pages, e.g. 1-20, 45")
        self.page_list.setAccessibleName("Pages to read")
        self.choose = QPushButton("Read these pages")
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        if one_document:  # a page list names pages of one document
            layout.addWidget(self.page_list)
            layout.addWidget(self.choose)
            layout.addWidget(self.error)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.passes.clicked.connect(lambda: self._done(ReadingChoice("passes")))
        self.search.clicked.connect(lambda: self._done(ReadingChoice("search")))
        self.choose.clicked.connect(self._choose_pages)
        self.page_list.returnPressed.connect(self._choose_pages)

    def _choose_pages(self) -> None:
        try:
            pages = parse_pages(self.page_list.text())
        except ValueError as exc:  # said in the dialog, which stays open with what was typed
            self.error.setText(str(exc))
            self.error.setVisible(True)
            return
        if pages[-1] > self.page_count:
            self.error.setText(f"the document has {self.page_count:,} pages: page {pages[-1]:,} is past its end")
            self.error.setVisible(True)
            return
        self._done(ReadingChoice(None, pages))

    def _done(self, choice: ReadingChoice) -> None:
        self.chosen.emit(choice)
        self.accept()


def _time_label(button: QPushButton, estimate: ReadingEstimate | None) -> QLabel:
    """The line under a reading's button: its parts and time ('12 parts, about 6 min on this
    computer'), or why it cannot be done (then the button is off)."""
    said = QLabel(estimate.line() if estimate is not None else "time unknown")
    said.setWordWrap(True)
    said.setIndent(12)  # under its button: read as that button's
    button.setAccessibleDescription(said.text())
    if estimate is not None and estimate.note:
        button.setEnabled(False)
    return said
