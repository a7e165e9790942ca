"""The main window: library and conversations on the left, the document viewer in the middle, chat
on the right, status bar below. It wires panels to the workers and renders their events."""

from __future__ import annotations

import contextlib
import dataclasses
from collections import deque
from itertools import pairwise
from pathlib import Path

from PySide6.QtCore import QByteArray, QMetaObject, QPoint, QRect, QSize, Qt, QThread, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QInputDialog,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QSplitter,
    QWidget,
)

from app.caches import ReadState
from app.chat import AnswerDelta, AnswerDone, ChatStarted
from app.citations.targets import PASSAGE, CitationTarget, ClaimTarget
from app.clock import today_iso
from app.compare.redline import Redline
from app.compare.summary import Summary
from app.context import AppContext
from app.engine.progress import Progress
from app.engine.session import Session
from app.errors import USER_ERRORS, NotFound, one_line
from app.extraction.runner import Evidence, RunFinished
from app.passes.estimate import ReadingEstimates
from app.reading import ReadAheadStatus, reading_states
from app.store.conversations import Conversations, MessageRow
from app.store.library import DocumentRow, ListedDocument
from app.store.matters import Matters
from app.store.recent import RecentDocuments
from app.store.search import SearchHit
from ui.background import start_worker_thread
from ui.chat_panel import ChatPanel
from ui.compare_view import CompareView
from ui.conversation_state import ConversationState, Job
from ui.conversations_panel import ConversationsPanel
from ui.extraction_runner import ExtractionRunDialog
from ui.library_panel import LibraryPanel
from ui.matter_menu import MatterMenu
from ui.outside_changes import OutsideChanges
from ui.playbook_view import PlaybookReviewView
from ui.read_ahead import ReadAheadRunner
from ui.redaction_dialog import RedactionDialog
from ui.setup_menu import SetupMenu
from ui.shortcuts_dialog import ShortcutsDialog
from ui.sizing import available, place_on_screen
from ui.status_bar import StatusWidgets
from ui.strategy_dialog import ReadingChoice, StrategyDialog
from ui.viewer_panel import DocumentViewer
from ui.window_state import FIRST_DOCUMENT_HINT, WindowState
from ui.wording import shortened, without_advice
from ui.work_menu import WorkMenu
from ui.workers import (
    NAMES_STOPPED,
    AskJob,
    CompareJob,
    EngineWorker,
    ExtractJob,
    IngestProgress,
    IngestWorker,
    ReviewJob,
    ReviewStopped,
    SummaryUnavailable,
)

# Every kind of file Folio reads (ingest/sniff.py tells them by content; these are their usual names):
# PDF, Word, plain text and Markdown, e-mail, images, video. Each in both cases: GTK's file dialog
# matches patterns case-sensitively, and scans and files from Windows often end in .PDF or .JPG.
_READ_EXTENSIONS = (
    "pdf", "docx", "txt", "md", "markdown", "eml", "msg",
    "png", "jpg", "jpeg", "tif", "tiff", "webp", "bmp",
    "mp4", "mov", "avi", "mkv", "webm",
)  # fmt: skip
FILE_FILTER = "Documents (" + " ".join(f"*.{e} *.{e.upper()}" for e in _READ_EXTENSIONS) + ");;All files (*)"
DEFAULT_SIZE = QSize(1400, 860)  # where the screen has room; smaller screens get 92% of theirs


class MainWindow(QMainWindow):
    ask_job = Signal(object)
    extract_job = Signal(object)
    compare_job = Signal(object)
    review_job = Signal(object)
    names_job = Signal(int)
    ingest_job = Signal(list, object)
    matter_job = Signal(int)  # to the workers: the matter the window works in from now on

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.ctx = ctx
        # The matter `folio matter use` (or this window, last time) chose; one since destroyed: Unfiled.
        ctx.use_matter(None, strict=False)
        # One engine for the window: questions, extraction runs and model setup share it.
        self.session = Session.for_context(ctx)
        self.conversations = Conversations(ctx.db)
        self.recent = RecentDocuments(ctx.db)
        self.talk = ConversationState()
        self.extraction: ExtractionRunDialog | None = None
        self.comparison: CompareView | None = None
        self.playbook_review: PlaybookReviewView | None = None  # the review the engine is running, or ran last
        self.redaction: RedactionDialog | None = None
        self._job: Job | None = None  # while the engine works
        # A question refused as too big for the context, offered other readings once the engine is free.
        self._offer: tuple[AskJob, str, ReadingEstimates | None] | None = None
        # A matter made current outside the window while the window was busy: followed when the work ends.
        self._chosen_elsewhere: str | None = None
        self._closed = False
        self._reading_now: tuple[int, ReadState] | None = None  # the document read ahead now, how far
        self._planned: frozenset[int] = frozenset()  # the documents read-ahead's budget holds
        self._batches: deque[bool] = deque()  # per queued ingest batch: did the user start it here?
        self._batch_added = 0
        self._batch_failures: list[str] = []
        self.setWindowTitle("Folio")
        self.setAcceptDrops(True)
        self.state = WindowState.load(ctx.paths.config_dir)
        self._fitted_out: set[str] = set()  # side panels hidden because this screen is too small

        self.library = LibraryPanel(ctx)
        self.conversation_list = ConversationsPanel(self.conversations)
        self.viewer = DocumentViewer(ctx)
        self.chat = ChatPanel()
        left = QSplitter(Qt.Orientation.Vertical)
        left.setObjectName("libraryPanel")
        left.addWidget(self.library)
        left.addWidget(self.conversation_list)
        left.setSizes([560, 220])
        left.setChildrenCollapsible(False)
        self.left = left
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.viewer)
        self.splitter.addWidget(self.chat)
        self.splitter.setChildrenCollapsible(False)  # a panel is hidden from the View menu, never squeezed to nothing
        self.setCentralWidget(self.splitter)

        self.status = StatusWidgets(self.statusBar(), ctx)
        self.engine_label = self.status.engine_label
        self.model_label = self.status.model_label
        self.demo_badge = self.status.demo_badge
        self.offline_badge = self.status.offline_badge

        self._build_menu()
        self._start_workers()
        self.matter_menu = MatterMenu(self, ctx, self.session, self.ingest_thread)
        self.work_menu = WorkMenu(self, ctx)
        self.setup_menu = SetupMenu(self, ctx, self.session)  # Tools: model setup, settings, error log
        self._build_help_menu()
        self._connect_menus()
        self.outside = OutsideChanges(ctx, self)  # `folio matter use|rename|new`, files filed from a terminal
        self.outside.matter_chosen.connect(self._on_matter_chosen_elsewhere)
        self.outside.matters_changed.connect(self._on_matters_changed_elsewhere)
        self.outside.documents_changed.connect(self._on_documents_filed_elsewhere)
        self.library.matters.matter_chosen.connect(self._on_matter_picked)
        self.library.add_requested.connect(self.open_files)
        self.library.selection_changed.connect(self._on_selection)
        self.library.current_changed.connect(self._on_current_document)
        self.viewer.document_opened.connect(self.library.select)
        self.viewer.marks_changed.connect(self._marks_changed)
        self.library.cancel_requested.connect(self.ingest_worker.cancel)
        self.library.hit_activated.connect(self.open_hit)
        self.conversation_list.conversation_chosen.connect(self._on_conversation_chosen)
        self.chat.send_requested.connect(self._ask)
        self.chat.stop_requested.connect(self.stop)
        self.chat.regenerate_requested.connect(self.regenerate)
        self.chat.citation_clicked.connect(self.open_citation)
        self.chat.transcript.claim_clicked.connect(self.open_claim)
        self.chat.transcript.copied.connect(self._on_copied)
        self.chat.hint_dismissed.connect(self._hint_dismissed)
        self._set_tab_order()
        self._scope(ctx.matter_id)
        self.refresh_library()
        self._place()

    # -- setup ---------------------------------------------------------------------------------
    def _build_menu(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        open_action = QAction("&Open…", self)
        open_action.setShortcut(QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self.open_files)
        file_menu.addAction(open_action)
        folder_action = QAction("Open &folder…", self)
        folder_action.triggered.connect(self.open_folder)
        file_menu.addAction(folder_action)
        password_action = QAction("Open &encrypted PDF…", self)
        password_action.triggered.connect(self.open_encrypted)
        file_menu.addAction(password_action)
        self.recent_menu = QMenu("&Recent documents", self)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        redact_action = QAction("Export re&dacted copy…", self)
        redact_action.setToolTip("A new PDF of the document with names, numbers and passages removed for real")
        redact_action.triggered.connect(lambda: self.redact_current())
        file_menu.addAction(redact_action)
        self.redact_action = redact_action
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        # Not every platform theme has a Quit key (the generic Unix one has none): Ctrl+Q there.
        quit_keys = QKeySequence.keyBindings(QKeySequence.StandardKey.Quit) or [QKeySequence("Ctrl+Q")]
        quit_action.setShortcuts(quit_keys)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        edit_menu = self.menuBar().addMenu("&Edit")
        find_action = QAction("&Find in documents", self)
        find_action.setShortcut(QKeySequence.StandardKey.Find)
        find_action.triggered.connect(self.library.focus_search)
        edit_menu.addAction(find_action)
        self.find_action = find_action
        edit_menu.addSeparator()
        edit_menu.addAction(self.viewer.mark_action)
        edit_menu.addAction(self.viewer.clear_marks_action)
        self._build_view_menu()

    def _build_view_menu(self) -> None:
        """Show or hide the side panels (on a small screen the window starts with what fits), and move
        the keyboard to a panel: every part of the window is a shortcut away."""
        view_menu = self.menuBar().addMenu("&View")
        self.panel_actions: dict[str, QAction] = {}
        for key, text, shortcut, panel in (
            ("library", "&Library and conversations", "Ctrl+Shift+L", self.left),
            ("document", "&Document", "Ctrl+Shift+V", self.viewer),
        ):
            action = QAction(text, self)
            action.setCheckable(True)
            action.setChecked(True)
            action.setShortcut(QKeySequence(shortcut))
            action.toggled.connect(panel.setVisible)
            action.toggled.connect(lambda _on, key=key: self._fitted_out.discard(key))
            view_menu.addAction(action)
            self.panel_actions[key] = action
        view_menu.addSeparator()
        for text, shortcut, go in (
            ("Go to the li&brary", "Ctrl+1", self._go_library),
            ("Go to the c&onversations", "Ctrl+2", self._go_conversations),
            ("Go to the &page", "Ctrl+3", self._go_document),
            ("Go to the &answers", "Ctrl+4", self._go_transcript),
            ("Go to the &question", "Ctrl+5", self._go_question),
        ):
            action = QAction(text, self)
            action.setShortcut(QKeySequence(shortcut))
            action.triggered.connect(go)
            view_menu.addAction(action)

    def _build_help_menu(self) -> None:
        help_menu = self.menuBar().addMenu("&Help")
        keys = QAction("&Keyboard shortcuts", self)
        keys.setShortcuts([QKeySequence(QKeySequence.StandardKey.HelpContents), QKeySequence("Ctrl+/")])
        keys.triggered.connect(self.show_shortcuts)
        help_menu.addAction(keys)
        self.shortcuts_action = keys

    def show_shortcuts(self) -> ShortcutsDialog:
        dialog = ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def _show_panel(self, key: str) -> None:
        self.panel_actions[key].setChecked(True)

    def _go_library(self) -> None:
        self._show_panel("library")
        self.library.list.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _go_conversations(self) -> None:
        self._show_panel("library")
        self.conversation_list.list.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _go_document(self) -> None:
        self._show_panel("document")
        self.viewer.focus_page()

    def _go_transcript(self) -> None:
        self.chat.transcript.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _go_question(self) -> None:
        self.chat.input.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _set_tab_order(self) -> None:
        """Tab follows the layout: library, conversations, the viewer's controls and page, the chat,
        then the status bar's button (Qt's default is the order the widgets happened to be made in)."""
        chain = [
            *self.library.tab_order(),
            *self.conversation_list.tab_order(),
            *self.viewer.tab_order(),
            *self.chat.tab_order(),
            self.status.reading_pause,
        ]
        for first, second in pairwise(chain):
            QWidget.setTabOrder(first, second)

    # -- size and place --------------------------------------------------------------------------
    def _place(self) -> None:
        """Where the window was last time (Qt puts it back on a screen that is still there, within
        it), else a share of the screen it opens on; panels that do not fit side by side on a small
        screen start hidden (View brings them back)."""
        if not (self.state.panels and self.splitter.restoreState(QByteArray(self.state.panels))):
            self.splitter.setSizes([22, 40, 38])  # shares of the width
        for key, action in self.panel_actions.items():
            action.setChecked(key not in self.state.hidden)
        room = available(self).width()
        for key in ("library", "document"):  # the library goes first: the document is what is asked about
            if self._panels_width() <= room:
                break
            self.panel_actions[key].setChecked(False)
            self._fitted_out.add(key)  # hidden for this screen, not by the user: not remembered
        # After the panels: the window's minimum, which a restored size must respect, depends on them.
        restored = bool(self.state.geometry) and self.restoreGeometry(QByteArray(self.state.geometry))
        if not restored:
            place_on_screen(self, DEFAULT_SIZE)

    def _panels_width(self) -> int:
        """The narrowest the shown panels can be side by side (the window's own minimum lags behind a
        panel just hidden until the next layout pass)."""
        panels = [p for p in (self.left, self.viewer, self.chat) if not p.isHidden()]
        handles = self.splitter.handleWidth() * (len(panels) - 1)
        widest = max(self.statusBar().minimumSizeHint().width(), self.menuBar().minimumSizeHint().width())
        return max(sum(p.minimumSizeHint().width() for p in panels) + handles, widest)

    def _save_place(self) -> None:
        self.state.geometry = bytes(self.saveGeometry().data())
        self.state.panels = bytes(self.splitter.saveState().data())
        hidden = [key for key, action in self.panel_actions.items() if not action.isChecked()]
        self.state.hidden = [key for key in hidden if key not in self._fitted_out]
        with contextlib.suppress(OSError):  # a read-only config folder costs the place next time, nothing else
            self.state.save(self.ctx.paths.config_dir)

    # -- the first-document hint -----------------------------------------------------------------
    def _show_hint(self, documents: int) -> None:
        """Once the library has a document and no question was asked yet: what to do next."""
        seen = FIRST_DOCUMENT_HINT in self.state.hints_seen
        self.chat.hint.setVisible(documents > 0 and not seen and not self.conversations.all())

    def _hint_dismissed(self) -> None:
        self.state.hints_seen.append(FIRST_DOCUMENT_HINT)
        self._save_place()

    def _start_workers(self) -> None:
        # Worker signals go to methods of this window only (see ui/workers.py).
        self.engine_worker = EngineWorker(self.ctx, self.session)
        self.engine_thread: QThread = start_worker_thread(self.engine_worker, "folio-engine-jobs", cleanup="")
        self.ask_job.connect(self.engine_worker.ask)
        self.extract_job.connect(self.engine_worker.extract)
        self.compare_job.connect(self.engine_worker.compare)
        self.review_job.connect(self.engine_worker.review)
        self.engine_worker.review_event.connect(self._on_review_event)
        self.names_job.connect(self.engine_worker.names)
        self.engine_worker.compare_event.connect(self._on_compare_event)
        self.engine_worker.names_event.connect(self._on_names_event)
        self.engine_worker.chat_event.connect(self._on_chat_event)
        self.engine_worker.extraction_event.connect(self._on_extraction_event)
        self.engine_worker.failed.connect(self._on_chat_failed)
        self.engine_worker.does_not_fit.connect(self._on_does_not_fit)
        self.engine_worker.finished.connect(self._on_chat_finished)

        self.ingest_worker = IngestWorker(self.ctx)
        self.ingest_thread: QThread = start_worker_thread(self.ingest_worker, "folio-ingest", cleanup="")
        self.ingest_job.connect(self.ingest_worker.add)
        self.matter_job.connect(self.engine_worker.use_matter)
        self.matter_job.connect(self.ingest_worker.use_matter)
        self.ingest_worker.progress.connect(self._on_ingest_progress)
        self.ingest_worker.added.connect(self._on_added)
        self.ingest_worker.rejected.connect(self._on_rejected)
        self.ingest_worker.finished.connect(self._on_ingest_finished)

        # Read-ahead shares the session: a question cancels its read between chunks, never a second engine.
        self.read_ahead = ReadAheadRunner(self.ctx, self.session)
        self.read_ahead.status.connect(self._on_read_ahead)
        self.status.reading_pause.clicked.connect(self._toggle_read_ahead)
        self.read_ahead.start()

    # -- read-ahead ------------------------------------------------------------------------------
    def _on_read_ahead(self, status: ReadAheadStatus) -> None:
        if self._closed:
            return  # a status queued before the window closed: its database is closed too
        active = status.state in ("reading", "waiting")
        progress = status.progress
        if status.state == "reading" and status.document_id is not None and progress is not None and progress.reading:
            state = ReadState("reading", progress.done, progress.total, progress.eta_s)
            self._reading_now = (status.document_id, state)
        elif status.state != "reading":
            self._reading_now = None
        if status.plan is not None:  # only what the budget holds shows "queued", never the whole matter
            self._planned = frozenset(status.plan.document_ids)
        # Nothing to say once everything is read (each library item says "ready"): the status bar's
        # message needs the room.
        left_out = status.plan is not None and status.plan.left_out > 0  # worth saying: the cache is full
        quiet = status.state == "off" or (status.state == "idle" and not status.reason and not left_out)
        self.status.show_read_ahead(
            "" if quiet else f"reading ahead: {status.words()}",
            active=active,
            paused=status.state == "paused",
        )
        self._show_reading_states()

    def _toggle_read_ahead(self) -> None:
        self.read_ahead.toggle_pause()

    def _reading_words(self, docs: list[DocumentRow]) -> dict[int, str]:
        states = reading_states(self.ctx, [d.sha256 for d in docs])
        if states is None:
            return {}
        words = {d.id: state.words() for d, state in zip(docs, states, strict=True)}
        reader = self.read_ahead.reader
        if self.ctx.settings.read_ahead and reader.why_off() is None and not reader.paused:
            queued = {
                d.id
                for d, state in zip(docs, states, strict=True)
                if state.kind in ("unread", "partial") and d.id in self._planned
            }
            for doc_id in queued:
                words[doc_id] = "queued" if words[doc_id] == "not read yet" else f"queued · {words[doc_id]}"
        if self._reading_now is not None and self._reading_now[0] in words:
            words[self._reading_now[0]] = self._reading_now[1].words()
        return words

    def _show_reading_states(self) -> None:
        # Only the rows the list has fetched: a status comes with every chunk read, and a matter may
        # hold thousands of documents.
        self.library.show_reading(self._reading_words(self.library.listed_documents()))

    # -- matters -------------------------------------------------------------------------------
    def use_matter(self, matter_id: int) -> None:
        """Work in this matter: the library, its conversations, search, extraction tables, files added
        and read-ahead are its alone. Kept in settings.toml, as `folio matter use` keeps it."""
        if matter_id != self.ctx.matter_id:
            if self.matter_menu.purging:
                self.statusBar().showMessage("A matter is being destroyed; switch when it is done", 5000)
                matter_id = self.ctx.matter_id
            elif not self._engine_free():
                matter_id = self.ctx.matter_id
        switched = matter_id != self.ctx.matter_id
        if switched:
            try:
                self.ctx.make_current(Matters(self.ctx.db).by_id(matter_id))
            except NotFound:  # destroyed from the command line meanwhile
                self.statusBar().showMessage("That matter no longer exists", 5000)
                matter_id, switched = self.ctx.matter_id, False
        if switched:
            self.viewer.clear()  # a document of the matter left
        self._scope(matter_id)
        if switched:
            self.refresh_library()
            self.library.run_search()

    def _on_matter_picked(self, matter_id: int) -> None:
        """A matter chosen in the window (the switcher, Matter > New): it wins over one chosen outside
        while the window was busy, which is then not followed when the work ends, even when this choice
        is refused for the same work (the user's last word was here, not in the terminal)."""
        if matter_id != self.ctx.matter_id:
            self._chosen_elsewhere = None
        self.use_matter(matter_id)

    def _scope(self, matter_id: int) -> None:
        """Point every panel and worker at the matter, and show the matters with it current."""
        self.library.matters.set_matters(Matters(self.ctx.db).all(), matter_id, today_iso())
        self.library.matter_id = matter_id
        self.conversation_list.matter_id = matter_id
        self.matter_job.emit(matter_id)
        self.read_ahead.use_matter(matter_id)

    def _on_matter_chosen_elsewhere(self, name: str) -> None:
        """`folio matter use NAME` while the window is open: the current matter is one setting, shared, so
        the window follows when it is free (use_matter says why not), and says so; busy, it follows once
        the work is done (the latest choice outside, unless one is made in the window meanwhile)."""
        self._chosen_elsewhere = None
        matters = Matters(self.ctx.db)
        try:
            matters.by_id(self.ctx.matter_id)
        except NotFound:  # destroyed elsewhere (`folio matter purge`): Unfiled, said in the status bar
            self.matter_menu.current()
            return
        matter = matters.find(name) if name else matters.unfiled()
        if matter is None or matter.id == self.ctx.matter_id:
            return  # gone already, or the current one renamed (its new name shows with the other matters)
        self.use_matter(matter.id)
        if self.ctx.matter_id == matter.id:
            self.statusBar().showMessage(f"Now in matter {matter.name!r}, made current outside this window", 8000)
        elif self._job is not None or self.matter_menu.purging:
            # Busy here: the window stays where the work is, and follows once it is done.
            self._chosen_elsewhere = name
            self.statusBar().showMessage(
                f"{matter.name!r} was made current outside this window; the window switches to it when this "
                "work is done",
                15000,
            )

    def _follow_matter_chosen_elsewhere(self) -> None:
        """The work that kept the window in its matter is done (and no choice it leads to is open): the
        window now goes to the matter chosen outside meanwhile, if it still exists."""
        if self._job is None and not self.matter_menu.purging and self._chosen_elsewhere is not None:
            self._on_matter_chosen_elsewhere(self._chosen_elsewhere)

    def _on_matters_changed_elsewhere(self) -> None:
        """A matter opened, renamed, closed or destroyed outside the window: the switcher shows them as
        they are now; a current one destroyed leaves the window in Unfiled, said in the status bar."""
        self.matter_menu.current()
        self._scope(self.ctx.matter_id)

    def _on_documents_filed_elsewhere(self) -> None:
        # Quiet: the rows fetched and the selection stay, and the conversation on screen (or an answer
        # that could not be given) is not reopened under the user.
        self.refresh_library(quiet=True)
        self.read_ahead.poke()

    def destroy_matter(self) -> None:
        """Matter > Destroy matter…, once nothing else is under way in the window."""
        if self._batches:
            self.statusBar().showMessage("Files are being added; destroy the matter when they are in", 5000)
        elif self._engine_free() and not self.matter_menu.purging:
            self.matter_menu.destroy()

    def _on_matter_destroyed(self) -> None:
        self.viewer.clear()
        self._scope(self.ctx.matter_id)  # Unfiled, when the destroyed matter was the current one
        self.refresh_library()
        self.library.run_search()
        self._follow_matter_chosen_elsewhere()

    # -- library -------------------------------------------------------------------------------
    def refresh_library(self, select: int | None = None, *, quiet: bool = False) -> None:
        """List the current matter's documents, a page at a time as the list scrolls (see
        ui/library_model.py), keeping the rows fetched and the selection when the matter is the same.
        `quiet`: the panels that follow the selection are told only when it changed."""
        matter_id, library = self.ctx.matter_id, self.ctx.library

        def pages(after: int, limit: int | None, through: int | None) -> list[ListedDocument]:
            return library.listing(matter_id, after=after, limit=limit, through=through)

        self.library.show_documents(pages, self._reading_words, select=select, key=matter_id, quiet=quiet)
        self._show_hint(len(self.library.listed_documents()))

    def open_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Add documents", str(Path.home()), FILE_FILTER)
        if paths:
            self.add_paths(paths)

    def open_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add every document in a folder", str(Path.home()))
        if folder:
            self.add_paths([folder])

    def open_encrypted(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Add an encrypted PDF", str(Path.home()), FILE_FILTER)
        if not path:
            return
        password, ok = QInputDialog.getText(self, "Password", "PDF password:", QLineEdit.EchoMode.Password)
        if ok:
            self._batches.append(True)
            self.ingest_job.emit([path], password)

    def add_paths(self, paths: list[str], password: str | None = None, *, interactive: bool = True) -> None:
        """Add files and folders (recursively). `interactive`: the user started it in the window, so a
        failed batch may open a dialog; otherwise failures show only on their items and the status bar."""
        from ingest.folders import files_in

        files = files_in(paths)
        if files:
            self._batches.append(interactive)
            self.ingest_job.emit(files, password)

    def _connect_menus(self) -> None:
        self.matter_menu.matter_changed.connect(self._on_matter_picked)
        self.matter_menu.destroy_requested.connect(self.destroy_matter)
        self.matter_menu.destroyed.connect(self._on_matter_destroyed)
        self.work_menu.extraction_requested.connect(self.run_extraction)
        self.work_menu.review_requested.connect(self.review_against_playbook)
        self.work_menu.keep_clear = self.viewer_area
        self.work_menu.compare_requested.connect(self.compare_selected)
        self.work_menu.check_requested.connect(self.check_selected)
        self.work_menu.page_requested.connect(self.open_page)
        self.work_menu.message_requested.connect(self.open_message)
        self.work_menu.evidence_requested.connect(self.open_evidence)
        self.work_menu.conversation_export_requested.connect(self._export_conversation)
        self.setup_menu.model_changed.connect(self._on_model_changed)
        self.setup_menu.settings_saved.connect(self._on_settings_saved)

    def _on_model_changed(self) -> None:
        self.status.show_active_model()
        self.read_ahead.poke(retry_failed=True)  # documents read with another model are not read with this one
        self._show_reading_states()

    def _export_conversation(self) -> None:
        self.work_menu.export_conversation(self.conversation_id)

    def _on_settings_saved(self, engine_changed: bool) -> None:
        self.status.show_network()
        self.status.show_active_model()
        self.read_ahead.poke(retry_failed=True)
        self._show_reading_states()
        if engine_changed:
            # The chat worker drops its engine after the current answer; the next question makes a new
            # one from the new settings (a model server, or the local engine with the new plan).
            QMetaObject.invokeMethod(self.engine_worker, "shutdown", Qt.ConnectionType.QueuedConnection)

    def _on_ingest_progress(self, progress: IngestProgress) -> None:
        if progress.index == 0 and progress.pages is None:
            self._batch_added = 0
            self._batch_failures = []
        name = Path(progress.path).name
        pages = progress.pages
        self.library.show_progress(progress.index, progress.total, name, pages)
        detail = f" ({pages.step})" if pages is not None else ""
        self.statusBar().showMessage(f"Adding {progress.index + 1} of {progress.total}: {shortened(name)}{detail}")

    def _on_ingest_finished(self) -> None:
        self.library.hide_progress()
        interactive = self._batches.popleft() if self._batches else True
        failures, added = self._batch_failures, self._batch_added
        self._batch_failures, self._batch_added = [], 0
        if not failures:
            self.statusBar().showMessage(f"Added {added} document{'s' if added != 1 else ''}", 5000)
            return
        summary = failures[0] if len(failures) == 1 else f"{len(failures)} files could not be added"
        self.statusBar().showMessage(summary, 15000)
        if interactive:  # one dialog per batch the user started, not one per file
            QMessageBox.warning(self, "Could not add files", "\n".join(failures[:20]))

    def _on_added(self, doc_id: int, created: bool) -> None:
        self._batch_added += 1
        self.read_ahead.poke()
        # While an answer is written the selection (and so the conversation) stays as it is.
        self.refresh_library(select=None if self._job is Job.ASK else doc_id)
        if not created:
            self.statusBar().showMessage("That document is already in the library", 5000)

    def _on_rejected(self, path: str, reason: str) -> None:
        self._batch_failures.append(reason)
        name = Path(path).name
        short = reason
        for prefix in (f"{path}: ", f"{Path(path).expanduser().resolve()}: ", f"{name}: "):
            if short.startswith(prefix):
                short = short[len(prefix) :]
                break
        if short in ("password required", "the password is wrong"):
            short += " (File > Open encrypted PDF…)"
        self.library.add_failure(name, short)
        self.statusBar().showMessage(reason, 10000)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            self.add_paths(paths)
            event.acceptProposedAction()

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        documents = self.recent.list(matter_id=self.ctx.matter_id)
        if not documents:
            self.recent_menu.addAction("(none yet)").setEnabled(False)
        for doc in documents:
            action = self.recent_menu.addAction(doc.title)
            action.setData(doc.id)
            action.triggered.connect(self._recent_chosen)

    def _recent_chosen(self) -> None:
        action = self.sender()
        if isinstance(action, QAction):
            self.open_document(int(action.data()))

    def open_document(self, document_id: int) -> None:
        """Select a document in the library and show it (File > Recent documents)."""
        self.library.select(document_id)
        self.viewer.open_document(document_id)

    # -- viewer --------------------------------------------------------------------------------
    def _on_current_document(self, document_id: int) -> None:
        if self.viewer.open_document(document_id):
            self.recent.touch(document_id)

    def open_citation(self, target: CitationTarget) -> None:
        if target.document_id is None:
            self.statusBar().showMessage(f"{target.text} names a document that is not part of this conversation", 8000)
            return
        if target.kind == "time":
            self.viewer.show_time(target.document_id, target.t_seconds)
        else:
            self.viewer.show_page(target.document_id, target.page, quote=target.quote, quote_state=target.state)
        self.statusBar().showMessage(target.tooltip, 8000)

    def open_claim(self, target: ClaimTarget) -> None:
        """A verdict mark clicked: the page that supports the sentence, with the passage highlighted."""
        self.statusBar().showMessage(target.tooltip, 10000)
        if not target.opens or target.document_id is None:
            return  # unsupported, or nothing to check: the status bar says why
        if target.t_seconds is not None:
            self.viewer.show_time(target.document_id, target.t_seconds)
        else:
            self.viewer.show_page(
                target.document_id, target.page, quote=target.passage or None, quote_state=PASSAGE, note=target.tooltip
            )

    def open_hit(self, hit: SearchHit) -> None:
        if hit.document_id is None:
            return
        if hit.t_seconds is not None:
            self.viewer.show_time(hit.document_id, hit.t_seconds)
        else:
            self.viewer.show_page(hit.document_id, hit.page, terms=self.library.search_terms())

    def open_page(self, document_id: int, page: int, terms: tuple[str, ...] = ()) -> None:
        self.viewer.show_page(document_id, page, terms=terms)

    def open_evidence(self, evidence: Evidence) -> None:
        if evidence.t_seconds is not None:
            self.viewer.show_time(evidence.document_id, evidence.t_seconds)
        elif evidence.page is not None:
            state = "verified" if evidence.verified else "quote_not_found"
            self.viewer.show_page(evidence.document_id, evidence.page, quote=evidence.quote, quote_state=state)

    # -- conversations -------------------------------------------------------------------------
    @property
    def conversation_id(self) -> int | None:
        """The conversation on screen (None: the next question starts a new one)."""
        return self.talk.id

    @conversation_id.setter
    def conversation_id(self, value: int | None) -> None:
        self.talk.id = value

    def _on_selection(self, ids: list[int]) -> None:
        if ids and (self.viewer.doc is None or self.viewer.doc.id not in ids):
            self.viewer.open_document(ids[-1])
        if self._job is Job.ASK:
            self.talk.selection_changed = True
            return  # the answer being written belongs to the conversation on screen; see _on_chat_finished
        self.conversation_list.set_documents(ids)
        if not ids:
            self.conversation_id = None
            self.chat.set_subject([])
            self.chat.show_messages([])
            return
        self.chat.set_subject([self.ctx.library.get(i).title for i in ids])
        rows = self.conversation_list.rows
        if rows:
            self.open_conversation(rows[0].id)
        else:
            self.conversation_id = None
            self.chat.show_messages([], ids)

    def _on_conversation_chosen(self, conversation_id: int | None) -> None:
        if self._job is Job.ASK:
            return
        if conversation_id is None:
            self.conversation_id = None
            self.chat.show_messages([], self.library.selected_ids())
            return
        self.open_conversation(conversation_id)

    def open_conversation(self, conversation_id: int) -> None:
        try:
            conversation = self.conversations.get(conversation_id)
        except NotFound:
            return
        self.conversation_id = conversation_id
        self.conversation_list.set_documents(self.conversation_list.document_ids, select=conversation_id)
        self.chat.show_messages(self.conversations.messages(conversation_id), conversation.document_ids)

    def open_message(self, conversation_id: int, message_id: int) -> None:
        """A search hit in a past conversation: select its documents and open it."""
        try:
            conversation = self.conversations.get(conversation_id)
        except NotFound:
            return
        self.library.clear_selection()
        for doc_id in conversation.document_ids:
            self.library.select_more(doc_id)
        self.open_conversation(conversation_id)

    # -- chat ----------------------------------------------------------------------------------
    def _engine_free(self) -> bool:
        if self._job is not None:
            self.statusBar().showMessage(f"The model is busy with {self._job.busy}; stop it first (Esc)", 5000)
            return False
        return True

    def _ask(self, question: str) -> None:
        ids = self.library.selected_ids()
        if not ids and self.conversation_id is None:
            self.statusBar().showMessage("Select a document first", 5000)
            return
        if not self._engine_free():
            return
        document_ids = ids
        if self.conversation_id is not None:
            document_ids = self.conversations.get(self.conversation_id).document_ids
        self._start_job(Job.ASK)
        if self.chat.hint.isVisible():  # the hint said what to do; it is done
            self.chat.hint.setVisible(False)
            self._hint_dismissed()
        self.chat.begin_answer(question, document_ids)
        self.ask_job.emit(AskJob(ids, question, self.conversation_id))

    def regenerate(self) -> None:
        if self.conversation_id is None or not self._engine_free():
            return
        question = self.chat.transcript.drop_last_exchange()  # on screen only: stored until the new answer is
        if question is None:
            return
        document_ids = self.conversations.get(self.conversation_id).document_ids
        self._start_job(Job.ASK)
        self.talk.regenerating = True
        self.chat.begin_answer(question, document_ids)
        self.ask_job.emit(AskJob(document_ids, question, self.conversation_id, regenerate=True))

    def stop(self) -> None:
        if self._job is None:
            return
        self.engine_worker.cancel()
        self.status.set_engine("stopping")

    def _start_job(self, job: Job) -> None:
        self._job = job
        self.chat.set_busy(True)
        self.status.set_engine(job.engine_state)

    def _on_chat_event(self, event: object) -> None:
        if isinstance(event, ChatStarted):
            self.conversation_id = event.conversation_id
            self.talk.pending_user = event.user_message_id
            self.status.show_answering_model(event.model_label, event.demo_model)
            if event.document_ids:  # a new conversation's documents come in reading order
                self.chat.set_document_order(list(event.document_ids))
            self.conversation_list.set_documents(self.conversation_list.document_ids, select=event.conversation_id)
        elif isinstance(event, Progress):
            self._show_progress(event)
            if event.reading:
                self.chat.set_prefill(event.done, event.total, event.eta_s)
        elif isinstance(event, AnswerDelta):
            if self.engine_label.text() != "engine: answering":
                self.status.set_engine("answering")
            self.chat.append(event.channel, event.text)
        elif isinstance(event, AnswerDone):
            user = self._stored_message(self.talk.pending_user)
            self.chat.finish_answer(event.message, user)
            if event.stats is not None:
                self.status.set_context(event.stats.in_context, event.stats.n_ctx)

    def _stored_message(self, message_id: int | None) -> MessageRow | None:
        if message_id is None:
            return None
        try:
            return self.conversations.message(message_id)
        except NotFound:
            return None

    def _on_chat_finished(self) -> None:
        job, self._job = self._job, None
        self.chat.set_busy(False)
        self.status.set_engine("idle")
        self.read_ahead.poke()  # a read the question interrupted continues now
        self._show_reading_states()
        regenerated, self.talk.regenerating = self.talk.regenerating, False
        if self.talk.selection_changed:  # the user picked other documents during the answer
            self.talk.selection_changed = False
            self._on_selection(self.library.selected_ids())
        elif regenerated and self.conversation_id is not None:
            # As stored: the new answer in place of the old, or (not finished) the old one still there.
            self.open_conversation(self.conversation_id)
        if job is Job.EXTRACT and self.extraction is not None and self.extraction.finished_status is None:
            self.extraction.finish("failed", "the run stopped")
        review = self.playbook_review
        if job is Job.REVIEW and review is not None and review.finished_status is None:
            review.failed("the review stopped")
        if self._offer is not None:  # the question's next step first: a matter chosen outside waits for it
            asked, reason, estimates = self._offer
            self._offer = None
            self._offer_readings(asked, reason, estimates)
        else:
            self._follow_matter_chosen_elsewhere()

    def _on_does_not_fit(self, job: AskJob, reason: str, estimates: ReadingEstimates | None) -> None:
        # What stays on screen if no other reading is chosen. Not the command line's "select fewer
        # pages" advice: the dialog that follows offers the ways on (and a long status line was cut).
        why = without_advice(reason)
        self.chat.fail_answer(why)
        self.statusBar().showMessage("The selection does not fit the model's context: choose how to read it", 10000)
        self._offer = (job, reason, estimates)

    def _offer_readings(self, job: AskJob, reason: str, estimates: ReadingEstimates | None) -> StrategyDialog:
        """The documents do not fit together: read them in passes, by the pages a search finds, or (one
        document) by the pages the user names, each with how long it would take; the answer's footer
        then says what was read."""
        ids = job.document_ids
        if job.conversation_id is not None:
            ids = self.conversations.get(job.conversation_id).document_ids
        pages = sum(self.ctx.library.get(i).page_count for i in ids)
        dialog = StrategyDialog(self, reason, pages=pages, one_document=len(ids) == 1, estimates=estimates)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.chosen.connect(lambda choice: self._ask_read_as(job, ids, choice, estimates))
        # Closed without a reading chosen (a reading chosen is work: it is followed when that ends).
        dialog.finished.connect(lambda _result: self._follow_matter_chosen_elsewhere())
        dialog.open()
        return dialog

    def _ask_read_as(
        self, job: AskJob, document_ids: list[int], choice: ReadingChoice, estimates: ReadingEstimates | None
    ) -> None:
        if not self._engine_free():
            return
        self.chat.transcript.drop_last_exchange()  # the refusal on screen: nothing of it was stored
        self._start_job(Job.ASK)
        # Asked again (Regenerate): the conversation is shown as stored once the reply is, the old
        # answer replaced or, when the reply did not finish, still there.
        self.talk.regenerating = job.regenerate
        self.chat.begin_answer(job.question, document_ids)
        # The reading chosen as its estimate planned it: the run checks the plan is still this question's.
        plan = estimates.plan(choice.strategy) if estimates is not None else None
        self.ask_job.emit(dataclasses.replace(job, strategy=choice.strategy, pages=choice.pages, plan=plan))

    def _on_chat_failed(self, reason: str) -> None:
        if self._job is Job.EXTRACT and self.extraction is not None:
            self.extraction.finish("failed", reason)
        elif self._job is Job.COMPARE and self.comparison is not None:
            self.comparison.summary_unavailable(reason)
        elif self._job is Job.REVIEW:
            if self.playbook_review is not None:
                self.playbook_review.failed(reason)
        elif self._job is Job.NAMES:
            if self.redaction is not None:
                self.redaction.names_failed(reason)
        else:
            self.chat.fail_answer(reason)
        self.statusBar().showMessage(reason, 10000)

    def _on_copied(self, _message_id: int) -> None:
        self.statusBar().showMessage("Answer copied (Markdown, with its citations)", 4000)

    # -- extraction ----------------------------------------------------------------------------
    def run_extraction(self, template_key: str | None = None, document_ids: list[int] | None = None) -> None:
        ids = document_ids if document_ids is not None else self.library.selected_ids()
        if not ids:
            self.statusBar().showMessage("Select the documents to extract from first", 5000)
            return
        if not self._engine_free():
            return
        store = self.work_menu.templates()
        if template_key is None:
            keys = [f"{t.key}: {t.name}" for t in store.all()]
            choice, ok = QInputDialog.getItem(self, "Run extraction", "Template", keys, 0, False)
            if not ok:
                return
            template_key = choice.split(":")[0]
        template = store.get(template_key)
        dialog = ExtractionRunDialog(self.ctx, template.name, len(ids), self)
        dialog.cancel_requested.connect(self.stop)
        self.work_menu.connect_table(dialog.table)
        self.extraction = dialog
        dialog.show()
        self._start_job(Job.EXTRACT)
        self.extract_job.emit(ExtractJob(template_key, ids))

    def check_selected(self) -> None:
        """Work > Check contract on the selected documents (no model: the engine is not involved)."""
        self.work_menu.check(self.library.selected_ids())

    # -- playbook review -------------------------------------------------------------------------
    def review_against_playbook(
        self, playbook_key: str | None = None, document_id: int | None = None
    ) -> PlaybookReviewView | None:
        """Work > Review against playbook…: the selected document (or the one shown) checked against a
        playbook the user picks, on the window's engine like a question; the view shows it as it runs."""
        from app.playbook.book import PlaybookStore

        if document_id is None:
            ids = self.library.selected_ids()
            if len(ids) > 1:
                self.statusBar().showMessage("Select one document to review against a playbook", 5000)
                return None
            document_id = ids[0] if ids else (self.viewer.doc.id if self.viewer.doc is not None else None)
        if document_id is None:
            self.statusBar().showMessage("Select the document to review first", 5000)
            return None
        if not self._engine_free():
            return None
        store = PlaybookStore.for_config(self.ctx.paths.config_dir)
        try:
            books = store.all()
            if playbook_key is None:
                labels = [f"{b.key}: {b.name}" for b in books]
                if store.damaged:  # named, never a reason to refuse the ones that read
                    self.statusBar().showMessage(f"{len(store.damaged)} playbook file(s) left out: {store.damaged[0]}")
                choice, ok = QInputDialog.getItem(self, "Review against playbook", "Playbook", labels, 0, False)
                if not ok:
                    return None
                playbook_key = choice.split(":")[0]
            playbook = store.get(playbook_key)
            doc = self.ctx.library.get(document_id)
        except USER_ERRORS as exc:
            QMessageBox.warning(self, "Folio", one_line(exc))
            return None
        view = PlaybookReviewView(self.ctx, playbook, doc.title, self)
        view.cancel_requested.connect(self.stop)
        self.work_menu.connect_review(view)
        self.playbook_review = view
        view.show()
        view.place_beside(self.viewer_area())
        self._start_job(Job.REVIEW)
        self.review_job.emit(ReviewJob(doc.id, playbook.key))
        return view

    def viewer_area(self) -> QRect:
        """The document viewer on the screen: a review opens its clauses there, so it opens beside it."""
        return QRect(self.viewer.mapToGlobal(QPoint(0, 0)), self.viewer.size())

    def _on_review_event(self, event: object) -> None:
        from app.playbook.review import PlaybookReview

        if isinstance(event, Progress):
            self._show_progress(event)
        elif not isinstance(event, PlaybookReview | ReviewStopped):
            self.status.set_engine("reviewing")
        view = self.playbook_review
        if isinstance(event, PlaybookReview):
            if view is None or not view.isVisible():  # closed while it ran: it is stored all the same
                self.statusBar().showMessage(f"Playbook review {event.id} stored: Work > Playbook reviews…", 10000)
            if view is not None:
                view.show_review(event)
        elif view is None:
            return
        elif isinstance(event, ReviewStopped):
            view.stopped(event.cells_done, event.cells_total)
            if not view.isVisible():  # closed while it ran, which stopped it: the window says so instead
                self.statusBar().showMessage(
                    f"Playbook review stopped: {event.cells_done} of {event.cells_total} fields read and kept; "
                    "Work > Review against playbook… goes on from there.",
                    15000,
                )
        else:
            view.on_event(event)

    # -- comparing two versions ----------------------------------------------------------------
    def compare_selected(self, document_ids: list[int] | None = None) -> None:
        """The two selected documents, the one added first as the old version; the redline at once (on
        the worker thread), the model's summary after it."""
        ids = sorted(document_ids if document_ids is not None else self.library.selected_ids())
        if len(ids) != 2:
            self.statusBar().showMessage("Select the two versions to compare (two documents)", 5000)
            return
        if not self._engine_free():
            return
        old, new = (self.ctx.library.get(i) for i in ids)
        view = CompareView(self.ctx, old.title, new.title, self)
        view.cancel_requested.connect(self.stop)
        view.finished.connect(self._compare_closed)
        self.comparison = view
        view.show()
        self._start_job(Job.COMPARE)
        self.compare_job.emit(CompareJob(old.id, new.id))

    def _compare_closed(self) -> None:
        if self._job is Job.COMPARE:  # nobody is waiting for the summary any more: free the engine
            self.stop()

    def _on_compare_event(self, event: object) -> None:
        view = self.comparison
        if isinstance(event, Progress):
            self._show_progress(event)
            if view is not None and not event.reading:
                view.show_progress(event.text)
        elif view is None:
            return
        elif isinstance(event, Redline):
            view.show_redline(event)
        elif isinstance(event, Summary):
            view.show_summary(event)
        elif isinstance(event, SummaryUnavailable):
            view.summary_unavailable(event.reason)

    def _show_progress(self, event: Progress) -> None:
        if event.reading:
            self.status.set_engine("reading", f"{event.done:,}/{event.total:,} tokens")
        else:
            self.engine_label.setText(f"engine: {event.text}")

    def _on_extraction_event(self, event: object) -> None:
        if isinstance(event, Progress):
            self._show_progress(event)
        else:
            self.status.set_engine("extracting")
        dialog = self.extraction
        if dialog is None:
            return
        dialog.on_event(event)
        if isinstance(event, RunFinished) and not dialog.isVisible():  # closed while it ran: said here instead
            if event.status == "cancelled":
                said = (
                    f"Extraction run {event.run_id} stopped: {event.cells_done} of {event.cells_total} fields "
                    "filled and kept; running the same template on the same documents goes on from there."
                )
            else:
                said = f"Extraction run {event.run_id} done: {event.cells_done} of {event.cells_total} fields filled."
            self.statusBar().showMessage(f"{said} Work > Extraction table… shows it.", 15000)

    # -- redaction -----------------------------------------------------------------------------
    def redact_current(self, document_id: int | None = None) -> None:
        """File > Export redacted copy…: the document shown in the viewer (or the one selected)."""
        if document_id is None:
            ids = self.library.selected_ids()
            document_id = self.viewer.doc.id if self.viewer.doc is not None else (ids[0] if len(ids) == 1 else None)
        if document_id is None:
            self.statusBar().showMessage("Open or select the document to redact first", 5000)
            return
        try:
            doc = self.ctx.library.get(document_id)
        except NotFound:
            return
        if self.redaction is not None and self.redaction.isVisible() and self.redaction.doc.id == doc.id:
            self.redaction.raise_()
            return
        dialog = RedactionDialog(self.ctx, doc, self.viewer.marks_for(doc.id), self)
        dialog.names_requested.connect(self._redaction_names)
        dialog.candidate_chosen.connect(self._show_candidate)
        self.redaction = dialog
        dialog.show()

    def _marks_changed(self, document_id: int) -> None:
        if self.redaction is not None and self.redaction.doc.id == document_id:
            self.redaction.set_marks(self.viewer.marks_for(document_id))

    def _show_candidate(self, document_id: int, page: int, words: str) -> None:
        self.open_page(document_id, page, tuple(words.split()[:6]))

    def _redaction_names(self, document_id: int) -> None:
        if document_id < 0:  # the dialog's Cancel while the model reads
            if self._job is Job.NAMES:
                self.stop()
            return
        if not self._engine_free():
            if self.redaction is not None:
                self.redaction.names_failed("the model is busy; try again when it is done")
            return
        self._start_job(Job.NAMES)
        self.names_job.emit(document_id)

    def _on_names_event(self, event: object) -> None:
        from app.redaction.names import Suggestions

        dialog = self.redaction
        if isinstance(event, Progress):
            self._show_progress(event)
            if dialog is not None:
                dialog.names_progress(event)
        elif dialog is None:
            return
        elif isinstance(event, Suggestions):
            dialog.names_ready(event)
        elif event == NAMES_STOPPED:
            dialog.names_failed("stopped")

    # -- shutdown ------------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        # Runs once: a second close (a test harness, a quit after close) must not wait on threads
        # that have already stopped, which would block forever.
        if not self._closed:
            self._closed = True
            self.outside.stop()
            self._save_place()
            self.read_ahead.stop()  # first: it stops between chunks, keeping what it read
            if self.redaction is not None:
                self.redaction.worker.cancel()
                self.redaction.shutdown()
            self.engine_worker.cancel()
            self.ingest_worker.cancel()
            for workers, thread in (
                ((self.engine_worker,), self.engine_thread),
                ((self.ingest_worker, self.matter_menu.worker), self.ingest_thread),
            ):
                if thread.isRunning():  # run the workers' cleanup on their own thread, then stop it
                    for worker in workers:
                        QMetaObject.invokeMethod(worker, "shutdown", Qt.ConnectionType.BlockingQueuedConnection)
                    thread.quit()
                    thread.wait(10000)
            self.viewer.shutdown()
            self.library.shutdown()
        super().closeEvent(event)
