"""An extraction run in the window: progress per document and field, the table filling in, cancel.
Closing the window (Esc, Close, the title bar's X) while the run goes on cancels it the same way.

The run itself happens on the chat worker (the one owner of the engine); this dialog only renders
the events it sends (app.extraction's RunStarted, DocumentStarted, CellsStored, RunFinished, and
the engine's status and reading progress).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QSize, Signal
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.context import AppContext
from app.engine.progress import Progress
from app.extraction.runner import CellsStored, DocumentStarted, RunFinished, RunStarted, load_table
from ui.elided_label import ElidedLabel
from ui.extraction_table import ExtractionTableView
from ui.sizing import compact, on_screen

CLOSE_RUNNING_TIP = (
    "Close this window and stop the run after the current field; what is stored stays, and it can resume"
)
CLOSE_FINISHED_TIP = "Close this window; the table stays in Work > Extraction table"


class ExtractionRunDialog(QDialog):
    cancel_requested = Signal()

    def __init__(self, ctx: AppContext, template_name: str, document_count: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.run_id: int | None = None
        self.finished_status: str | None = None
        self.setWindowTitle(f"Extraction - {template_name}")
        self.resize(on_screen(self, QSize(1000, 620)))
        self.status = QLabel(f"Starting {template_name} on {document_count} document(s)…")
        self.status.setWordWrap(True)
        self.detail = ElidedLabel("")  # names the document being read: a long file name is cut
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setMaximum(0)  # busy until the run says how many fields it holds
        self.progress.setAccessibleName("Fields filled")
        self.progress.setAccessibleDescription("How many of the run's fields have an answer, and the time left")
        self.table = ExtractionTableView()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop after the current field; what is stored stays, and the run can resume")
        self.cancel_button.clicked.connect(self._cancel)
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip(CLOSE_RUNNING_TIP)
        self.close_button.clicked.connect(self.close)
        compact(self.cancel_button, self.close_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.detail, 1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.progress)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self._started = time.monotonic()
        self._first_done: int | None = None

    def _cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.status.setText("Stopping after the current field…")
        self.cancel_requested.emit()

    def done(self, result: int) -> None:
        """Esc, Close and the title bar's X all end here (QDialog closes by rejecting). A run still going
        is cancelled with its window, as closing a playbook review or a comparison stops it: nobody is
        left to watch it or cancel it, and the engine would stay busy behind the user's back. What is
        stored stays; the main window's status bar says so when the run has stopped."""
        if self.finished_status is None and self.cancel_button.isEnabled():
            self._cancel()
        super().done(result)

    def on_event(self, event: object) -> None:
        if isinstance(event, RunStarted):
            self.run_id = event.run_id
            self._first_done = event.cells_done
            self._started = time.monotonic()
            self.progress.setMaximum(max(event.cells_total, 1))
            self.progress.setValue(event.cells_done)
            resumed = f", {event.cells_done} already stored" if event.cells_done else ""
            self.status.setText(f"Run {event.run_id}: {event.template_name} with {event.model_label}{resumed}")
            self._reload()
        elif isinstance(event, DocumentStarted):
            self.detail.setText(f"Document {event.position} of {event.count}: {event.title}")
        elif isinstance(event, Progress) and event.reading:
            self.detail.setText(f"Reading the document: {event.done:,} / {event.total:,} tokens")
        elif isinstance(event, Progress):
            self.detail.setText(event.text)
        elif isinstance(event, CellsStored):
            self.progress.setValue(event.cells_done)
            self.progress.setFormat(f"%v / %m fields{self._eta(event.cells_done, event.cells_total)}")
            self._reload()
        elif isinstance(event, RunFinished):
            self.finish(event.status, f"{event.cells_done} of {event.cells_total} fields filled")

    def _eta(self, done: int, total: int) -> str:
        new = done - (self._first_done or 0)
        if new <= 0:
            return ""
        left = (time.monotonic() - self._started) / new * (total - done)
        return f", about {left / 60:.0f} min left" if left >= 90 else f", about {left:.0f} s left"

    def _reload(self) -> None:
        if self.run_id is not None:
            self.table.set_table(load_table(self.ctx, self.run_id))

    def finish(self, status: str, text: str) -> None:
        self.finished_status = status
        done = "Cancelled" if status == "cancelled" else ("Failed" if status == "failed" else "Done")
        self.status.setText(f"{done}: {text}")
        self.detail.setText("")
        self.cancel_button.setEnabled(False)
        self.close_button.setToolTip(CLOSE_FINISHED_TIP)
        if self.progress.maximum() == 0:
            self.progress.setMaximum(1)
