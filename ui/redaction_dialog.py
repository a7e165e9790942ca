"""File > Export redacted copy…: the candidates to remove from one document, accepted or rejected one
by one or a kind at a time, and the redacted copy written, checked, and logged.

Every pattern kind is looked for; the user's terms (one per line) and the areas marked in the viewer
are accepted as they come, the rest wait for a decision. *Suggest names* asks the model (through
the window, which owns the engine) for the people and organisations the document names. The work
runs on the redaction worker's thread and child process, with progress and Cancel; the window stays
responsive. A copy whose check finds anything redacted is not kept, and the dialog says why.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from app.context import AppContext
from app.engine.session import Progress
from app.redaction.candidates import KIND_NAMES, MARKED, MODEL, TERM, Candidate, Mark, Name, Search
from app.redaction.child import Step
from app.redaction.names import Suggestions, party_names
from app.redaction.service import Redacted
from app.store.library import DocumentRow
from ui.background import start_worker_thread
from ui.redaction_worker import ExportJob, Findings, FindJob, RedactionWorker

COLUMNS = ("Remove", "Page", "Kind", "Found by", "Where")
SOURCES = {"pattern": "pattern", "model": "the model", "extraction": "extraction table", "user": "you"}
ACCEPTED_AT_ONCE = (TERM, MARKED)  # what the user asked for is accepted; the rest is proposed


class RedactionDialog(QDialog):
    _want_find = Signal(object)  # FindJob
    _want_export = Signal(object)  # ExportJob
    names_requested = Signal(int)  # document id: the window asks the model (it owns the engine)
    candidate_chosen = Signal(int, int, str)  # document id, page, words: show them in the viewer

    def __init__(
        self,
        ctx: AppContext,
        doc: DocumentRow,
        marks: list[tuple[int, tuple[float, float, float, float]]],
        parent: object = None,
    ) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self.ctx = ctx
        self.doc = doc
        self.marks = marks
        self.names: list[Name] = party_names(ctx, doc.id)
        self.findings: Findings | None = None
        self.decided: dict[str, bool] = {}  # candidate key -> accepted, as the user left it
        self.saved: Redacted | None = None
        self.names_note = ""  # what the model's suggestions came to, once asked
        self._busy = ""
        self.setWindowTitle(f"Export redacted copy: {doc.title}")
        self.resize(980, 640)
        self._build()
        self.worker = RedactionWorker(ctx)
        self.thread_ = start_worker_thread(self.worker, "folio-redact", cleanup="shutdown")
        self._want_find.connect(self.worker.find)
        self._want_export.connect(self.worker.export)
        self.worker.progress.connect(self._on_progress)
        self.worker.found.connect(self._on_found)
        self.worker.exported.connect(self._on_exported)
        self.worker.failed.connect(self._on_failed)
        self.worker.cancelled.connect(self._on_cancelled)
        self.find_candidates()

    # -- layout --------------------------------------------------------------------------------------
    def _build(self) -> None:
        intro = QLabel(
            "Accepted areas are removed for real from a new PDF (text, pictures and drawings under each box); "
            "the original file is not changed. The copy is read again before it is kept: if anything removed "
            "can still be found, nothing is saved."
        )
        intro.setWordWrap(True)
        self.terms = QPlainTextEdit()
        self.terms.setPlaceholderText(
            "Your terms to remove, one per line (every occurrence, any case, across line breaks)"
        )
        self.terms.setMaximumHeight(70)
        self.find_button = QPushButton("Find")
        self.find_button.setToolTip("Look again, with these terms and the areas marked in the viewer")
        self.find_button.clicked.connect(self.find_candidates)
        self.names_button = QPushButton("Suggest names (model)")
        self.names_button.setToolTip("The model reads the document and lists the people and organisations it names")
        self.names_button.clicked.connect(lambda: self._ask_names())
        find_row = QHBoxLayout()
        find_row.addWidget(self.terms, 1)
        buttons = QVBoxLayout()
        buttons.addWidget(self.find_button)
        buttons.addWidget(self.names_button)
        find_row.addLayout(buttons)

        self.table = QTreeWidget()
        self.table.setHeaderLabels(list(COLUMNS))
        self.table.setRootIsDecorated(False)
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.table.itemChanged.connect(self._item_changed)
        self.table.itemDoubleClicked.connect(self._show_item)
        for column, width in enumerate((70, 50, 170, 110)):
            self.table.setColumnWidth(column, width)
        self.accept_kind = QPushButton("Accept all of this kind")
        self.reject_kind = QPushButton("Reject all of this kind")
        self.accept_selected = QPushButton("Accept selected")
        self.reject_selected = QPushButton("Reject selected")
        self.accept_kind.clicked.connect(lambda: self._set_kind(True))
        self.reject_kind.clicked.connect(lambda: self._set_kind(False))
        self.accept_selected.clicked.connect(lambda: self._set_selected(True))
        self.reject_selected.clicked.connect(lambda: self._set_selected(False))
        decide = QHBoxLayout()
        for button in (self.accept_kind, self.reject_kind, self.accept_selected, self.reject_selected):
            decide.addWidget(button)
        decide.addStretch(1)
        self.counts = QLabel("")
        decide.addWidget(self.counts)

        self.removed = QLabel("")
        self.removed.setWordWrap(True)
        self.removed.setTextFormat(Qt.TextFormat.PlainText)
        self.label_box = QCheckBox("Label each box with its reason (“Redacted: personal data”)")
        self.label_box.setChecked(True)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.export_button = QPushButton("Export redacted copy…")
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.export)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        bottom = QHBoxLayout()
        bottom.addWidget(self.label_box)
        bottom.addStretch(1)
        bottom.addWidget(self.export_button)
        bottom.addWidget(close)
        work = QHBoxLayout()
        work.addWidget(self.progress, 1)
        work.addWidget(self.cancel_button)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(find_row)
        layout.addWidget(self.table, 1)
        layout.addLayout(decide)
        layout.addWidget(self.removed)
        layout.addLayout(work)
        layout.addWidget(self.status)
        layout.addLayout(bottom)
        self._set_busy("")

    # -- finding ---------------------------------------------------------------------------------------
    def search(self) -> Search:
        terms = tuple(t.strip() for t in self.terms.toPlainText().splitlines() if t.strip())
        marks = tuple(Mark(page, rect) for page, rect in self.marks)
        return Search(terms=terms, names=tuple(self.names), marks=marks)

    def set_marks(self, marks: list[tuple[int, tuple[float, float, float, float]]]) -> None:
        """The viewer's marks changed: the next Find uses them."""
        self.marks = marks
        if not self._busy:
            self.status.setText("Areas marked in the viewer changed: press Find to list them.")

    def find_candidates(self) -> None:
        if self._busy:
            return
        self._set_busy("finding")
        self.status.setText("Reading the pages…")
        self._want_find.emit(FindJob(self.doc.id, self.search()))

    def _on_found(self, findings: Findings) -> None:
        self.findings = findings
        self._fill(findings.found.candidates)
        lines = findings.found.inventory.lines()
        self.removed.setText("Also removed from the copy: " + "; ".join(lines) if lines else "")
        skipped = findings.found.skipped_terms
        note = f" (not looked for, no letter or digit: {', '.join(skipped)})" if skipped else ""
        count = f"{len(findings.found.candidates)} candidate(s) on {len(findings.found.pages)} page(s){note}."
        self.status.setText(f"{self.names_note} {count}".strip())
        self._set_busy("")

    def _fill(self, candidates: list[Candidate]) -> None:
        self.table.blockSignals(True)
        self.table.clear()
        for c in candidates:
            page = str(c.page) if c.page else "file"
            item = QTreeWidgetItem(["", page, KIND_NAMES.get(c.kind, c.kind), _found_by(c), c.context])
            item.setData(0, Qt.ItemDataRole.UserRole, c.key)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            accepted = self.decided.get(c.key, c.kind in ACCEPTED_AT_ONCE)
            item.setCheckState(0, Qt.CheckState.Checked if accepted else Qt.CheckState.Unchecked)
            item.setToolTip(4, c.context)
            self.table.addTopLevelItem(item)
        self.table.blockSignals(False)
        self._count()

    def _items(self) -> list[QTreeWidgetItem]:
        items = (self.table.topLevelItem(i) for i in range(self.table.topLevelItemCount()))
        return [item for item in items if item is not None]

    def candidate(self, item: QTreeWidgetItem) -> Candidate | None:
        key = item.data(0, Qt.ItemDataRole.UserRole)
        found = self.findings.found.candidates if self.findings else []
        return next((c for c in found if c.key == key), None)

    def accepted_candidates(self) -> list[Candidate]:
        keys = {i.data(0, Qt.ItemDataRole.UserRole) for i in self._items() if i.checkState(0) == Qt.CheckState.Checked}
        return [c for c in (self.findings.found.candidates if self.findings else []) if c.key in keys]

    def _item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if column == 0:
            self.decided[item.data(0, Qt.ItemDataRole.UserRole)] = item.checkState(0) == Qt.CheckState.Checked
            self._count()

    def _set_items(self, items: list[QTreeWidgetItem], on: bool) -> None:
        for item in items:
            item.setCheckState(0, Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def _set_kind(self, on: bool) -> None:
        current = self.table.currentItem()
        if current is None:
            self.status.setText("Select a row first: its kind is the one accepted or rejected.")
            return
        kind = current.text(2)
        self._set_items([i for i in self._items() if i.text(2) == kind], on)

    def set_kind(self, kind: str, on: bool) -> None:
        """Accept (or reject) every candidate of a kind (one of app.redaction.candidates.KINDS)."""
        shown = KIND_NAMES.get(kind, kind)
        self._set_items([i for i in self._items() if i.text(2) == shown], on)

    def _set_selected(self, on: bool) -> None:
        self._set_items(self.table.selectedItems(), on)

    def _count(self) -> None:
        total = self.table.topLevelItemCount()
        self.counts.setText(f"{len(self.accepted_candidates())} of {total} accepted")

    def _show_item(self, item: QTreeWidgetItem, _column: int) -> None:
        c = self.candidate(item)
        if c is not None and c.page:  # the file's own objects have no page to show
            self.candidate_chosen.emit(self.doc.id, c.page, c.text)

    # -- names from the model ----------------------------------------------------------------------------
    def _ask_names(self) -> None:
        if self._busy:
            return
        self._set_busy("names")
        self.status.setText("Asking the model for the names in the document…")
        self.names_requested.emit(self.doc.id)

    def names_progress(self, event: Progress) -> None:
        if event.reading and event.total:
            self.status.setText(f"The model is reading the document: {event.done:,} of {event.total:,} tokens")
        elif not event.reading:
            self.status.setText(event.text)

    def names_ready(self, suggestions: Suggestions) -> None:
        self._set_busy("")
        known = {(n.text, n.kind) for n in self.names}
        self.names += [n for n in suggestions.names if (n.text, n.kind) not in known]
        dropped = (
            f"; {suggestions.dropped} more it named are not printed as written and are left out"
            if suggestions.dropped
            else ""
        )
        self.names_note = (
            f"The model ({suggestions.model}) named {len(suggestions.names)} printed in the document{dropped}."
        )
        self.find_candidates()
        self.status.setText(self.names_note + " Reading the pages again with them…")

    def names_failed(self, reason: str) -> None:
        self._set_busy("")
        self.names_note = f"No names from the model: {reason}"
        self.status.setText(self.names_note)

    # -- exporting -------------------------------------------------------------------------------------
    def export(self, path: Path | None = None, *, overwrite: bool = False) -> None:
        if self._busy or self.findings is None:
            return
        if path is None:
            stem = Path(self.doc.title).stem or "document"
            start = str(Path(self.doc.source_path).parent / f"{stem} (redacted).pdf")
            chosen, _ = QFileDialog.getSaveFileName(self, "Export redacted copy", start, "PDF (*.pdf)")
            if not chosen:
                return
            path = Path(chosen if chosen.lower().endswith(".pdf") else chosen + ".pdf")
            overwrite = path.exists()  # the save dialog has asked "Replace?"
        self._set_busy("exporting")
        self.status.setText("Writing the redacted copy…")
        job = ExportJob(
            self.findings.source,
            self.findings.found,
            self.accepted_candidates(),
            path,
            self.label_box.isChecked(),
            overwrite,
        )
        self._want_export.emit(job)

    def _on_exported(self, done: Redacted) -> None:
        self._set_busy("")
        self.saved = done
        self.status.setText(done.summary())
        if self.isVisible():
            QMessageBox.information(self, "Redacted copy saved", f"{done.summary()}\n\nRedaction log {done.log_id}.")

    # -- work state ------------------------------------------------------------------------------------
    def _on_progress(self, step: Step) -> None:
        self.progress.setRange(0, max(1, step.total))
        self.progress.setValue(step.done)
        self.status.setText(f"{step.text} {step.done} of {step.total}…" if step.total > 1 else f"{step.text}…")

    def _on_failed(self, reason: str) -> None:
        self._set_busy("")
        self.status.setText(reason)

    def _on_cancelled(self) -> None:
        self._set_busy("")
        self.status.setText("Stopped; nothing was written.")

    def cancel(self) -> None:
        if self._busy == "names":
            self.names_requested.emit(-1)  # the window stops the model
        else:
            self.worker.cancel()

    def _set_busy(self, what: str) -> None:
        self._busy = what
        idle = not what
        self.progress.setVisible(not idle)
        self.cancel_button.setVisible(not idle)
        if what:
            self.progress.setRange(0, 0)
        for widget in (self.find_button, self.names_button, self.export_button, self.terms):
            widget.setEnabled(idle)
        self.export_button.setEnabled(idle and self.findings is not None)

    @property
    def busy(self) -> str:
        return self._busy

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._busy and self._busy != "names":
            self.worker.cancel()  # nothing half-written: the copy is only kept once checked
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """End the worker's thread (its child process and connection closed there)."""
        if self.thread_.isRunning():
            self.thread_.quit()
            self.thread_.wait(10000)


def _found_by(c: Candidate) -> str:
    by = SOURCES.get(c.source, c.source)
    if c.source == MODEL:
        by = "the model"
    return by + (f" ({c.found_in})" if c.found_in else "")
