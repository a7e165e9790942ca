"""The library: documents with kind, extent, size in tokens and status; files that could not be
added (with the reason on the item); adding progress; and a search box over document text."""

from __future__ import annotations

import html

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, QThread, QTimer, Signal
from PySide6.QtGui import QIcon, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from app.citations.passages import query_terms
from app.context import AppContext
from app.errors import USER_ERRORS, one_line
from app.store.library import DocumentRow
from app.store.search import SearchHit, fts_query_of
from ingest.progress import ReadProgress
from ui.background import start_worker_thread
from ui.library_model import ROLE_FAILED, LibraryModel, Pages, ReadingWords, fixed_pages, in_reading_order
from ui.matter_switcher import MatterSwitcher
from ui.search_worker import SearchWorker
from ui.wording import shortened

# Freedesktop icon names by document kind. Emoji were drawn as empty boxes on machines without an
# emoji font (most Linux workstations); a theme icon, else Qt's own file icon, is always drawn.
KIND_THEME_ICONS = {
    "pdf": "application-pdf",
    "image": "image-x-generic",
    "video": "video-x-generic",
    "word": "x-office-document",
    "text": "text-x-generic",
    "email": "mail-message",
}
SEARCH_DELAY_MS = 250
PROGRESS_STEPS = 100  # per file, so the bar also moves while one long scan is read
HITS_PER_TURN = 4  # search hits added to the list per turn of the event loop


class LibraryPanel(QWidget):
    selection_changed = Signal(list)  # list[int] document ids
    current_changed = Signal(int)  # the document clicked last (the viewer shows it)
    add_requested = Signal()
    cancel_requested = Signal()
    hit_activated = Signal(object)  # SearchHit

    search_job = Signal(int, str, object)  # serial, text, matter id: to the search worker

    def __init__(self, ctx: AppContext | None = None) -> None:
        super().__init__()
        self.matter_id: int | None = None  # the matter searched (None: every document)
        self.matters = MatterSwitcher()
        self.model = LibraryModel(self._kind_icon)
        self._key: object = None  # what the list shows (a matter): a refresh of it keeps its rows
        self.list = QListView()
        self.list.setObjectName("library")
        self.list.setAccessibleName("Library")
        self.list.setAccessibleDescription(
            "The documents in the library. Shift or Ctrl with the arrow keys and Space selects several; "
            "the questions are about the selected documents"
        )
        self.list.setModel(self.model)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # One row measured for all (each has three lines): without it every page fetched re-measured
        # every row before it, a third of a second at 8,000 rows.
        self.list.setUniformItemSizes(True)
        # Long file names are cut in the middle (the whole name is in the item's tooltip): never a
        # horizontal scroll bar that hides the reading state at the end of each line.
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.selectionModel().selectionChanged.connect(self._emit_selection)
        self.list.selectionModel().currentChanged.connect(self._emit_current)
        self.add_button = QPushButton("Add files…")
        self.add_button.setObjectName("addFiles")
        self.add_button.setToolTip("Add PDFs, scans, images or video clips (Ctrl+O), or drop them on the window")
        self.add_button.clicked.connect(self.add_requested)
        self.empty_hint = QLabel("Drop contracts, scans or clips here, or use Add files…")
        self.empty_hint.setWordWrap(True)

        self.search_box = QLineEdit()
        self.search_box.setObjectName("librarySearch")
        self.search_box.setPlaceholderText("Search the text of this matter's documents (Ctrl+F)")
        self.search_box.setAccessibleName("Search the documents")
        self.search_box.setAccessibleDescription(
            "Finds passages in the text of every document of the matter; Enter searches at once"
        )
        self.search_box.setClearButtonEnabled(True)
        self.search_status = QLabel("")
        self.search_status.setVisible(False)
        self.hits = QListWidget()
        self.hits.setObjectName("searchHits")
        self.hits.setAccessibleName("Passages found")
        self.hits.setAccessibleDescription("Enter opens the passage's page in the viewer")
        self.hits.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.hits.setWordWrap(True)
        self.hits.setVisible(False)
        self.hits.itemActivated.connect(self._hit_activated)
        self.hits.itemClicked.connect(self._hit_activated)
        self.found: list[SearchHit] = []
        self.searching = False  # a search is on the worker; its hits replace the list when they come
        self._serial = 0
        self._unlisted: list[tuple[int, SearchHit]] = []  # hits found, not in the list yet
        self._hits_timer = QTimer(self)
        self._hits_timer.setSingleShot(True)
        self._hits_timer.setInterval(0)
        self._hits_timer.timeout.connect(self._list_hits)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.run_search)
        self.search_box.textChanged.connect(self._search_timer.start)
        self.search_box.returnPressed.connect(self.run_search)
        self.searcher: SearchWorker | None = None
        self.search_thread: QThread | None = None
        if ctx is not None:
            self.searcher = SearchWorker(ctx)
            self.search_thread = start_worker_thread(self.searcher, "folio-search")
            self.search_job.connect(self.searcher.query)
            self.searcher.found.connect(self._on_found)

        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setAccessibleName("Adding files")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelAdding")
        self.cancel_button.setToolTip("Stop adding after the current file")
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.progress_row = QWidget()
        row = QHBoxLayout(self.progress_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        self.progress_row.setVisible(False)

        header = QHBoxLayout()
        title = QLabel("<b>Library</b>")
        title.setBuddy(self.list)
        header.addWidget(title)
        header.addStretch(1)
        header.addWidget(self.add_button)
        top = QWidget()
        layout = QVBoxLayout(top)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.matters)
        layout.addLayout(header)
        layout.addWidget(self.search_box)
        layout.addWidget(self.search_status)
        layout.addWidget(self.empty_hint)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.progress_row)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(top)
        self.split.addWidget(self.hits)
        self.split.setChildrenCollapsible(False)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)
        outer.addWidget(self.split)
        dismiss = QShortcut(
            QKeySequence.StandardKey.Delete, self.list, self.dismiss_failed, context=Qt.ShortcutContext.WidgetShortcut
        )
        dismiss.setWhatsThis("Dismiss the selected files that could not be added")

    def tab_order(self) -> list[QWidget]:
        """The panel's controls as Tab visits them: as laid out, top to bottom."""
        return [self.matters.combo, self.add_button, self.search_box, self.list, self.cancel_button, self.hits]

    # -- documents -------------------------------------------------------------------------------
    def show_documents(
        self, pages: Pages, words: ReadingWords, select: int | None = None, *, key: object = None, quiet: bool = False
    ) -> None:
        """List documents from `pages`, fetched as the list scrolls; `words` gives the reading state
        of the documents fetched. The selection stays (or becomes `select`); a refresh of the same list
        (the same `key`: a matter) keeps the rows fetched so far, so it does not jump back to the top.
        `quiet`: say the selection only when it changed (a refresh the user did not ask for must not
        reopen the conversation on screen)."""
        before = (self.selected_ids(), self.current_id())
        selected = set(self.selected_ids()) if select is None else {select}
        current = self.current_id() if select is None else select
        same = key is not None and key == self._key
        through = max((d.id for d in self.model.documents()), default=0) if same else 0
        self._key = key
        selection = self.list.selectionModel()
        selection.blockSignals(True)
        self.model.show(pages, words, through=through or None)
        if select is not None:
            self.model.fetch_through(select)
        chosen = QItemSelection()
        for row in range(self.model.rowCount()):
            doc_id = self.model.document_at(row)
            if doc_id in selected:
                chosen.select(self.model.index(row), self.model.index(row))
            if doc_id is not None and doc_id == current:
                selection.setCurrentIndex(self.model.index(row), QItemSelectionModel.SelectionFlag.NoUpdate)
        selection.select(chosen, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        selection.blockSignals(False)
        self.empty_hint.setVisible(self.model.rowCount() == 0)
        if quiet and (self.selected_ids(), self.current_id()) == before:
            return
        self._emit_selection()
        self._emit_current()

    def set_documents(
        self,
        documents: list[DocumentRow],
        select: int | None = None,
        attachments: dict[int, tuple[int, int]] | None = None,
        reading: dict[int, str] | None = None,
    ) -> None:
        """List exactly these documents (read already): `attachments`: document id -> (e-mail id,
        attachment number), to list them under their e-mail; `reading`: document id -> its reading
        state in words."""
        words = dict(reading or {})
        self.show_documents(fixed_pages(in_reading_order(documents, attachments or {})), lambda _d: words, select)

    def listed_documents(self) -> list[DocumentRow]:
        """The documents the list has fetched so far (a page or a few of a big matter)."""
        return self.model.documents()

    def _kind_icon(self, kind: str) -> QIcon:
        fallback = QStyle.StandardPixmap.SP_MediaPlay if kind == "video" else QStyle.StandardPixmap.SP_FileIcon
        return QIcon.fromTheme(KIND_THEME_ICONS.get(kind, ""), self.style().standardIcon(fallback))

    def show_reading(self, reading: dict[int, str]) -> None:
        """Rewrite the reading state of the listed documents in place (selection and scroll stay)."""
        self.model.set_reading(reading)

    def add_failure(self, name: str, reason: str) -> None:
        """A file that could not be added stays on the list, marked, with the reason on the item."""
        self.model.add_failed(name, reason)
        self.empty_hint.setVisible(False)

    def failed_items(self) -> list[tuple[str, str]]:
        return self.model.failed()

    def dismiss_failed(self) -> None:
        rows = self.list.selectionModel().selectedRows()
        names = {str(data[0]) for index in rows if (data := index.data(ROLE_FAILED))}
        self.model.remove_failed(names)

    def selected_ids(self) -> list[int]:
        return [
            int(index.data(Qt.ItemDataRole.UserRole))
            for index in self.list.selectionModel().selectedIndexes()
            if index.data(Qt.ItemDataRole.UserRole) is not None
        ]

    def current_id(self) -> int | None:
        value = self.list.currentIndex().data(Qt.ItemDataRole.UserRole)
        return int(value) if value is not None else None

    def select(self, document_id: int) -> None:
        """Make this document the selection and the current one (its page fetched first if need be)."""
        row = self.model.fetch_through(document_id)
        if row is not None:
            index = self.model.index(row)
            # Through the view, as a click would: Shift+arrow then extends the selection from here.
            self.list.setCurrentIndex(index)
            self.list.selectionModel().select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
            self.list.scrollTo(index)

    def select_more(self, document_id: int) -> None:
        row = self.model.fetch_through(document_id)
        if row is not None:
            self.list.selectionModel().select(self.model.index(row), QItemSelectionModel.SelectionFlag.Select)

    def clear_selection(self) -> None:
        self.list.clearSelection()

    def _emit_selection(self) -> None:
        self.selection_changed.emit(self.selected_ids())

    def _emit_current(self) -> None:
        current = self.current_id()
        if current is not None:
            self.current_changed.emit(current)

    # -- adding progress ---------------------------------------------------------------------------
    def show_progress(self, index: int, total: int, name: str, pages: ReadProgress | None = None) -> None:
        """Files done so far, and within the file being read the pages done (a scan's OCR takes a while)."""
        self.progress_row.setVisible(True)
        self.progress.setMaximum(total * PROGRESS_STEPS)
        within = round(PROGRESS_STEPS * pages.done / pages.total) if pages is not None and pages.total else 0
        self.progress.setValue(index * PROGRESS_STEPS + within)
        detail = f", {pages.step}" if pages is not None else ""
        self.progress.setFormat(f"Adding {index + 1} of {total}: {shortened(name)}{detail}")
        self.progress.setToolTip(name)

    def hide_progress(self) -> None:
        self.progress_row.setVisible(False)

    # -- search ------------------------------------------------------------------------------------
    def focus_search(self) -> None:
        self.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_box.selectAll()

    def run_search(self) -> None:
        """Search the matter's text for what the box holds, on the search worker; its hits come back
        to _on_found (a newer search drops this one)."""
        self._search_timer.stop()
        text = self.search_box.text()
        self._serial += 1
        self.hits.clear()
        self.found, self._unlisted = [], []
        if not text.strip() or self.searcher is None:
            self.searching = False
            self.hits.setVisible(False)
            self.search_status.setVisible(False)
            return
        try:
            fts_query_of(text)  # said at once, without a trip to the worker
        except USER_ERRORS as exc:
            self.searching = False
            self._search_said(one_line(exc))
            return
        self.searching = True
        self._search_said("searching…")
        self.searcher.want(self._serial)
        self.search_job.emit(self._serial, text, self.matter_id)

    def _on_found(self, serial: int, result: object) -> None:
        if serial != self._serial:
            return  # an older search, finished before the worker saw the newer one
        self.searching = False
        if isinstance(result, str):
            self._search_said(result)
            return
        self.found = list(result)  # type: ignore[call-overload]
        self._search_said(f"{len(self.found)} passage{'s' if len(self.found) != 1 else ''} found")
        self._unlisted = list(enumerate(self.found))
        self.hits.setVisible(bool(self.found))
        self._list_hits()

    def _list_hits(self) -> None:
        """A few passages per turn of the event loop: each is a rich-text label measured for its height,
        and fifty at once held the UI thread for a tenth of a second."""
        for i, hit in self._unlisted[:HITS_PER_TURN]:
            label = QLabel(
                f"<b>{html.escape(hit.title)}</b> · {html.escape(_where(hit))}<br/>"
                + html.escape(hit.marked("\ue010", "\ue011")).replace("\ue010", "<b>").replace("\ue011", "</b>")
            )
            label.setWordWrap(True)
            label.setTextFormat(Qt.TextFormat.RichText)
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, i)
            item.setText(f"{hit.title} {_where(hit)} {hit.snippet}")  # accessible text; the label shows it
            item.setForeground(Qt.GlobalColor.transparent)
            item.setSizeHint(label.sizeHint())
            self.hits.addItem(item)
            self.hits.setItemWidget(item, label)
        del self._unlisted[:HITS_PER_TURN]
        if self._unlisted:
            self._hits_timer.start()

    def shutdown(self) -> None:
        """Stop the search thread (the window calls this once, when it closes)."""
        if self.search_thread is not None and self.search_thread.isRunning():
            self._serial += 1
            if self.searcher is not None:
                self.searcher.want(self._serial)  # a search running now stops
            self.search_thread.quit()
            self.search_thread.wait(10000)

    def _search_said(self, text: str) -> None:
        self.search_status.setText(text)
        self.search_status.setVisible(True)

    def search_terms(self) -> tuple[str, ...]:
        """The words to mark on an opened page (a trailing '*' keeps its prefix meaning)."""
        return query_terms(self.search_box.text())

    def _hit_activated(self, item: QListWidgetItem) -> None:
        index = item.data(Qt.ItemDataRole.UserRole)
        if index is not None and 0 <= int(index) < len(self.found):
            self.hit_activated.emit(self.found[int(index)])


def _where(hit: SearchHit) -> str:
    return hit.anchor.split(" ", 1)[1] if " " in hit.anchor else hit.anchor
