"""Read-ahead in the real window with the real starter model: a document added is read without any
further action; its library item and the status bar say how far, Pause keeps what was read and
Resume continues it, and the item ends "ready — questions start at once"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.test_read_cli import _long_contract
from tests.gui import library_rows as rows

pytestmark = pytest.mark.gui


def _item_text(window: object) -> str:
    return rows.texts(window)[0]


def test_added_document_is_read_ahead_with_pause_and_resume(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    status = window.status
    window.ctx.settings.read_ahead = True  # the window's test settings have it off
    window.add_paths([str(_long_contract(tmp_path / "supply.txt", 110))], interactive=False)

    # Read with no further action: the item and the status bar show the reading as it goes.
    qtbot.waitUntil(lambda: rows.count(window) == 1, timeout=60000)
    qtbot.waitUntil(lambda: re.search(r"reading \d+% · about", _item_text(window)) is not None, timeout=120000)
    assert status.reading_label.text().startswith("reading ahead: supply")
    assert status.reading_pause.isVisible() and status.reading_pause.text() == "Pause"

    qtbot.mouseClick(status.reading_pause, qtbot_left())
    qtbot.waitUntil(lambda: status.reading_label.text() == "reading ahead: paused", timeout=60000)
    assert status.reading_pause.text() == "Resume"
    window._show_reading_states()
    kept = re.search(r"read (\d+)% · continues where it stopped", _item_text(window))
    assert kept and 0 < int(kept.group(1)) < 100, _item_text(window)  # the pause kept what was read

    qtbot.mouseClick(status.reading_pause, qtbot_left())
    qtbot.waitUntil(lambda: "ready — questions start at once" in _item_text(window), timeout=240000)
    qtbot.waitUntil(lambda: status.reading_label.isHidden(), timeout=30000)  # all read: nothing to say
    assert not status.reading_pause.isVisible()


def qtbot_left():  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton
