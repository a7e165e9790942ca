"""The Work menu: search, extraction tables and templates, playbook reviews, comparing two versions,
checking contracts, exports and the audit log.

It only uses the Qt-free services in app/ (Search, ExtractionService tables, TemplateStore,
Exporter, AuditLog). What belongs to the window (starting a run on its engine, opening a page, a
past conversation or a table cell's evidence in its viewer) it asks for with signals the window
connects; it knows nothing of the window's insides.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast

from PySide6.QtCore import QObject, QRect, QSize, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QFileDialog, QInputDialog, QMainWindow, QMessageBox, QVBoxLayout, QWidget

from app.citations.passages import query_terms
from app.context import AppContext
from app.errors import USER_ERRORS, one_line
from app.export import Exporter, safe_filename
from app.extraction.cells import VERDICT_TEXT
from app.extraction.review import review_cell
from app.extraction.runner import load_evidence, load_run_info, load_table
from app.extraction.templates import TemplateStore
from app.store.search import Search
from ui.check_view import CheckView
from ui.extraction_table import ExtractionTableView
from ui.playbook_view import PlaybookReviewView
from ui.search_panel import SearchPanel
from ui.sizing import on_screen
from ui.template_editor import TemplateEditor


def _dialog(parent: QWidget, title: str, widget: QWidget) -> QDialog:
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    dialog.resize(on_screen(dialog, QSize(1000, 600)))
    layout = QVBoxLayout(dialog)
    layout.addWidget(widget)
    return dialog


class WorkMenu(QObject):
    extraction_requested = Signal()  # run a template on the selected documents
    review_requested = Signal()  # review the selected document against a playbook (on the window's engine)
    compare_requested = Signal()  # compare the two selected documents
    check_requested = Signal()  # the window answers with check(the selected documents)
    page_requested = Signal(int, int, object)  # document id, page, words to mark (tuple[str, ...])
    message_requested = Signal(int, int)  # conversation id, message id
    evidence_requested = Signal(object)  # app.extraction.runner.Evidence
    conversation_export_requested = Signal()  # the window answers with export_conversation(its id)

    def __init__(self, window: QMainWindow, ctx: AppContext) -> None:
        # Owned by the window (Qt parent): no Python reference back, so a closed window is freed.
        super().__init__(window)
        self.ctx = ctx
        menu = window.menuBar().addMenu("&Work")
        self.actions: dict[str, QAction] = {}
        for key, text, shortcut, slot in (
            ("search", "&Search…", "Ctrl+Shift+F", self.search),
            ("run_extraction", "&Run extraction on selected documents…", "", self.extraction_requested),
            ("table", "Extraction ta&ble…", "", self.show_table),
            ("review", "Review against &playbook…", "", self.review_requested),
            ("reviews", "Playbook revie&ws…", "", self.show_reviews),
            ("compare", "&Compare the two selected documents…", "Ctrl+Shift+D", self.compare_requested),
            ("check", "Chec&k contract (terms, references, key dates)…", "Ctrl+Shift+K", self.check_requested),
            ("templates", "&Templates…", "", self.edit_template),
            ("export_conversation", "Export co&nversation…", "", self.conversation_export_requested),
            ("verify_audit", "&Verify audit log", "", self.verify_audit),
            ("export_audit", "Export &audit log…", "", self.export_audit),
        ):
            action = QAction(text, window)
            if shortcut:
                action.setShortcut(QKeySequence(shortcut))
            action.triggered.connect(slot)
            menu.addAction(action)
            self.actions[key] = action
        self.dialogs: list[QDialog] = []  # kept alive while open
        # Where on the screen a view that opens pages should leave the window's document viewer in sight
        # (global coordinates), given by the window; None: the view opens where dialogs open.
        self.keep_clear: Callable[[], QRect] | None = None

    @property
    def window(self) -> QMainWindow:
        return cast(QMainWindow, self.parent())

    def _say(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 10000)

    def _warn(self, text: str) -> None:
        QMessageBox.warning(self.window, "Folio", text)

    def search(self) -> SearchPanel:
        panel = SearchPanel(Search(self.ctx.db), matter_id=self.ctx.matter_id)
        panel.open_page.connect(lambda doc, page: self.page_requested.emit(doc, page, query_terms(panel.box.text())))
        panel.open_message.connect(self.message_requested)
        self._show(_dialog(self.window, "Search", panel))
        return panel

    def templates(self) -> TemplateStore:
        return TemplateStore.for_config(self.ctx.paths.config_dir)

    def _show(self, dialog: QDialog) -> None:
        self.dialogs.append(dialog)
        dialog.finished.connect(lambda _r: self.dialogs.remove(dialog))
        dialog.show()

    def show_table(self, run_id: int | None = None) -> ExtractionTableView | None:
        if not run_id:
            from app.store.extraction import ExtractionStore

            ids = ExtractionStore(self.ctx.db).run_ids_in(self.ctx.matter_id)  # the current matter's tables
            if not ids:
                self._say("No extraction runs in this matter yet: Work > Run extraction on selected documents…")
                return None
            labels = [f"{i}: {load_run_info(self.ctx, i).template.name}" for i in ids]
            choice, ok = QInputDialog.getItem(self.window, "Extraction table", "Run", labels, 0, False)
            if not ok:
                return None
            run_id = int(choice.split(":")[0])
        view = ExtractionTableView()
        view.set_table(load_table(self.ctx, run_id))
        self.connect_table(view)
        self._show(_dialog(self.window, f"Extraction run {run_id}", view))
        return view

    def show_reviews(self, review_id: int | None = None) -> PlaybookReviewView | None:
        """An earlier playbook review of the current matter, reopened to read, decide and export."""
        from app.playbook.review import load_review, review_summaries

        if not review_id:
            listed = review_summaries(self.ctx)  # the newest first; only the one chosen is read whole
            if not listed:
                self._say("No playbook reviews in this matter yet: Work > Review against playbook…")
                return None
            labels = [f"{r.id}: {r.title} against {r.playbook_name} ({r.when}), {r.short} of {r.findings} rules "
                      "not met or missing" for r in listed]  # fmt: skip
            choice, ok = QInputDialog.getItem(self.window, "Playbook reviews", "Review", labels, 0, False)
            if not ok:
                return None
            review_id = int(choice.split(":")[0])
        try:
            review = load_review(self.ctx, review_id)
        except USER_ERRORS as exc:
            self._warn(one_line(exc))
            return None
        view = PlaybookReviewView(self.ctx, review.playbook, review.title, self.window)
        self.connect_review(view)
        view.show_review(review)
        self._show(view)
        if self.keep_clear is not None:
            view.place_beside(self.keep_clear())
        return view

    def connect_review(self, view: PlaybookReviewView) -> None:
        """A finding opens its clause in the viewer the way an extraction table's cell does."""
        view.evidence_requested.connect(self.open_evidence)

    def connect_table(self, view: ExtractionTableView) -> None:
        """A table's cells open their passage in the viewer, and its review buttons are recorded."""
        view.evidence_requested.connect(self.open_evidence)
        view.review_requested.connect(
            lambda run, doc, key, decision, value: self.review(view, run, doc, key, decision, value)
        )

    def review(
        self, view: ExtractionTableView, run_id: int, document_id: int, field_key: str, decision: str, value: str
    ) -> None:
        """Store a reviewer's decision beside the model's answer (audited) and show the table again."""
        try:
            review_cell(self.ctx, run_id, document_id, field_key, decision, value)
        except USER_ERRORS as exc:
            self._warn(one_line(exc))
            return
        shown = view.model.table
        view.set_table(load_table(self.ctx, run_id, [d.id for d in shown.documents] if shown else None))
        self._say(f"{field_key}: {decision}" + (f" ({value})" if value else ""))

    def open_evidence(self, run_id: int, document_id: int, field_key: str) -> None:
        """A table cell: its page in the viewer with the quote marked, and the quote in the status bar."""
        try:
            evidence = load_evidence(self.ctx, run_id, document_id, field_key)
        except USER_ERRORS as exc:
            self._say(one_line(exc))
            return
        where = f"p. {evidence.label or evidence.page}" if evidence.page else "no page"
        check = VERDICT_TEXT.get(evidence.verdict, "not found in the document")
        self.evidence_requested.emit(evidence)
        self._say(f'{evidence.title}, {where}: "{evidence.quote}" ({check})')

    def check(self, document_ids: list[int]) -> CheckView | None:
        """Defined terms, cross-references and key dates of these documents (no model, on a thread of
        its own); a reference clicked there opens its clause in the viewer."""
        if not document_ids:
            self._say("Select the documents to check")
            return None
        view = CheckView(self.ctx, document_ids, self.window)
        view.page_requested.connect(self.page_requested)
        self._show(view)
        view.start()
        return view

    def edit_template(self, key: str | None = None) -> TemplateEditor | None:
        store = TemplateStore.for_config(self.ctx.paths.config_dir)
        if key is None:
            keys = [t.key for t in store.all()]
            key, ok = QInputDialog.getItem(self.window, "Templates", "Edit (built-ins open as a copy)", keys, 0, False)
            if not ok:
                return None
        editor = TemplateEditor(store, store.get(key), self.window)
        self._show(editor)
        return editor

    def export_conversation(self, conversation_id: int | None) -> None:
        if conversation_id is None:
            self._say("Open a conversation first")
            return
        exporter = Exporter(self.ctx)
        name = exporter.default_name(conversation_id=conversation_id, fmt="md")
        path, _ = QFileDialog.getSaveFileName(self.window, "Export conversation", name, "Markdown (*.md);;PDF (*.pdf)")
        if path:
            # The save dialog has already asked before replacing an existing file.
            self._run(lambda: exporter.conversation(conversation_id, Path(path), overwrite=True).path)

    def verify_audit(self) -> None:
        result = self.ctx.audit.verify()
        if result.ok:
            QMessageBox.information(
                self.window, "Audit log", f"The audit log is intact: {result.entries} entries.\nHead {result.head_hash}"
            )
        else:
            self._warn(f"The audit log check FAILED: {result.problem}")

    def export_audit(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.window,
            "Export audit log",
            safe_filename("Folio audit log", "jsonl"),
            "JSON Lines (*.jsonl);;CSV (*.csv)",
        )
        if path:
            from app.export import Exporter

            fmt = "csv" if path.lower().endswith(".csv") else "jsonl"
            # The save dialog has already asked before replacing a file.
            self._run(lambda: Exporter(self.ctx).audit_log(Path(path), fmt=fmt, overwrite=True).path)

    def _run(self, job: Callable[[], Path]) -> None:
        try:
            written = job()
        except USER_ERRORS as exc:
            self._warn(one_line(exc))
            return
        except OSError as exc:
            self._warn(f"could not write the file ({exc.strerror})")
            return
        self._say(f"wrote {written}")
