"""A first run that explains itself: the setup page only while no usable model is active, three lines
at its top; a hint over the chat once the first document is in, until dismissed; and the window's
place and panels remembered between runs (a damaged record ignored)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui


@pytest.fixture
def open_window(qtbot, starter_home: Path) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """Opens windows on the same library, one after another (closing the last), as restarts do."""
    from app.context import open_app
    from ui.main_window import MainWindow

    opened: list[tuple[object, object]] = []

    def start():  # type: ignore[no-untyped-def]
        for window, ctx in opened:
            window.close()  # type: ignore[attr-defined]
            ctx.close()  # type: ignore[attr-defined]
        opened.clear()
        ctx = open_app()
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        window.show()
        opened.append((window, ctx))
        return window

    yield start
    for window, ctx in opened:
        window.close()  # type: ignore[attr-defined]
        ctx.close()  # type: ignore[attr-defined]


def test_the_setup_page_opens_only_without_a_usable_model_and_explains_itself(  # type: ignore[no-untyped-def]
    qtbot, open_window, tiny_qwen35: Path
) -> None:
    from app.engine.setup import FIRST_LINES
    from ui.model_setup import ModelSetupDialog

    window = open_window()
    record, _ = window.ctx.models.add(tiny_qwen35)
    window.ctx.settings.active_model = record.sha256
    window.ctx.save_settings()
    assert window.setup_menu.offer_model_setup() is None  # a model of the user's own is active: no page

    window.ctx.settings.active_model = ""  # back to the demo model: nothing usable chosen
    window.ctx.save_settings()
    dialog = window.setup_menu.offer_model_setup()
    assert isinstance(dialog, ModelSetupDialog)
    intro = dialog.intro.text()
    assert intro.count("<br>") == 2 and len(FIRST_LINES) == 3
    assert "this computer" in intro and "Tools &gt; Model setup opens this page again" in intro
    qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
    dialog.close()
    assert window.setup_menu.offer_model_setup() is None  # once; Tools > Model setup… has it after
    assert window.setup_menu.actions["model_setup"].isEnabled()


def test_the_first_document_brings_a_hint_until_it_is_dismissed(  # type: ignore[no-untyped-def]
    qtbot, open_window, contract_pdf: Path
) -> None:
    window = open_window()
    hint = window.chat.hint
    assert not hint.isVisible()  # nothing in the library yet: nothing to say about it
    with qtbot.waitSignal(window.ingest_worker.finished, timeout=60000):
        window.add_paths([str(contract_pdf)])
    qtbot.waitUntil(hint.isVisible, timeout=5000)
    assert "Ctrl+Enter" in hint.label.text() and hint.button.text() == "Got it"

    window = open_window()  # still there after a restart, until dismissed
    hint = window.chat.hint
    assert hint.isVisible()
    hint.button.setFocus()
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    QTest.keyClick(hint.button, Qt.Key.Key_Space)  # dismissed from the keyboard
    assert not hint.isVisible()

    window = open_window()
    assert not window.chat.hint.isVisible()


def test_asking_a_question_retires_the_hint(qtbot, open_window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    window = open_window()
    doc = window.ctx.library.add(contract_pdf).document
    window.refresh_library(select=doc.id)
    assert window.chat.hint.isVisible()
    window.chat.input.setPlainText("Which law governs?")
    window.chat.send_button.click()
    assert not window.chat.hint.isVisible()
    qtbot.waitUntil(lambda: window.chat.send_button.isEnabled(), timeout=300000)
    window = open_window()
    assert not window.chat.hint.isVisible()


def test_the_window_comes_back_where_it_was_with_its_panels(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    from ui.window_state import STATE_FILE

    window = open_window()
    screen = window.screen().availableGeometry()
    assert screen.contains(window.frameGeometry())  # the first start: a share of the screen, inside it
    window.setGeometry(20, 30, 770, 600)
    window.splitter.setSizes([250, 300, 350])
    window.panel_actions["library"].setChecked(False)  # hidden by the user: stays hidden
    qtbot.wait(50)
    sizes = window.splitter.sizes()
    window = open_window()
    assert (window.width(), window.height()) == (770, 600)
    assert abs(window.x() - 20) <= 4 and abs(window.y() - 30) <= 4  # give or take the frame's edge
    assert window.splitter.sizes() == sizes and window.left.isHidden()
    assert not window.panel_actions["library"].isChecked()
    state = window.ctx.paths.config_dir / STATE_FILE
    assert state.stat().st_mode & 0o077 == 0  # user-only, like everything Folio writes

    window.close()
    state.write_text("{ not json")
    window = open_window()  # a damaged record: the default place, never an error
    assert window.screen().availableGeometry().contains(window.frameGeometry())
    assert not window.left.isHidden()
