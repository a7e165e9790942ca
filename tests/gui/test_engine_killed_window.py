"""The window, when its llama.cpp engine process is killed mid-answer (as the out-of-memory killer
would): the answer is marked failed with one plain line, the window stays usable, and the next
question starts a new engine and is answered."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil
import pytest

from tests.gui import library_rows as rows

pytestmark = [pytest.mark.gui, pytest.mark.e2e]


def _engines() -> list[psutil.Process]:
    found = []
    for child in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def test_engine_killed_mid_answer_is_reported_and_the_next_question_works(window, qtbot, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    settings = window.ctx.settings
    settings.max_answer_tokens = 2000
    window.add_paths([str(contract_pdf)])
    qtbot.waitUntil(lambda: rows.count(window) == 1, timeout=30000)
    rows.select_row(window, 0)
    # The page-drawing child starts with the first page shown: wait for it, so the one child the
    # question starts is the engine's.
    qtbot.waitUntil(lambda: window.viewer.last is not None, timeout=30000)
    before = {p.pid for p in _engines()}
    window.chat.input.setPlainText("Write a long story about the parties to this agreement.")
    window.chat.send_button.click()
    qtbot.waitUntil(lambda: bool(window.chat.transcript.live_answer), timeout=120000)  # streaming: mid-answer
    engines = [p for p in _engines() if p.pid not in before]
    assert len(engines) == 1
    engines[0].send_signal(signal.SIGKILL)
    qtbot.waitUntil(lambda: window.chat.send_button.isEnabled(), timeout=60000)

    reason = window.statusBar().currentMessage()
    assert "model engine stopped unexpectedly (killed by SIGKILL" in reason and "\n" not in reason
    assert "Could not answer" in window.chat.transcript_text()
    messages = window.conversations.messages(window.conversation_id)
    assert [m.status for m in messages] == ["complete", "error"]

    settings.max_answer_tokens = 8
    window.chat.input.setPlainText("Which law governs this agreement?")
    window.chat.send_button.click()
    qtbot.waitUntil(lambda: window.chat.send_button.isEnabled(), timeout=120000)
    messages = window.conversations.messages(window.conversation_id)
    assert [m.status for m in messages][-2:] == ["complete", "complete"]
    assert len(messages) == 4
