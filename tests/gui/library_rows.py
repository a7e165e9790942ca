"""Reading the window's library list in tests: its rows come from a model (ui/library_model.py),
fetched a page at a time, not from one widget item per row."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt


def count(window) -> int:  # type: ignore[no-untyped-def]
    """Rows listed now: the documents fetched so far and the files that could not be added."""
    return int(window.library.model.rowCount())


def index(window, row: int) -> QModelIndex:  # type: ignore[no-untyped-def]
    return window.library.model.index(row)  # type: ignore[no-any-return]


def texts(window) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(index(window, i).data(Qt.ItemDataRole.DisplayRole)) for i in range(count(window))]


def ids(window) -> list[int]:  # type: ignore[no-untyped-def]
    """The listed documents' ids, in list order (failed files have none)."""
    values = (index(window, i).data(Qt.ItemDataRole.UserRole) for i in range(count(window)))
    return [int(v) for v in values if v is not None]


def select_row(window, row: int) -> None:  # type: ignore[no-untyped-def]
    """Add a row to the selection, as a Ctrl+click would."""
    window.library.list.selectionModel().select(index(window, row), QItemSelectionModel.SelectionFlag.Select)
