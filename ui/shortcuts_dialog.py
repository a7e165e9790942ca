"""Help > Keyboard shortcuts: every key the window answers to, read from the window itself.

The menus' actions and the panels' shortcuts (each QShortcut says what it does in its whatsThis) are
listed as they are, so the list cannot drift from the code; the few keys Qt's own widgets answer to
(Tab, arrows, Enter on a link) are added from BASICS. docs/accessibility.md lists the same keys
(a test compares them).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMainWindow,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui.sizing import on_screen, text_width

BASICS = (
    ("Tab, Shift+Tab", "Move to the next or previous control, in the order they are laid out", "Everywhere"),
    ("Alt + underlined letter", "Open a menu (Alt+F: File, Alt+W: Work, Alt+T: Tools, Alt+H: Help)", "Everywhere"),
    ("Up, Down, Shift+Up, Shift+Down", "Choose a document; with Shift, several", "Library"),
    ("Ctrl+Space", "Add the document at the cursor to the selection, or take it out", "Library"),
    ("Tab, then Enter", "Move to a citation or a sentence's check in an answer, and open its page", "Answers"),
    ("Menu key, Shift+F10", "The actions of the chosen cell (accept, correct, reject)", "Extraction table"),
)


def _plain(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").replace("…", "").strip()


def _keys(sequences: list[QKeySequence]) -> str:
    return ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in sequences if not s.isEmpty())


def menu_items(window: QMainWindow) -> list[tuple[QAction, str]]:
    """Every action in the window's menus, with the menu it is in ('Work', 'File > Recent documents')."""
    found: list[tuple[QAction, str]] = []

    def walk(menu: QMenu, path: str) -> None:
        for action in menu.actions():
            sub = action.menu()
            if isinstance(sub, QMenu):
                walk(sub, f"{path} > {_plain(action.text())}")
            elif not action.isSeparator():
                found.append((action, path))

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, _plain(top.text()))
    return found


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str, str]]:
    """(keys, what they do, where) for the menus' shortcuts, the panels' shortcuts, then BASICS."""
    rows = [(keys, _plain(a.text()), path) for a, path in menu_items(window) if (keys := _keys(a.shortcuts()))]
    for shortcut in window.findChildren(QShortcut):
        if shortcut.whatsThis() and (keys := _keys([shortcut.key()])):
            rows.append((keys, shortcut.whatsThis(), "Panels"))
    return rows + list(BASICS)


class ShortcutsDialog(QDialog):
    def __init__(self, window: QMainWindow, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.setWindowTitle("Keyboard shortcuts")
        self.setObjectName("keyboardShortcuts")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 3)
        self.table.setObjectName("shortcutList")
        self.table.setAccessibleName("Keyboard shortcuts")
        self.table.setHorizontalHeaderLabels(["Keys", "What they do", "Where"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        for row, values in enumerate(rows):
            for column, value in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(value))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(on_screen(self, QSize(text_width(self, 100), self.fontMetrics().lineSpacing() * 32)))
        self.table.resizeRowsToContents()
