"""The library: documents with kind, extent, size in tokens and status; files that could not be
added (with the reason on the item); adding progress; and a search box over document text."""

from __future__ import annotations

import html

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QIcon, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
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
from app.errors import USER_ERRORS, one_line
from app.store.library import DocumentRow
from app.store.search import Search, SearchHit
from ingest.document import FLOWING_KINDS
from ingest.progress import ReadProgress
from ui.matter_switcher import MatterSwitcher
from ui.safe_text import plain_tooltip
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
FAILED_ICON = "⚠"
FAILED_COLOR = QColor("#b91c1c")
SEARCH_DELAY_MS = 250
PROGRESS_STEPS = 100  # per file, so the bar also moves while one long scan is read
ROLE_FAILED = Qt.ItemDataRole.UserRole + 1


def describe(doc: DocumentRow, attachment: int | None = None, reading: str = "") -> str:
    """Two lines for the list (three with its reading state with the local model); an e-mail's
    attachment is indented under it with its number."""
    is_clip = doc.kind == "video" and doc.duration_s is not None
    if is_clip:
        minutes, seconds = divmod(round(doc.duration_s or 0), 60)
        extent = f"{minutes}:{seconds:02d} min"
    elif doc.kind in FLOWING_KINDS:
        extent = f"{doc.page_count} ¶"
    else:
        extent = f"{doc.page_count} p."
    status = "" if doc.status == "ready" else f" · {doc.status}"
    indent = "        " if attachment is not None else ""
    first = f"attachment {attachment} · {doc.title}" if attachment is not None else doc.title
    lines = f"{indent}{first}\n{indent}    {extent} · ~{doc.token_estimate:,} tokens{status}"
    return lines + (f"\n{indent}    {reading}" if reading else "")


def in_reading_order(
    documents: list[DocumentRow], places: dict[int, tuple[int, int]]
) -> list[tuple[DocumentRow, int | None]]:
    """Documents in the order given, each e-mail followed by its attachments (with their numbers);
    an attachment whose e-mail is not listed stands on its own."""
    listed = {d.id for d in documents}
    under: dict[int, list[tuple[int, DocumentRow]]] = {}
    for doc in documents:
        place = places.get(doc.id)
        if place is not None and place[0] in listed and place[0] != doc.id:
            under.setdefault(place[0], []).append((place[1], doc))
    out: list[tuple[DocumentRow, int | None]] = []
    nested = {doc.id for children in under.values() for _, doc in children}
    for doc in documents:
        if doc.id in nested:
            continue
        out.append((doc, None))
        out += [(child, position) for position, child in sorted(under.get(doc.id, []), key=lambda pc: pc[0])]
    return out


class LibraryPanel(QWidget):
    selection_changed = Signal(list)  # list[int] document ids
    current_changed = Signal(int)  # the document clicked last (the viewer shows it)
    add_requested = Signal()
    cancel_requested = Signal()
    hit_activated = Signal(object)  # SearchHit

    def __init__(self, search: Search | None = None) -> None:
        super().__init__()
        self.search = search
        self.matter_id: int | None = None  # the matter searched (None: every document)
        self.matters = MatterSwitcher()
        self._listed: dict[int, tuple[DocumentRow, int | None]] = {}  # listed documents, by id
        self.list = QListWidget()
        self.list.setObjectName("library")
        self.list.setAccessibleName("Library")
        self.list.setAccessibleDescription(
            "The documents in the library. Shift or Ctrl with the arrow keys and Space selects several; "
            "the questions are about the selected documents"
        )
        self.list.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        # Long file names are cut in the middle (the whole name is in the item's tooltip): never a
        # horizontal scroll bar that hides the reading state at the end of each line.
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.itemSelectionChanged.connect(self._emit_selection)
        self.list.currentItemChanged.connect(self._emit_current)
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
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.run_search)
        self.search_box.textChanged.connect(self._search_timer.start)
        self.search_box.returnPressed.connect(self.run_search)

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
    def set_documents(
        self,
        documents: list[DocumentRow],
        select: int | None = None,
        attachments: dict[int, tuple[int, int]] | None = None,
        reading: dict[int, str] | None = None,
    ) -> None:
        """`attachments`: document id -> (e-mail id, attachment number), to list them under their e-mail;
        `reading`: document id -> its reading state in words (with the local model)."""
        selected = set(self.selected_ids()) if select is None else {select}
        current = self.current_id() if select is None else select
        failed = self.failed_items()
        self.list.blockSignals(True)
        self.list.clear()
        self._listed = {}
        for doc, attachment in in_reading_order(documents, attachments or {}):
            self._listed[doc.id] = (doc, attachment)
            item = QListWidgetItem(
                self._kind_icon(doc.kind), describe(doc, attachment, (reading or {}).get(doc.id, ""))
            )
            item.setData(Qt.ItemDataRole.UserRole, doc.id)
            item.setToolTip(plain_tooltip(f"{doc.source_path}\nsha256 {doc.sha256}"))
            self.list.addItem(item)
            if doc.id == current:
                self.list.setCurrentItem(item, QItemSelectionModel.SelectionFlag.NoUpdate)
            if doc.id in selected:
                item.setSelected(True)
        for name, reason in failed:
            self._add_failed_item(name, reason)
        self.list.blockSignals(False)
        self.empty_hint.setVisible(not documents and not failed)
        self._emit_selection()
        self._emit_current()

    def _kind_icon(self, kind: str) -> QIcon:
        fallback = QStyle.StandardPixmap.SP_MediaPlay if kind == "video" else QStyle.StandardPixmap.SP_FileIcon
        return QIcon.fromTheme(KIND_THEME_ICONS.get(kind, ""), self.style().standardIcon(fallback))

    def show_reading(self, reading: dict[int, str]) -> None:
        """Rewrite the reading state of the listed documents in place (selection and scroll stay)."""
        for i in range(self.list.count()):
            item = self.list.item(i)
            listed = self._listed.get(item.data(Qt.ItemDataRole.UserRole))
            if listed is not None and listed[0].id in reading:
                item.setText(describe(*listed, reading[listed[0].id]))

    def add_failure(self, name: str, reason: str) -> None:
        """A file that could not be added stays on the list, marked, with the reason on the item."""
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(ROLE_FAILED) and item.data(ROLE_FAILED)[0] == name:
                self.list.takeItem(i)
                break
        self._add_failed_item(name, reason)
        self.empty_hint.setVisible(False)

    def _add_failed_item(self, name: str, reason: str) -> None:
        item = QListWidgetItem(f"{FAILED_ICON} {name}\n    not added: {reason}")
        item.setData(ROLE_FAILED, (name, reason))
        item.setForeground(QBrush(FAILED_COLOR))
        item.setToolTip(plain_tooltip(f"{reason}\n(select and press Delete to dismiss)"))
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        self.list.addItem(item)

    def failed_items(self) -> list[tuple[str, str]]:
        out = []
        for i in range(self.list.count()):
            data = self.list.item(i).data(ROLE_FAILED)
            if data:
                out.append((str(data[0]), str(data[1])))
        return out

    def dismiss_failed(self) -> None:
        for item in self.list.selectedItems():
            if item.data(ROLE_FAILED):
                self.list.takeItem(self.list.row(item))

    def selected_ids(self) -> list[int]:
        return [
            int(item.data(Qt.ItemDataRole.UserRole))
            for item in self.list.selectedItems()
            if item.data(Qt.ItemDataRole.UserRole) is not None
        ]

    def current_id(self) -> int | None:
        item = self.list.currentItem()
        value = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return int(value) if value is not None else None

    def select(self, document_id: int) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == document_id:
                self.list.setCurrentItem(item)
                self.list.clearSelection()
                item.setSelected(True)
                return

    def select_more(self, document_id: int) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == document_id:
                item.setSelected(True)

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
        self._search_timer.stop()
        text = self.search_box.text()
        self.hits.clear()
        self.found = []
        if not text.strip() or self.search is None:
            self.hits.setVisible(False)
            self.search_status.setVisible(False)
            return
        try:
            self.found = self.search.query(text, conversations=False, limit=50, matter_id=self.matter_id)
        except USER_ERRORS as exc:
            self._search_said(one_line(exc))
            return
        self._search_said(f"{len(self.found)} passage{'s' if len(self.found) != 1 else ''} found")
        for i, hit in enumerate(self.found):
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
        self.hits.setVisible(bool(self.found))

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
