"""The settings dialog: shows the saved values, refuses bad ones in one line, saves atomically, checks a
model server, shows the data folder and clears caches only after the user confirms."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gui import library_rows as rows

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def _worker_threads_end() -> Iterator[None]:
    from ui.background import stop_worker_threads

    yield
    assert stop_worker_threads()


@pytest.fixture
def dialog(qtbot, ctx):  # type: ignore[no-untyped-def]
    from ui.settings_dialog import SettingsDialog

    d = SettingsDialog(ctx)
    qtbot.addWidget(d)
    d.show()
    return d


def _saved(ctx) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return tomllib.loads(ctx.paths.settings_file.read_text(encoding="utf-8"))


def test_defaults_are_shown_and_the_server_is_off(dialog, ctx) -> None:  # type: ignore[no-untyped-def]
    assert not dialog.thinking.isChecked()
    assert dialog.context_cap.value() == 0 and dialog.context_cap.text() == "Automatic"
    assert dialog.kv_type.currentData() == "auto"
    assert dialog.threads.value() == 0 and dialog.threads.text().startswith("Automatic")
    assert not dialog.server_enabled.isChecked() and not dialog.server_url.isEnabled()
    assert str(ctx.paths.data_dir) in dialog.data_label.text() and str(ctx.paths.cache_dir) in dialog.data_label.text()


def test_saving_writes_the_file_and_updates_the_shared_settings(qtbot, dialog, ctx) -> None:  # type: ignore[no-untyped-def]
    shared = ctx.settings
    dialog.thinking.setChecked(True)
    dialog.context_cap.setValue(65_536)
    dialog.kv_type.setCurrentIndex(dialog.kv_type.findData("q8_0"))
    dialog.threads.setValue(2)
    with qtbot.waitSignal(dialog.saved) as signal:
        dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    assert signal.args == [True]  # the engine is made differently now
    assert ctx.settings is shared and (shared.thinking, shared.context_cap, shared.kv_cache_type, shared.threads) == (
        True,
        65_536,
        "q8_0",
        2,
    )
    saved = _saved(ctx)
    assert (saved["thinking"], saved["context_cap"], saved["kv_cache_type"], saved["threads"]) == (
        True,
        65536,
        "q8_0",
        2,
    )
    assert not dialog.isVisible()


def test_only_thinking_changed_keeps_the_engine(qtbot, dialog) -> None:  # type: ignore[no-untyped-def]
    dialog.thinking.setChecked(True)
    with qtbot.waitSignal(dialog.saved) as signal:
        dialog.save()
    assert signal.args == [False]


def test_drafting_is_on_by_default_and_its_length_is_saved(qtbot, dialog, ctx) -> None:  # type: ignore[no-untyped-def]
    assert dialog.speculative.isChecked() and dialog.draft_tokens.value() == 8 and dialog.draft_tokens.isEnabled()
    dialog.draft_tokens.setValue(4)
    dialog.speculative.setChecked(False)
    assert not dialog.draft_tokens.isEnabled()
    with qtbot.waitSignal(dialog.saved) as signal:
        dialog.save()
    assert signal.args == [False]  # the next question plans its context without drafting; no restart
    assert (ctx.settings.speculative, ctx.settings.draft_tokens) == (False, 4)
    assert (_saved(ctx)["speculative"], _saved(ctx)["draft_tokens"]) == (False, 4)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: d.server_enabled.setChecked(True), "Enter the model server's URL, or turn the model server off"),
        (
            lambda d: (d.server_enabled.setChecked(True), d.server_url.setText("gpu-box:8000")),
            "The server URL must start with http:// or https://, e.g. http://192.168.1.20:8000/v1",
        ),
        (
            lambda d: (d.server_enabled.setChecked(True), d.server_url.setText("http://")),
            "Settings: the model server URL must look like http://host:port (got 'http://')",
        ),
        (lambda d: d.context_cap.setValue(1000), "The context limit must be at least 4,096 tokens (or Automatic)"),
    ],
)
def test_bad_values_are_one_line_and_nothing_is_saved(dialog, ctx, setup, message: str) -> None:  # type: ignore[no-untyped-def]
    before = ctx.paths.settings_file.read_bytes() if ctx.paths.settings_file.exists() else None
    setup(dialog)
    dialog.save()
    assert dialog.isVisible() and dialog.error_label.text() == message and "\n" not in message
    after = ctx.paths.settings_file.read_bytes() if ctx.paths.settings_file.exists() else None
    assert after == before and ctx.settings.server_url == ""


def test_check_connection_against_a_real_http_server(qtbot, dialog) -> None:  # type: ignore[no-untyped-def]
    from tests.fixtures.openai_stub import stub_server

    def unused(handler: Any, body: dict[str, Any]) -> None:
        handler.send_json(500, {"error": {"message": "unused"}})

    with stub_server(unused, models=[{"id": "qwen3.5-9b", "max_model_len": 262144}]) as (url, _state):
        dialog.server_enabled.setChecked(True)
        dialog.server_url.setText(url)
        dialog.check_connection()
        assert not dialog.buttons.isEnabled()  # no closing while the check runs
        qtbot.waitUntil(lambda: not dialog._checking, timeout=20000)
    host = url.removeprefix("http://")
    assert dialog.server_status.text() == f"Connected: qwen3.5-9b at {host}, context 262,144 tokens"
    assert dialog.buttons.isEnabled()
    dialog.check_connection()  # the server has gone away
    qtbot.waitUntil(lambda: not dialog._checking, timeout=20000)
    assert "refused the connection" in dialog.server_status.text() and "\n" not in dialog.server_status.text()


def test_clear_caches_asks_first(qtbot, dialog, ctx, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QMessageBox

    from inference.state_cache import StateStore

    def snapshot(tmp: Path) -> int:
        tmp.write_bytes(b"s" * 4096)
        return 4096

    StateStore(ctx.paths.state_cache_dir, 10**9).save("contract", 10, snapshot)
    dialog._show_cache_usage()
    assert "document snapshots 4.0 KB (1 files)" in dialog.cache_label.text() and dialog.clear_button.isEnabled()
    questions: list[str] = []

    def answer(reply: QMessageBox.StandardButton):  # type: ignore[no-untyped-def]
        def ask(_parent: object, _title: str, text: str, *args: object) -> QMessageBox.StandardButton:
            questions.append(text)
            return reply

        return ask

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.No))
    dialog.clear_button.click()
    assert len(list(ctx.paths.state_cache_dir.glob("*.state"))) == 1
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Yes))
    dialog.clear_button.click()
    assert not list(ctx.paths.state_cache_dir.glob("*.state"))
    assert (
        "document snapshots: 1 files, 4.0 KB" in questions[0]
        and "Documents, conversations and models stay" in questions[0]
    )
    assert dialog.cache_label.text().startswith("Freed 4.0 KB.") and not dialog.clear_button.isEnabled()


def test_tools_settings_in_the_window_turns_the_server_badge_on_and_restarts_the_engine(  # type: ignore[no-untyped-def]
    qtbot, window
) -> None:
    from tests.fixtures.openai_stub import stub_server

    action = window.setup_menu.actions["settings"]
    assert action.shortcut().toString() == "Ctrl+,"
    assert [a.text() for a in window.menuBar().actions()][-2:] == ["&Tools", "&Help"]

    def unused(handler: Any, body: dict[str, Any]) -> None:
        handler.send_json(500, {"error": {"message": "unused"}})

    with stub_server(unused) as (url, _state):
        dialog = window.setup_menu.show_settings()
        dialog.server_enabled.setChecked(True)
        dialog.server_url.setText(url)
        dialog.save()
    assert window.offline_badge.text() == f"● server {url}"
    assert window.model_label.text() == "model: on the model server"
    dialog = window.setup_menu.show_settings()
    dialog.server_enabled.setChecked(False)
    dialog.save()
    assert window.offline_badge.text() == "● offline" and "no network" in window.offline_badge.toolTip()


@pytest.mark.e2e
def test_engine_settings_apply_to_the_next_question(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    """Saving new engine settings drops the running engine; the next answer comes from one made anew."""

    def ask(question: str) -> None:
        window.chat.input.setPlainText(question)
        window.chat.send_button.click()
        qtbot.waitUntil(lambda: window.chat.send_button.isEnabled(), timeout=120000)

    window.add_paths([str(contract_pdf)])
    qtbot.waitUntil(lambda: rows.count(window) == 1, timeout=30000)
    rows.select_row(window, 0)
    ask("Which law governs this agreement?")
    first = window.engine_worker._service
    assert first is not None
    # Another thread count than the one planned (one per CPU this process may use: 1 under make test's
    # workers, each held to one CPU).
    chosen = 2 if first.engine.config.n_threads == 1 else 1
    dialog = window.setup_menu.show_settings()
    dialog.threads.setValue(chosen)
    dialog.save()
    qtbot.waitUntil(lambda: window.engine_worker._service is None, timeout=20000)
    ask("Who are the parties?")
    second = window.engine_worker._service
    assert second is not None and second is not first and second.engine.config.n_threads == chosen
    messages = window.conversations.messages(window.conversation_id)
    assert [m.status for m in messages if m.role == "assistant"] == ["complete", "complete"]


def test_read_ahead_threads_are_saved_without_restarting_the_engine(qtbot, dialog, ctx) -> None:  # type: ignore[no-untyped-def]
    assert dialog.read_ahead_threads.value() == 0 and dialog.read_ahead_threads.text() == "As many as questions"
    dialog.read_ahead.setChecked(True)
    dialog.read_ahead_threads.setValue(1)
    with qtbot.waitSignal(dialog.saved) as signal:
        dialog.save()
    assert signal.args == [False]  # set on the live context for each background read
    assert ctx.settings.read_ahead_threads == 1 and _saved(ctx)["read_ahead_threads"] == 1
    dialog.read_ahead.setChecked(False)
    assert not dialog.read_ahead_threads.isEnabled()
