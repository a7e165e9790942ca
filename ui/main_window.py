"""The main window: library on the left, chat on the right, status bar below."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QThread, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QSplitter,
)

from app.chat import AnswerDelta, AnswerDone, ChatStarted, EngineStatus, PrefillUpdate
from app.context import AppContext
from app.conversations import Conversations
from app.models import STARTER_NOTICE
from ui.chat_panel import ChatPanel
from ui.library_panel import LibraryPanel
from ui.setup_menu import SetupMenu
from ui.work_menu import WorkMenu
from ui.workers import AskJob, ChatWorker, IngestProgress, IngestWorker, start_thread

FILE_FILTER = "Documents (*.pdf *.PDF);;All files (*)"


class MainWindow(QMainWindow):
    ask_job = Signal(object)
    ingest_job = Signal(list, object)

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.conversations = Conversations(ctx.db)
        self.conversation_id: int | None = None
        self._batch_added = 0
        self._batch_failures: list[str] = []
        self.setWindowTitle("Folio")
        self.resize(1200, 780)
        self.setAcceptDrops(True)

        self.library = LibraryPanel()
        self.chat = ChatPanel()
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.library)
        splitter.addWidget(self.chat)
        splitter.setSizes([340, 860])
        self.setCentralWidget(splitter)

        self.model_label = QLabel("model: …")
        self.demo_badge = QLabel("DEMO MODEL")
        self.demo_badge.setObjectName("demoBadge")
        self.demo_badge.setToolTip(STARTER_NOTICE)
        self.demo_badge.setStyleSheet("background:#b45309;color:white;padding:1px 6px;border-radius:3px;")
        server = ctx.settings.server_url.strip()
        self.offline_badge = QLabel(f"● server {server}" if server else "● offline")
        self.offline_badge.setToolTip(
            f"Documents and questions go to the model server at {server} (folio server off to stop)"
            if server
            else "Folio opens no network connections"
        )
        self.engine_label = QLabel("engine: idle")
        bar = self.statusBar()
        bar.addPermanentWidget(self.engine_label)
        bar.addPermanentWidget(self.model_label)
        bar.addPermanentWidget(self.demo_badge)
        bar.addPermanentWidget(self.offline_badge)

        self._build_menu()
        self.work_menu = WorkMenu(self)
        self.setup_menu = SetupMenu(self)  # Tools: model setup, settings, error log (issue 5b)
        self._start_workers()
        self.library.add_requested.connect(self.open_files)
        self.library.selection_changed.connect(self._on_selection)
        self.chat.send_requested.connect(self._ask)
        self.chat.stop_requested.connect(self.stop)
        self.refresh_library()
        self._show_model()

    # -- setup ---------------------------------------------------------------------------------
    def _build_menu(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        open_action = QAction("&Open…", self)
        open_action.setShortcut(QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self.open_files)
        file_menu.addAction(open_action)
        password_action = QAction("Open &encrypted PDF…", self)
        password_action.triggered.connect(self.open_encrypted)
        file_menu.addAction(password_action)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)

    def _start_workers(self) -> None:
        self.chat_worker = ChatWorker(self.ctx)
        self.chat_thread: QThread = start_thread(self.chat_worker, "folio-chat")
        self.ask_job.connect(self.chat_worker.ask)
        self.chat_worker.chat_event.connect(self._on_chat_event)
        self.chat_worker.failed.connect(self._on_chat_failed)
        self.chat_worker.finished.connect(self._on_chat_finished)

        self.ingest_worker = IngestWorker(self.ctx)
        self.ingest_thread: QThread = start_thread(self.ingest_worker, "folio-ingest")
        self.ingest_job.connect(self.ingest_worker.add)
        self.ingest_worker.progress.connect(self._on_ingest_progress)
        self.ingest_worker.added.connect(self._on_added)
        self.ingest_worker.rejected.connect(self._on_rejected)
        self.ingest_worker.finished.connect(self._on_ingest_finished)

    def _show_model(self) -> None:
        if self.ctx.settings.server_url.strip():  # answers come from the server's model, named on first answer
            self.model_label.setText("model: on the model server")
            self.demo_badge.setVisible(False)
            return
        rows = [r for r in self.ctx.models.all() if r.sha256 == self.ctx.settings.active_model]
        if rows:
            self.model_label.setText(f"model: {rows[0].label}")
            self.demo_badge.setVisible(rows[0].is_starter)
        else:
            self.model_label.setText("model: Gemma 3 270M starter")
            self.demo_badge.setVisible(True)

    # -- library -------------------------------------------------------------------------------
    def refresh_library(self, select: int | None = None) -> None:
        self.library.set_documents(self.ctx.library.all(), select=select)

    def open_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Add documents", str(Path.home()), FILE_FILTER)
        if paths:
            self.add_paths(paths)

    def open_encrypted(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Add an encrypted PDF", str(Path.home()), FILE_FILTER)
        if not path:
            return
        password, ok = QInputDialog.getText(self, "Password", "PDF password:", QLineEdit.EchoMode.Password)
        if ok:
            self.ingest_job.emit([path], password)

    def add_paths(self, paths: list[str], password: str | None = None) -> None:
        files: list[str] = []
        for p in paths:
            path = Path(p)
            files.extend(str(f) for f in sorted(path.rglob("*")) if f.is_file()) if path.is_dir() else files.append(p)
        if files:
            self.ingest_job.emit(files, password)

    def _on_ingest_progress(self, progress: IngestProgress) -> None:
        if progress.index == 0:
            self._batch_added = 0
            self._batch_failures = []
        self.statusBar().showMessage(f"Adding {progress.index + 1} of {progress.total}: {Path(progress.path).name}")

    def _on_ingest_finished(self) -> None:
        failures, added = self._batch_failures, self._batch_added
        if not failures:
            self.statusBar().showMessage(f"Added {added} document{'s' if added != 1 else ''}", 5000)
            return
        # One dialog per batch, not one per file: a dropped folder may hold many odd files.
        summary = failures[0] if len(failures) == 1 else f"{len(failures)} files could not be added"
        self.statusBar().showMessage(summary, 15000)
        QMessageBox.warning(self, "Could not add files", "\n".join(failures[:20]))

    def _on_added(self, doc_id: int, created: bool) -> None:
        self._batch_added += 1
        self.refresh_library(select=doc_id)
        if not created:
            self.statusBar().showMessage("That document is already in the library", 5000)

    def _on_rejected(self, path: str, reason: str) -> None:
        self._batch_failures.append(reason)
        self.statusBar().showMessage(reason, 10000)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            self.add_paths(paths)
            event.acceptProposedAction()

    # -- chat ----------------------------------------------------------------------------------
    def _on_selection(self, ids: list[int]) -> None:
        self.conversation_id = None
        if not ids:
            self.chat.header.setText("Select a document to ask about it.")
            self.chat.show_messages([])
            return
        titles = ", ".join(self.ctx.library.get(i).title for i in ids)
        self.chat.header.setText(f"Asking about: <b>{_escape(titles)}</b>")
        if len(ids) == 1:
            previous = self.conversations.all(document_id=ids[0])
            same_set = [c for c in previous if c.document_ids == ids]
            if same_set:
                self.conversation_id = same_set[0].id
                self.chat.show_messages(self.conversations.messages(self.conversation_id))
                return
        self.chat.show_messages([])

    def _ask(self, question: str) -> None:
        ids = self.library.selected_ids()
        if not ids and self.conversation_id is None:
            self.statusBar().showMessage("Select a document first", 5000)
            return
        self._set_busy(True)
        self.chat.begin_answer(question)
        self.ask_job.emit(AskJob(ids, question, self.conversation_id))

    def stop(self) -> None:
        self.chat_worker.cancel()
        self.engine_label.setText("engine: stopping…")

    def _set_busy(self, busy: bool) -> None:
        self.chat.set_busy(busy)
        if not busy:
            self.engine_label.setText("engine: idle")

    def _on_chat_event(self, event: object) -> None:
        if isinstance(event, ChatStarted):
            self.conversation_id = event.conversation_id
            self.model_label.setText(f"model: {event.model_label}")
            self.demo_badge.setVisible(event.demo_model)
        elif isinstance(event, EngineStatus):
            self.engine_label.setText(f"engine: {event.text}")
        elif isinstance(event, PrefillUpdate):
            self.engine_label.setText(f"engine: reading {event.done:,}/{event.total:,}")
            self.chat.set_prefill(event.done, event.total, event.eta_s)
        elif isinstance(event, AnswerDelta):
            self.engine_label.setText("engine: answering")
            self.chat.append(event.channel, event.text)
        elif isinstance(event, AnswerDone):
            self.chat.finish_answer(event.message)

    def _on_chat_finished(self) -> None:
        self._set_busy(False)

    def _on_chat_failed(self, reason: str) -> None:
        self.chat.fail_answer(reason)
        self.statusBar().showMessage(reason, 10000)

    # -- shutdown ------------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        self.chat_worker.cancel()
        for worker, thread in ((self.chat_worker, self.chat_thread), (self.ingest_worker, self.ingest_thread)):
            # Run the worker's cleanup on its own thread, then stop the thread.
            from PySide6.QtCore import QMetaObject

            QMetaObject.invokeMethod(worker, "shutdown", Qt.ConnectionType.BlockingQueuedConnection)
            thread.quit()
            thread.wait(10000)
        super().closeEvent(event)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
