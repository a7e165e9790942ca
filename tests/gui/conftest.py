from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui
# An answer whose sentences get three different checks (wrong page, source added by Folio, unsupported).
ANSWERED = (
    "The agreement is governed by the laws of the State of Delaware [p. 1]. "
    "The Client pays a monthly fee of 12,500 US dollars. The monthly fee is 99,000 euros [p. 2]."
)


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


@pytest.fixture
def answered(qtbot, starter_home: Path, contract_pdf: Path) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """The window with a contract selected and an answer about it on screen (nothing read ahead, so
    the status bar holds still)."""
    from app.context import open_app
    from tests.fixtures.answers import store_cited_answer
    from ui.main_window import MainWindow

    ctx = open_app()
    ctx.settings.read_ahead = False
    ctx.save_settings()
    doc = ctx.library.add(contract_pdf).document
    store_cited_answer(ctx, [doc.id], ANSWERED)
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    window.refresh_library(select=doc.id)
    qtbot.waitUntil(lambda: window.viewer.last is not None and window.conversation_id is not None, timeout=15000)
    window.activateWindow()
    qtbot.waitActive(window)
    yield window
    window.close()
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
