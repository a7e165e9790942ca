"""The documents x fields table of an extraction run; activating a cell asks to open its evidence."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QLabel, QTableView, QVBoxLayout, QWidget

from app.export import cell_status
from app.extraction import Cell, ExtractionTable
from ui.safe_text import plain_tooltip

COLORS = {
    "unverified": QColor("#f8d7da"),
    "verified (fuzzy)": QColor("#fff3cd"),
    "not found": QColor("#e9ecef"),
}
_Index = QModelIndex | QPersistentModelIndex


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

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self.table is None or not index.isValid():
            return None
        cell = self.cell_at(index)
        status = cell_status(cell)
        if role == Qt.ItemDataRole.DisplayRole:
            return cell.display if cell else "…"
        if role == Qt.ItemDataRole.ToolTipRole and cell is not None and cell.found:
            flags = f"\nflags: {', '.join(cell.flags)}" if cell.flags else ""
            return plain_tooltip(f'"{cell.quote}" {cell.anchor_text}\n{status}{flags}')  # the quote is model output
        if role == Qt.ItemDataRole.BackgroundRole:
            if cell is not None and cell.found and cell.flags:
                return QBrush(COLORS["unverified"])
            color = COLORS.get(status)
            return QBrush(color) if color else None
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self.table is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if orientation == Qt.Orientation.Horizontal:
                return self.table.fields[section].name
            return self.table.documents[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            if orientation == Qt.Orientation.Horizontal:
                return plain_tooltip(self.table.fields[section].description)
            doc = self.table.documents[section]
            return plain_tooltip(f"{doc.source_path}\nsha256 {doc.sha256}")
        return None


class ExtractionTableView(QWidget):
    """Emits evidence_requested(run_id, document_id, field_key) when a found cell is activated."""

    evidence_requested = Signal(int, int, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ExtractionTableModel()
        self.caption = QLabel("")
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setWordWrap(True)
        self.view.activated.connect(self._activated)
        self.view.doubleClicked.connect(self._activated)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.view)

    def set_table(self, table: ExtractionTable) -> None:
        self.model.set_table(table)
        run = table.run
        found = sum(1 for c in table.cells.values() if c.found)
        flagged = sum(1 for c in table.cells.values() if c.found and (c.flags or not c.verified))
        self.caption.setText(
            f"Run {run.id}: {run.template.name} v{run.template.version} - {run.model} - "
            f"{found} found, {flagged} flagged"
        )

    def _activated(self, index: QModelIndex) -> None:
        cell = self.model.cell_at(index)
        table = self.model.table
        if cell is not None and cell.found and table is not None:
            self.evidence_requested.emit(table.run.id, cell.document_id, cell.field_key)
