"""The library list's model: a matter's documents fetched from the store a page at a time as the view
scrolls (Qt's canFetchMore/fetchMore), then the files that could not be added, marked, at the end.

Why a model and not a widget per row: a matter of 10,000 documents would build 10,000 items (and ask
each one's reading state) before the window could draw; here the first page is drawn at once and the
rest is read when the user scrolls to it, or when a document further down is selected by id."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QIcon

from app.store.library import LISTING_PAGE, DocumentRow, ListedDocument
from ingest.document import FLOWING_KINDS
from ui.safe_text import plain_tooltip

FAILED_ICON = "⚠"
FAILED_COLOR = QColor("#b91c1c")
ROLE_FAILED = Qt.ItemDataRole.UserRole + 1

# (after id, how many or None for all, through id or None) -> the next rows in list order.
Pages = Callable[[int, int | None, int | None], list[ListedDocument]]
# The reading state in words of documents just listed (empty: none to show).
ReadingWords = Callable[[list[DocumentRow]], dict[int, str]]
Index = QModelIndex | QPersistentModelIndex


def describe(doc: DocumentRow, attachment: int | None = None, reading: str = "") -> str:
    """Three lines for the list: title, extent, and its reading state with the local model (else the
    day it was added); an e-mail's attachment is indented under it with its number. Every row has three
    lines, so the view measures one row, not thousands (uniform item sizes)."""
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
    third = reading or f"added {doc.added_at[:10]}"
    return f"{indent}{first}\n{indent}    {extent} · ~{doc.token_estimate:,} tokens{status}\n{indent}    {third}"


def in_reading_order(documents: list[DocumentRow], places: dict[int, tuple[int, int]]) -> list[ListedDocument]:
    """Documents in the order given, each e-mail followed by its attachments (with their numbers);
    an attachment whose e-mail is not listed stands on its own."""
    listed = {d.id for d in documents}
    under: dict[int, list[tuple[int, DocumentRow]]] = {}
    for doc in documents:
        place = places.get(doc.id)
        if place is not None and place[0] in listed and place[0] != doc.id:
            under.setdefault(place[0], []).append((place[1], doc))
    out: list[ListedDocument] = []
    nested = {doc.id for children in under.values() for _, doc in children}
    for doc in documents:
        if doc.id in nested:
            continue
        out.append(ListedDocument(doc))
        children = sorted(under.get(doc.id, []), key=lambda pc: pc[0])
        out += [ListedDocument(child, position) for position, child in children]
    return out


def fixed_pages(rows: list[ListedDocument]) -> Pages:
    """Pages over a list already read: every row in the first."""

    def pages(after: int, limit: int | None, through: int | None) -> list[ListedDocument]:
        return list(rows) if after == 0 and not through else []

    return pages


class LibraryModel(QAbstractListModel):
    def __init__(self, icon_for: Callable[[str], QIcon]) -> None:
        super().__init__()
        self._icon_for = icon_for
        self._icons: dict[str, QIcon] = {}
        self._rows: list[ListedDocument] = []
        self._row_of: dict[int, int] = {}  # document id -> row
        self._failed: list[tuple[str, str]] = []  # files not added: (name, reason), after the documents
        self._reading: dict[int, str] = {}
        self._pages: Pages = fixed_pages([])
        self._words: ReadingWords = lambda _docs: {}
        self._after = 0  # the last top-level document id fetched (attachments come with their e-mail)
        self._exhausted = True

    # -- what is listed ------------------------------------------------------------------------------
    def show(self, pages: Pages, words: ReadingWords, *, through: int | None = None) -> None:
        """List from these pages: the first page, or every row up to document id `through` and a page
        past it (a refresh keeps what was fetched, so the selection and the scroll position stay, and
        a document just added, the newest, shows)."""
        self.beginResetModel()
        self._pages, self._words = pages, words
        self._rows, self._row_of, self._reading = [], {}, {}
        self._after, self._exhausted = 0, False
        if through:
            self._append(self._take(None, through))
        if not self._exhausted:
            self._append(self._take(LISTING_PAGE, None))
        self.endResetModel()

    def _take(self, limit: int | None, through: int | None) -> list[ListedDocument]:
        rows = self._pages(self._after, limit, through)
        if limit is not None and sum(1 for r in rows if r.attachment is None) < limit:
            self._exhausted = True  # a short page is the last
        return rows

    def _append(self, rows: list[ListedDocument]) -> None:
        start = len(self._rows)
        for i, row in enumerate(rows):
            self._row_of.setdefault(row.document.id, start + i)
            if row.attachment is None:
                self._after = max(self._after, row.document.id)
        self._rows += rows
        if rows:
            self._reading.update(self._words([r.document for r in rows]))

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008 - Qt's signature
        return not parent.isValid() and not self._exhausted

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if not parent.isValid() and not self._exhausted:
            self._insert(self._take(LISTING_PAGE, None))

    def _insert(self, rows: list[ListedDocument]) -> None:
        if rows:
            start = len(self._rows)
            self.beginInsertRows(QModelIndex(), start, start + len(rows) - 1)  # before the failed files
            self._append(rows)
            self.endInsertRows()

    def fetch_through(self, document_id: int) -> int | None:
        """The row of a document, fetching the rows up to it when it is not listed yet (None: the
        matter does not hold it)."""
        if document_id not in self._row_of and not self._exhausted:
            self._insert(self._take(None, document_id))
        return self._row_of.get(document_id)

    def documents(self) -> list[DocumentRow]:
        """The documents fetched so far, in list order."""
        return [r.document for r in self._rows]

    def document_at(self, row: int) -> int | None:
        return self._rows[row].document.id if 0 <= row < len(self._rows) else None

    # -- reading state -------------------------------------------------------------------------------
    def set_reading(self, reading: dict[int, str]) -> None:
        """Rewrite the reading state of the listed documents in place (rows, selection and scroll stay)."""
        fresh = {i: w for i, w in reading.items() if i in self._row_of and self._reading.get(i) != w}
        self._reading.update(fresh)
        changed = [self._row_of[i] for i in fresh]
        if changed:
            self.dataChanged.emit(self.index(min(changed)), self.index(max(changed)))

    # -- files that could not be added -----------------------------------------------------------------
    def failed(self) -> list[tuple[str, str]]:
        return list(self._failed)

    def add_failed(self, name: str, reason: str) -> None:
        """A file that could not be added, at the end; one that failed before is replaced."""
        self.remove_failed({name})
        row = len(self._rows) + len(self._failed)
        self.beginInsertRows(QModelIndex(), row, row)
        self._failed.append((name, reason))
        self.endInsertRows()

    def remove_failed(self, names: set[str]) -> None:
        for i in reversed(range(len(self._failed))):
            if self._failed[i][0] in names:
                row = len(self._rows) + i
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._failed[i]
                self.endRemoveRows()

    def failed_at(self, row: int) -> tuple[str, str] | None:
        i = row - len(self._rows)
        return self._failed[i] if 0 <= i < len(self._failed) else None

    # -- Qt ----------------------------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows) + len(self._failed)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = index.row()
        failed = self.failed_at(row)
        if failed is not None:
            return self._failed_data(failed, role)
        if row >= len(self._rows):
            return None
        listed = self._rows[row]
        doc = listed.document
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return describe(doc, listed.attachment, self._reading.get(doc.id, ""))
        if role == Qt.ItemDataRole.UserRole:
            return doc.id
        if role == Qt.ItemDataRole.DecorationRole:
            if doc.kind not in self._icons:
                self._icons[doc.kind] = self._icon_for(doc.kind)
            return self._icons[doc.kind]
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(f"{doc.source_path}\nsha256 {doc.sha256}")
        return None

    def _failed_data(self, failed: tuple[str, str], role: int) -> Any:
        name, reason = failed
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{FAILED_ICON} {name}\n    not added: {reason}\n    select and press Delete to dismiss"
        if role == ROLE_FAILED:
            return failed
        if role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(FAILED_COLOR)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(f"{reason}\n(select and press Delete to dismiss)")
        return None
