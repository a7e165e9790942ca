"""An unexpected exception anywhere is logged and shown in a friendly dialog; the app keeps running.

The exceptions are real (raised in a Qt slot, a Python thread, a QThread worker); only the dialog's
display is replaced, to record what the user would see and on which thread.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_no_exception_capture]


@pytest.fixture
def reporter(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:  # type: ignore[no-untyped-def]
    from ui.error_hook import ErrorReporter, install_error_reporter, log_file_in

    shown: list[tuple[str, str, str]] = []

    def show(self: ErrorReporter, summary: str, details: str) -> None:
        shown.append((summary, details, threading.current_thread().name))

    monkeypatch.setattr(ErrorReporter, "show_dialog", show)
    hook = install_error_reporter(log_file_in(tmp_path / "cache"))
    hook.shown = shown  # type: ignore[attr-defined]
    yield hook
    hook.uninstall()


def _log(reporter) -> str:  # type: ignore[no-untyped-def]
    return reporter.log_file.read_text(encoding="utf-8") if reporter.log_file.exists() else ""


def test_an_exception_in_a_slot_is_logged_and_shown_and_the_app_lives_on(qtbot, reporter) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QTimer

    assert sys.excepthook == reporter.excepthook and threading.excepthook == reporter.thread_excepthook

    def broken_slot() -> None:
        {}["citation"]

    QTimer.singleShot(0, broken_slot)
    qtbot.waitUntil(lambda: bool(reporter.shown), timeout=5000)
    summary, details, thread = reporter.shown[0]
    assert summary == "KeyError: 'citation'" and "broken_slot" in details
    assert thread == threading.main_thread().name
    log = _log(reporter)
    assert "Traceback (most recent call last)" in log and "broken_slot" in log and "thread MainThread" in log
    assert reporter.log_file.parent.name == "logs" and reporter.log_file.parent.parent.name == "cache"
    # Still alive: the event loop keeps running timers.
    ticks: list[int] = []
    QTimer.singleShot(0, lambda: ticks.append(1))
    qtbot.waitUntil(lambda: bool(ticks), timeout=2000)


def test_a_python_thread_failure_is_shown_on_the_ui_thread(qtbot, reporter) -> None:  # type: ignore[no-untyped-def]
    from app.errors import FolioError

    def work() -> None:
        raise FolioError("the model file is missing (removable drive not attached?)")

    worker = threading.Thread(target=work, name="folio-test-worker")
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: bool(reporter.shown), timeout=5000)
    summary, _details, thread = reporter.shown[0]
    assert summary == "the model file is missing (removable drive not attached?)"  # user errors stay plain
    assert thread == threading.main_thread().name  # never a dialog from a worker thread
    assert "thread folio-test-worker" in _log(reporter)


def test_a_qthread_worker_failure_is_caught_too(qtbot, reporter) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QObject, QThread, Signal, Slot

    class Worker(QObject):
        go = Signal()

        @Slot()
        def run(self) -> None:
            raise ZeroDivisionError("division by zero in the worker")

    thread = QThread()
    thread.setObjectName("folio-qthread")
    worker = Worker()
    worker.moveToThread(thread)
    worker.go.connect(worker.run)
    thread.start()
    try:
        worker.go.emit()
        qtbot.waitUntil(lambda: bool(reporter.shown), timeout=5000)
    finally:
        thread.quit()
        thread.wait(5000)
    summary, _details, shown_on = reporter.shown[0]
    assert summary == "ZeroDivisionError: division by zero in the worker"
    assert shown_on == threading.main_thread().name
    assert "in run" in _log(reporter)


def test_repeats_are_logged_but_shown_once(qtbot, reporter) -> None:  # type: ignore[no-untyped-def]
    for _ in range(5):
        try:
            raise ValueError("the same bug on every timer tick")
        except ValueError:
            sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]
    qtbot.wait(50)
    assert len(reporter.shown) == 1 and reporter.suppressed == 4
    assert _log(reporter).count("ValueError: the same bug on every timer tick") == 5


def test_ctrl_c_is_not_an_error_dialog(reporter, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    passed_on: list[type[BaseException]] = []
    monkeypatch.setattr(reporter, "_previous_sys", lambda t, v, tb: passed_on.append(t))
    reporter.excepthook(KeyboardInterrupt, KeyboardInterrupt(), None)
    assert passed_on == [KeyboardInterrupt] and not reporter.shown and not _log(reporter)


def test_the_log_rolls_over_instead_of_growing_forever(reporter) -> None:  # type: ignore[no-untyped-def]
    reporter.max_log_bytes = 300
    for i in range(6):
        reporter.write_log("MainThread", f"entry {i} " + "x" * 100)
    rolled = reporter.log_file.with_name(reporter.log_file.name + ".1")
    assert rolled.exists() and reporter.log_file.stat().st_size <= 300 + 200
    assert "entry 5" in _log(reporter)


def test_the_real_dialog_says_where_the_log_is(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The dialog itself, closed by a timer as a user would close it."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from ui.error_hook import ErrorReporter

    reporter = ErrorReporter(tmp_path / "logs" / "errors.log")
    seen: list[str] = []

    def close_box() -> None:
        box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible())
        seen.append(box.windowTitle() + "|" + box.text() + "|" + box.informativeText())
        box.button(QMessageBox.StandardButton.Close).click()

    QTimer.singleShot(100, close_box)
    reporter.show_dialog("KeyError: 'x'", "Traceback ...")
    assert seen and seen[0].startswith("Something went wrong|Folio ran into an unexpected problem and kept running.")
    assert "KeyError: 'x'" in seen[0] and str(tmp_path / "logs" / "errors.log") in seen[0]
