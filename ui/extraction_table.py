"""The documents x fields table of an extraction run, and the same cells as a list, least sure first.

Each cell shows its value and, under it, what was checked (the grounding verdict and page), how sure
the decision is (high / check / low: the probability that 'present' or 'not stated' is right, from
the model's own scores, app.extraction.decide) and any reviewer's decision. The list shows one row
per cell, sorted by that confidence (a reviewer checks the least sure first), filtered to the cells
to check if asked. Activating a cell asks to open its passage; the buttons (and the context menu)
ask to accept, correct or reject it. The view only asks (signals): its owner writes the decision
(app.extraction.review) and gives it the table again.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMenu,
    QPushButton,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.citations.verdicts import GLYPHS
from app.export import cell_status
from app.extraction.cells import (
    ADDED,
    MOVED,
    NOT_HELD,
    NOT_NAMED,
    PARTLY,
    QUOTED,
    SUPPORTED,
    UNSUPPORTED,
    VERDICTS,
    WRONG_PAGE,
    Cell,
)
from app.extraction.decide import GENERATED
from app.extraction.review import ACCEPTED, CLEARED, CORRECTED, REJECTED, Review
from app.extraction.runner import ExtractionTable
from ui.safe_text import plain_tooltip
from ui.sizing import compact
from ui.theme import high_contrast

COLORS = {
    "bad": QColor("#f8d7da"),  # unsupported, or no usable answer
    "elsewhere": QColor("#fff3cd"),  # supported without the quote, wrong page, page added by Folio
    "missing": QColor("#e9ecef"),  # not stated / absent
    "reviewed": QColor("#d1e7dd"),  # accepted or corrected by a reviewer
}
MARKS = {v: GLYPHS[v] for v in VERDICTS}  # the chat's marks for the same verdicts
_Index = QModelIndex | QPersistentModelIndex


def check_line(cell: Cell) -> str:
    """The second line of a cell with a value: what was checked, and where ('' for a cell without one:
    its first line already says 'not stated', 'No' or 'no answer')."""
    if not cell.found:
        return ""
    where = f" {cell.anchor_text.strip('[]')}" if cell.anchor_text else ""
    return f"{MARKS.get(cell.verdict, '?')} {cell_status(cell)}{where}"


def sure_line(cell: Cell) -> str:
    """How sure the decision is, in a word ('' for a decision that was not scored)."""
    return f"confidence: {cell.sureness}" if cell.sureness else ""


def decision_note(cell: Cell) -> str:
    """The scored decision in words, with its numbers (the tooltip)."""
    if cell.decided_by == GENERATED:
        return "decided by the model's generated answer (the model server returned no probabilities)"
    if cell.score is None or cell.confidence is None:
        return ""
    what = ("present" if cell.found else "absent") if cell.yes_no else ("stated" if cell.found else "not stated")
    line = f" against the line {cell.threshold:.2f}" if cell.threshold is not None else ""
    return (
        f"decision: {what}; the model's probability of 'yes' {cell.score:.2f}{line}; "
        f"confidence {cell.confidence:.0%} that '{what}' is right ({cell.sureness})"
    )


def review_line(review: Review | None) -> str:
    if review is None:
        return ""
    return {ACCEPTED: "✔ accepted", CORRECTED: "✎ corrected", REJECTED: "✗ rejected"}.get(review.decision, "")


class ExtractionTableModel(QAbstractTableModel):
    def __init__(self, table: ExtractionTable | None = None) -> None:
        super().__init__()
        self.table = table

    def set_table(self, table: ExtractionTable) -> None:
        self.beginResetModel()
        self.table = table
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.table is None else len(self.table.documents)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.table is None else len(self.table.fields)

    def cell_at(self, index: _Index) -> Cell | None:
        if self.table is None or not index.isValid():
            return None
        doc = self.table.documents[index.row()]
        return self.table.cell(doc.id, self.table.fields[index.column()].key)

    def review_at(self, index: _Index) -> Review | None:
        if self.table is None or not index.isValid():
            return None
        doc = self.table.documents[index.row()]
        return self.table.review(doc.id, self.table.fields[index.column()].key)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self.table is None or not index.isValid():
            return None
        cell = self.cell_at(index)
        review = self.review_at(index)
        if role == Qt.ItemDataRole.DisplayRole:
            if cell is None:
                return "…"
            value = review.final_value(cell.display) if review else cell.display
            if review is not None and review.decision == REJECTED:
                value = f"({cell.display})"
            lines = [value, check_line(cell), sure_line(cell), review_line(review)]
            return "\n".join(line for line in lines if line)
        if role == Qt.ItemDataRole.ToolTipRole and cell is not None:
            return plain_tooltip(self._tooltip(cell, review))  # the quote is model output
        if role == Qt.ItemDataRole.AccessibleDescriptionRole and cell is not None:
            return self._tooltip(cell, review)  # a screen reader says what was checked, in words
        if role == Qt.ItemDataRole.BackgroundRole:
            return None if high_contrast() else self._background(cell, review)
        return None

    @staticmethod
    def _tooltip(cell: Cell, review: Review | None) -> str:
        parts = []
        if cell.quote:
            parts.append(f'"{cell.quote}" (cited: {cell.cited or "nothing"})')
        parts.append(check_line(cell) or cell_status(cell))
        if decision_note(cell):
            parts.append(decision_note(cell))
        if cell.found and not cell.verified and cell.quote:
            parts.append("the quoted words are not in the document")
        if NOT_NAMED in cell.flags and cell.yes_no:
            parts.append("the model judged it present, but the passage it quoted never uses this clause's words")
        elif NOT_NAMED in cell.flags:
            parts.append(f'the model answered "{cell.value}", but no sentence of the document calls it so')
        if NOT_HELD in cell.flags:
            parts.append(f'the model answered "{cell.value}", but no page of the document holds it')
        if MOVED in cell.flags:
            parts.append("the model quoted another passage; this is the sentence of the document that states it")
        if cell.flags:
            parts.append(f"flags: {', '.join(cell.flags)}")
        if review is not None:
            extra = f": {review.value}" if review.decision == CORRECTED else ""
            parts.append(f"{review.decision} by {review.reviewer} {review.at}{extra}; the model said: {cell.display}")
        return "\n".join(parts)

    @staticmethod
    def _background(cell: Cell | None, review: Review | None) -> QBrush | None:
        if cell is None:
            return None
        if review is not None:
            return QBrush(COLORS["bad" if review.decision == REJECTED else "reviewed"])
        if not cell.found:
            return QBrush(COLORS["bad" if cell.flags and cell_status(cell) == "no answer" else "missing"])
        if cell.verdict == UNSUPPORTED:
            return QBrush(COLORS["bad"])
        if cell.verdict in (SUPPORTED, WRONG_PAGE, ADDED, PARTLY):
            return QBrush(COLORS["elsewhere"])
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self.table is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if orientation == Qt.Orientation.Horizontal:
                f = self.table.fields[section]
                return f"{f.name} (yes/no)" if f.yes_no else f.name
            return self.table.documents[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            if orientation == Qt.Orientation.Horizontal:
                return plain_tooltip(self.table.fields[section].description)
            doc = self.table.documents[section]
            return plain_tooltip(f"{doc.source_path}\nsha256 {doc.sha256}")
        return None


LIST_COLUMNS = ("Document", "Field", "Value", "Confidence", "Checked")
SHOW = (("Every cell", ()), ("Cells to check (check, low)", ("check", "low")), ("Low confidence only", ("low",)))
_SORT = Qt.ItemDataRole.UserRole + 1  # the number a column sorts by


class CellListModel(QAbstractTableModel):
    """One row per cell of the table: what a reviewer goes through, least sure first."""

    def __init__(self) -> None:
        super().__init__()
        self.table: ExtractionTable | None = None
        self.keys: list[tuple[int, int]] = []  # (row, column) of the grid, per list row

    def set_table(self, table: ExtractionTable) -> None:
        self.beginResetModel()
        self.table = table
        self.keys = [
            (r, c)
            for r, d in enumerate(table.documents)
            for c, f in enumerate(table.fields)
            if table.cell(d.id, f.key) is not None
        ]
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.keys)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(LIST_COLUMNS)

    def cell_and_review(self, row: int) -> tuple[Cell | None, Review | None]:
        if self.table is None or not 0 <= row < len(self.keys):
            return None, None
        r, c = self.keys[row]
        doc, f = self.table.documents[r], self.table.fields[c]
        return self.table.cell(doc.id, f.key), self.table.review(doc.id, f.key)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self.table is None or not index.isValid():
            return None
        cell, review = self.cell_and_review(index.row())
        if cell is None:
            return None
        r, c = self.keys[index.row()]
        column = index.column()
        if role == _SORT and column == 3:
            # Unscored cells last; a reviewed cell after every unreviewed one: it has been checked.
            sure = cell.confidence if cell.confidence is not None else 2.0
            return sure + (10.0 if review is not None else 0.0)
        if role in (Qt.ItemDataRole.DisplayRole, _SORT):
            value = review.final_value(cell.display) if review else cell.display
            texts = [
                self.table.documents[r].title,
                self.table.fields[c].name,
                value,
                f"{cell.sureness} ({cell.confidence:.0%})" if cell.confidence is not None else "not scored",
                " ".join(x for x in (check_line(cell) or cell_status(cell), review_line(review)) if x),
            ]
            return texts[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(ExtractionTableModel._tooltip(cell, review))
        if role == Qt.ItemDataRole.BackgroundRole:
            return ExtractionTableModel._background(cell, review)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return LIST_COLUMNS[section]
        return None


class _ConfidenceFilter(QSortFilterProxyModel):
    """The list, sorted by the chosen column, keeping only the cells of the chosen confidence words."""

    def __init__(self, source: CellListModel) -> None:
        super().__init__()
        self.cells = source
        self.words: tuple[str, ...] = ()
        self.setSourceModel(source)
        self.setSortRole(_SORT)

    def show_words(self, words: tuple[str, ...]) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt 6.10: invalidateFilter() is deprecated
            self.beginFilterChange()
            self.words = words
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.words = words
            self.invalidateFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:
        if not self.words:
            return True
        cell, _review = self.cells.cell_and_review(source_row)
        return cell is not None and cell.sureness in self.words


class ExtractionTableView(QWidget):
    """evidence_requested(run_id, document_id, field_key): a cell with a value was activated.
    review_requested(run_id, document_id, field_key, decision, value): a reviewer decided."""

    evidence_requested = Signal(int, int, str)
    review_requested = Signal(int, int, str, str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ExtractionTableModel()
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.view = QTableView()
        self.view.setObjectName("extractionTable")
        self.view.setAccessibleName("Extraction table")
        self.view.setAccessibleDescription("A row per document, a column per field; Enter opens a cell's passage")
        self.view.setModel(self.model)
        # Documents are named by their file names: cut in the middle, not a row header wider than the table.
        rows = self.view.verticalHeader()
        rows.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        rows.setMaximumWidth(self.fontMetrics().averageCharWidth() * 28)
        self.view.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideMiddle)  # not clipped at both ends
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setWordWrap(True)
        self.view.activated.connect(self._activated)
        self.view.doubleClicked.connect(self._activated)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.cells = CellListModel()
        self.sorted = _ConfidenceFilter(self.cells)
        self.list = QTableView()
        self.list.setModel(self.sorted)
        self.list.setSortingEnabled(True)
        self.list.sortByColumn(3, Qt.SortOrder.AscendingOrder)  # least sure first
        self.list.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setWordWrap(False)
        self.list.activated.connect(lambda _i: self.act("open"))
        self.list.doubleClicked.connect(lambda _i: self.act("open"))
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.setAccessibleName("Cells, least sure first")
        self.view.setAccessibleName("Extraction table")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.list)
        self.mode = QComboBox()
        self.mode.addItems(["Table", "Least sure first"])
        self.mode.setToolTip("The documents x fields table, or every cell in a list sorted by confidence")
        self.mode.setAccessibleName("View")
        self.mode.currentIndexChanged.connect(self._switch)
        self.show_filter = QComboBox()
        for text, _words in SHOW:
            self.show_filter.addItem(text)
        self.show_filter.setToolTip("Which cells the list shows, by how sure their decision is")
        self.show_filter.setAccessibleName("Show cells")
        self.show_filter.currentIndexChanged.connect(lambda i: self.sorted.show_words(SHOW[i][1]))
        self.show_filter.setEnabled(False)
        self.buttons: dict[str, QPushButton] = {}
        top = QHBoxLayout()
        top.addWidget(self.caption, 1)
        top.addWidget(QLabel("View:"))
        top.addWidget(self.mode)
        top.addWidget(self.show_filter)
        row = QHBoxLayout()
        for key, text, tip in (
            ("open", "Open passage", "Open the page with the supporting passage marked (or double-click the cell)"),
            (ACCEPTED, "Accept", "The answer is right"),
            (CORRECTED, "Correct…", "Give the right value; the model's answer is kept beside it"),
            (REJECTED, "Reject", "The answer is wrong and there is no value to give"),
            (CLEARED, "Clear review", "Take the decision back"),
        ):
            button = QPushButton(text)
            button.setToolTip(tip)
            button.clicked.connect(lambda _checked=False, k=key: self.act(k))
            row.addWidget(button)
            self.buttons[key] = button
        compact(*self.buttons.values())
        row.addStretch(1)
        self.view.selectionModel().currentChanged.connect(lambda *_: self._update_buttons())
        self.list.selectionModel().currentChanged.connect(lambda *_: self._update_buttons())
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.stack)
        layout.addLayout(row)
        self._update_buttons()

    def _switch(self, mode: int) -> None:
        self.stack.setCurrentIndex(mode)
        self.show_filter.setEnabled(mode == 1)
        self._update_buttons()

    def show_least_sure_first(self, words: tuple[str, ...] = ()) -> None:
        """The list of cells, least sure first, keeping only these confidence words (all when empty)."""
        self.mode.setCurrentIndex(1)
        self.show_filter.setCurrentIndex(next((i for i, (_t, w) in enumerate(SHOW) if w == words), 0))

    def current_index(self) -> QModelIndex:
        """The grid index of the cell in hand, in whichever view shows."""
        if self.stack.currentIndex() == 0:
            return self.view.currentIndex()
        current = self.list.currentIndex()
        if not current.isValid():
            return QModelIndex()
        r, c = self.cells.keys[self.sorted.mapToSource(current).row()]
        return self.model.index(r, c)

    def set_table(self, table: ExtractionTable) -> None:
        current = self.view.currentIndex()
        listed = self.current_index() if self.stack.currentIndex() == 1 else QModelIndex()
        self.model.set_table(table)
        self.cells.set_table(table)
        if current.isValid():
            self.view.setCurrentIndex(self.model.index(current.row(), current.column()))
        if listed.isValid() and (listed.row(), listed.column()) in self.cells.keys:
            row = self.cells.keys.index((listed.row(), listed.column()))
            self.list.setCurrentIndex(self.sorted.mapFromSource(self.cells.index(row, 0)))
        self.view.resizeRowsToContents()
        self.list.resizeColumnsToContents()
        run = table.run
        cells = list(table.cells.values())
        found = [c for c in cells if c.found]
        checked = sum(1 for c in found if c.verdict in (QUOTED, SUPPORTED))
        elsewhere = sum(1 for c in found if c.verdict in (WRONG_PAGE, ADDED))
        unsupported = sum(1 for c in found if c.verdict == UNSUPPORTED)
        unsure = sum(1 for c in cells if c.sureness in ("check", "low"))
        self.caption.setText(
            f"Run {run.id}: {run.template.name} v{run.template.version} - {run.model} - {len(found)} of "
            f"{len(cells)} with a value: {checked} quoted or supported, {elsewhere} on another page, "
            f"{unsupported} unsupported; {unsure} to check by confidence; {len(table.reviews)} reviewed"
        )
        self._update_buttons()

    def _update_buttons(self) -> None:
        index = self.current_index()
        cell = self.model.cell_at(index)
        review = self.model.review_at(index)
        for key, button in self.buttons.items():
            if key == "open":
                button.setEnabled(cell is not None and cell.found)
            elif key == CLEARED:
                button.setEnabled(review is not None)
            else:
                button.setEnabled(cell is not None)

    def _menu(self, pos: QPoint) -> None:
        shown = self.view if self.stack.currentIndex() == 0 else self.list
        index = shown.indexAt(pos)
        if not index.isValid():
            return
        shown.setCurrentIndex(index)
        menu = QMenu(self)
        for key, button in self.buttons.items():
            action = menu.addAction(button.text())
            action.setEnabled(button.isEnabled())
            action.triggered.connect(lambda _checked=False, k=key: self.act(k))
        menu.popup(shown.viewport().mapToGlobal(pos))

    def act(self, key: str) -> None:
        """Open the current cell's passage, or record a decision on it (asks for the value to correct)."""
        index = self.current_index()
        cell = self.model.cell_at(index)
        table = self.model.table
        if cell is None or table is None:
            return
        if key == "open":
            self._activated(index)
            return
        value = ""
        if key == CORRECTED:
            review = self.model.review_at(index)
            field = table.fields[index.column()]
            current = review.value if review is not None and review.decision == CORRECTED else cell.display
            value, ok = QInputDialog.getText(self, "Correct the value", f"{field.name}:", text=current)
            if not ok or not value.strip():
                return
        self.review_requested.emit(table.run.id, cell.document_id, cell.field_key, key, value)

    def _activated(self, index: _Index) -> None:
        cell = self.model.cell_at(index)
        table = self.model.table
        if cell is not None and cell.found and table is not None:
            self.evidence_requested.emit(table.run.id, cell.document_id, cell.field_key)
