"""A question whose document does not fit the model's context, in the real window with the REAL starter
model and a context limit far below the document: the refusal is shown, the window offers to read it
another way, each reading with how long it would take on this computer (unknown before the model has
read anything here), and the answer read in passes (or by the pages the user names) says what was read."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel

from tests.e2e.test_passes import _long_pdf, _settings
from tests.fixtures.prompt_calls import record_prompt_calls

pytestmark = pytest.mark.gui


@pytest.fixture
def tight_context(starter_home: Path) -> Path:
    _settings(starter_home)  # a 1,024-token context limit, one llama.cpp thread
    return starter_home


def _ask(qtbot, window, question: str):  # type: ignore[no-untyped-def]
    window.chat.input.setPlainText(question)
    QTest.keyClick(window.chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    return _wait_dialog(qtbot, window)


def _wait_dialog(qtbot, window):  # type: ignore[no-untyped-def]
    from ui.strategy_dialog import StrategyDialog

    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(StrategyDialog)), timeout=120000)
    return next(d for d in window.findChildren(StrategyDialog) if d.isVisible())


def _answered(qtbot, window):  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: window.chat.send_button.isEnabled() and window._job is None, timeout=300000)
    messages = window.conversations.messages(window.conversation_id)
    assert [m.role for m in messages] == ["user", "assistant"]  # one turn: the refusal was not stored
    return messages[1]


def test_a_document_too_big_is_offered_passes_and_the_answer_says_what_was_read(
    tight_context: Path, window, qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    calls = record_prompt_calls(monkeypatch)
    window.add_paths([str(_long_pdf(tmp_path, pages=8))], interactive=False)
    qtbot.waitUntil(lambda: len(window.ctx.library.all()) == 1 and not window._batches, timeout=60000)
    doc = window.ctx.library.all()[0]
    window.library.select(doc.id)

    dialog = _ask(qtbot, window, "When is batch 7 delivered?")
    shown = window.chat.transcript_text()
    assert "context limit holds 1,024" in shown  # the refusal, in the chat
    # Without the command line's advice to select fewer pages: the dialog offers the ways on.
    assert "select fewer" not in shown and "select fewer" not in dialog.findChild(QLabel).text()
    assert window.statusBar().currentMessage().endswith(": choose how to read it")
    assert dialog.passes.text() == "Read all 8 pages, in passes"
    # A fresh home: the model has read nothing on this computer, so no time is made up.
    unknown = "time unknown until Folio has read a document with this model"
    planned = re.fullmatch(rf"(\d+) parts, {unknown}", dialog.passes_time.text())
    assert planned, dialog.passes_time.text()
    assert dialog.search_time.text() == f"one pass, {unknown}"
    assert dialog.passes.accessibleDescription() == dialog.passes_time.text()
    assert dialog.passes_time.isVisible() and dialog.search_time.isVisible()
    calls.clear()
    dialog.passes.click()
    answer = _answered(qtbot, window)
    # The passes are read as the estimate planned them: every count was a request's own prompt.
    assert calls.count("prepare") >= 2
    assert all(calls[i - 1] == "prepare" for i, call in enumerate(calls) if call == "count"), calls
    footer = answer.text.splitlines()[-1]
    assert footer.startswith("Read: pages 1-8 in ") and " passes: pages 1-" in footer, footer
    assert f" in {planned.group(1)} passes: " in footer  # the parts estimated are the passes read
    shown = window.chat.transcript_text()
    assert "context limit holds" not in shown and shown.count("When is batch 7 delivered?") == 1
    assert footer in shown
    gauge = window.status.gauge  # the fullest pass against the context, not every pass added up
    assert not gauge.isHidden() and gauge.maximum() == 1024 and 0 < gauge.value() <= 1024, gauge.format()
    assert gauge.format() == f"context {gauge.value():,} / 1,024"


def test_pages_the_user_names_are_checked_then_read(tight_context: Path, window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window.add_paths([str(_long_pdf(tmp_path, pages=8))], interactive=False)
    qtbot.waitUntil(lambda: len(window.ctx.library.all()) == 1 and not window._batches, timeout=60000)
    window.library.select(window.ctx.library.all()[0].id)

    dialog = _ask(qtbot, window, "When is batch 3 delivered?")
    QTest.keyClicks(dialog.page_list, "3-2")
    dialog.choose.click()
    assert dialog.isVisible() and "runs backwards" in dialog.error.text()  # said in the dialog, kept open
    dialog.page_list.setText("2-3, 40")
    dialog.choose.click()
    assert dialog.isVisible() and "page 40 is past its end" in dialog.error.text()
    dialog.page_list.setText("2-3")
    QTest.keyClick(dialog.page_list, Qt.Key.Key_Return)
    answer = _answered(qtbot, window)
    assert answer.text.splitlines()[-1] == "Read: pages 2-3 of 8 (chosen by the user); not read: the other 6 pages."

    # Regenerate: the question does not fit again, so the window offers the readings again; the old
    # answer stays (stored and on screen) until the new reply is stored in its place. That answer
    # measured how fast this computer reads and writes with the model: each reading now has a time.
    window.chat.regenerate_button.click()
    again = _wait_dialog(qtbot, window)
    assert window.conversations.message(answer.id).text == answer.text  # not dropped by the refusal
    timed = r"about \d+(\.\d)? (s|min|h) on this computer"
    assert re.fullmatch(rf"\d+ parts, {timed}", again.passes_time.text()), again.passes_time.text()
    assert re.fullmatch(rf"one pass, {timed}", again.search_time.text()), again.search_time.text()
    again.page_list.setText("2-3")
    QTest.keyClick(again.page_list, Qt.Key.Key_Return)
    replaced = _answered(qtbot, window)
    assert replaced.id != answer.id and replaced.text.splitlines()[-1] == answer.text.splitlines()[-1]
    assert window.chat.transcript_text().count("When is batch 3 delivered?") == 1


def test_stop_while_the_readings_are_estimated_offers_nothing_and_keeps_nothing(
    tight_context: Path, window, qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from app.passes.service import LongQuestion
    from ui.strategy_dialog import StrategyDialog

    # The estimate waits, once started, for the test to press Stop: then it plans, as it would have
    # when Stop came during its measures (each a count by the engine, seconds on a long document).
    estimating, pressed = threading.Event(), threading.Event()
    estimate = LongQuestion.estimate

    def held(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        estimating.set()
        assert pressed.wait(60)
        return estimate(self, *args, **kwargs)

    monkeypatch.setattr(LongQuestion, "estimate", held)
    window.add_paths([str(_long_pdf(tmp_path, pages=8))], interactive=False)
    qtbot.waitUntil(lambda: len(window.ctx.library.all()) == 1 and not window._batches, timeout=60000)
    window.library.select(window.ctx.library.all()[0].id)
    window.chat.input.setPlainText("When is batch 7 delivered?")
    window.chat.send_button.click()
    qtbot.waitUntil(estimating.is_set, timeout=120000)
    window.chat.stop_button.click()
    pressed.set()
    qtbot.waitUntil(lambda: window._job is None, timeout=120000)
    assert not any(d.isVisible() for d in window.findChildren(StrategyDialog))  # Stop: nothing offered
    shown = window.chat.transcript_text()
    assert "context limit holds 1,024" in shown and "stopped before the other readings were planned" in shown
    assert window.conversations.all() == []  # nothing stored

    # Asked again, the readings are planned and offered in full: the stop left nothing half-done.
    dialog = _ask(qtbot, window, "When is batch 7 delivered?")
    assert re.fullmatch(r"\d+ parts, time unknown until Folio has read a document with this model",
                        dialog.passes_time.text())  # fmt: skip

    # Pages the user names are planned when chosen (measured against the context); Stop then too.
    asking, pressed = threading.Event(), threading.Event()
    ask = LongQuestion.ask

    def held_ask(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        asking.set()
        assert pressed.wait(60)
        return ask(self, *args, **kwargs)

    monkeypatch.setattr(LongQuestion, "ask", held_ask)
    dialog.page_list.setText("2-3")
    dialog.choose.click()
    qtbot.waitUntil(asking.is_set, timeout=60000)
    window.chat.stop_button.click()
    pressed.set()
    qtbot.waitUntil(lambda: window._job is None, timeout=120000)
    assert "stopped before any page was read" in window.chat.transcript_text()
    assert window.conversations.all() == []  # nothing stored: no question without its answer
