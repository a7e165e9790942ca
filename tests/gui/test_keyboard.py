"""Keyboard only: Tab walks the window in the order it is laid out and reaches every control, every
menu item has its underlined letter, each panel is a shortcut away, and Help > Keyboard shortcuts
lists every key the window answers to, as docs/accessibility.md does."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

pytestmark = pytest.mark.gui
REPO = Path(__file__).resolve().parents[2]
# The window's controls as they are laid out: left to right, top to bottom within each panel.
LAYOUT_ORDER = [
    "matterSwitcher",
    "addFiles",
    "librarySearch",
    "library",
    "cancelAdding",
    "searchHits",
    "conversations",
    "newConversation",
    "renameConversation",
    "deleteConversation",
    "previousPage",
    "nextPage",
    "zoomOut",
    "zoomIn",
    "fitWidth",
    "thumbnails",
    "page",
    "pageText",
    "contactSheet",
    "keyframes",
    "flowText",
    "dismissHint",
    "transcript",
    "cancelReading",
    "question",
    "copyAnswer",
    "regenerate",
    "stop",
    "send",
    "readAheadPause",
]


def _focusable(window: QWidget) -> list[QWidget]:
    """Every control Tab may stop at: shown, enabled, taking focus from the keyboard."""
    return [
        w
        for w in window.findChildren(QWidget)
        if w.isVisible()
        and w.isEnabled()
        and w.focusPolicy() & Qt.FocusPolicy.TabFocus
        and not w.objectName().startswith("qt_")
        and w.focusProxy() is None
        and w.window() is window
    ]


def _walk(first: QWidget, key: Qt.Key = Qt.Key.Key_Tab, most: int = 200) -> list[QWidget]:
    """Press Tab from `first` until focus comes back to it; a control met on consecutive presses (the
    links inside an answer) counts once."""
    first.setFocus(Qt.FocusReason.TabFocusReason)
    stops = [first]
    for _ in range(most):
        QTest.keyClick(QApplication.focusWidget(), key)
        now = QApplication.focusWidget()
        if now is first:
            return stops
        if now is not stops[-1]:
            stops.append(now)
    raise AssertionError(f"Tab never came back to {first.objectName()}: {[w.objectName() for w in stops]}")


def test_tab_follows_the_layout_and_reaches_every_control(answered) -> None:  # type: ignore[no-untyped-def]
    window = answered
    by_name = {w.objectName(): w for w in window.findChildren(QWidget) if w.objectName() in LAYOUT_ORDER}
    assert set(by_name) == set(LAYOUT_ORDER), set(LAYOUT_ORDER) - set(by_name)
    shown = [name for name in LAYOUT_ORDER if by_name[name] in _focusable(window)]
    assert {"library", "page", "transcript", "question", "send", "previousPage"} <= set(shown)

    walked = [w.objectName() for w in _walk(by_name[shown[0]])]
    assert walked == shown
    missed = [f"{type(w).__name__}({w.objectName()})" for w in _focusable(window) if w.objectName() not in walked]
    assert missed == [], "controls Tab never reaches"
    # Shift+Tab goes back the same way.
    back = [w.objectName() for w in _walk(by_name[shown[0]], Qt.Key.Key_Backtab)]
    assert back == [shown[0], *reversed(shown[1:])]


def test_a_key_goes_to_each_panel_and_the_side_panels_hide_and_come_back(answered) -> None:  # type: ignore[no-untyped-def]
    window = answered
    for keys, name in (
        ("Ctrl+1", "library"),
        ("Ctrl+2", "conversations"),
        ("Ctrl+3", "page"),
        ("Ctrl+4", "transcript"),
        ("Ctrl+5", "question"),
    ):
        QTest.keySequence(window, keys)
        assert QApplication.focusWidget().objectName() == name, keys
    QTest.keySequence(window, "Ctrl+Shift+L")
    assert window.left.isHidden() and window.library.list not in _focusable(window)
    QTest.keySequence(window, "Ctrl+1")  # going to a hidden panel shows it
    assert not window.left.isHidden() and QApplication.focusWidget() is window.library.list
    QTest.keySequence(window, "Ctrl+Shift+V")
    assert window.viewer.isHidden() and not window.panel_actions["document"].isChecked()
    QTest.keySequence(window, "Ctrl+Shift+V")
    assert not window.viewer.isHidden()


def test_every_menu_item_has_an_underlined_letter_of_its_own(answered) -> None:  # type: ignore[no-untyped-def]
    from ui.shortcuts_dialog import menu_items

    window = answered
    menus = [a for a in window.menuBar().actions() if a.menu() is not None]
    letters = [a.text()[a.text().index("&") + 1].lower() for a in menus if "&" in a.text()]
    assert len(letters) == len(menus) == len(set(letters)), [a.text() for a in menus]
    for top in menus:
        items = [a for a in top.menu().actions() if not a.isSeparator()]
        marked = [a.text() for a in items if "&" in a.text().replace("&&", "")]
        assert len(marked) == len(items), f"{top.text()}: {[a.text() for a in items]}"
        keys = [t[t.index("&") + 1].lower() for t in marked]
        assert len(keys) == len(set(keys)), f"{top.text()} repeats a letter: {marked}"
    assert len(menu_items(window)) > 20


def test_the_shortcut_list_opens_from_the_keyboard_and_matches_the_docs(answered) -> None:  # type: ignore[no-untyped-def]
    from ui.shortcuts_dialog import ShortcutsDialog, shortcut_rows

    window = answered
    QTest.keyClick(window, Qt.Key.Key_F1)
    dialogs = [w for w in QApplication.topLevelWidgets() if isinstance(w, ShortcutsDialog) and w.isVisible()]
    assert len(dialogs) == 1
    table = dialogs[0].table
    rows = shortcut_rows(window)
    listed = {(table.item(r, 0).text(), table.item(r, 1).text()) for r in range(table.rowCount())}
    assert listed == {(keys, what) for keys, what, _ in rows}
    keys = {k for k, _, _ in rows}
    for expected in ("Ctrl+O", "Ctrl+F", "Ctrl+Return", "Esc", "PgDown", "F2", "Ctrl+1", "Ctrl+Shift+L", "F1"):
        assert any(expected in k for k in keys), (expected, sorted(keys))
    docs = (REPO / "docs" / "accessibility.md").read_text(encoding="utf-8")
    undocumented = sorted({k for k in keys if f"`{k}`" not in docs})
    assert undocumented == [], "keys missing from docs/accessibility.md"
    dialogs[0].close()


def test_the_question_box_passes_tab_on_and_sends_with_ctrl_enter(answered, qtbot) -> None:  # type: ignore[no-untyped-def]
    window = answered
    box = window.chat.input
    box.setFocus()
    QTest.keyClicks(box, "Who are the parties?")
    QTest.keyClick(box, Qt.Key.Key_Tab)
    assert "\t" not in box.toPlainText() and QApplication.focusWidget() is not box
    asked: list[str] = []
    window.chat.send_requested.disconnect()
    window.chat.send_requested.connect(asked.append)
    box.setFocus()
    QTest.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert asked == ["Who are the parties?"]
