from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, starter_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QMessageBox

    from app.context import open_app
    from ui.main_window import MainWindow

    warnings: list[str] = []
    # A modal dialog would block the offscreen test; record what the user would have been told.
    monkeypatch.setattr(QMessageBox, "warning", lambda _parent, _title, text, *a, **k: warnings.append(text))
    ctx = open_app()
    win = MainWindow(ctx)
    win.warnings = warnings  # type: ignore[attr-defined]
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()
    ctx.close()


def char_format_at(transcript, href: str):  # type: ignore[no-untyped-def]
    block = transcript.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            if it.fragment().charFormat().anchorHref() == href:
                return it.fragment().charFormat()
            it += 1
        block = block.next()
    raise AssertionError(f"no link {href} in the transcript")
