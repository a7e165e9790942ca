"""The last line of defence: an unexpected exception anywhere is logged and shown, and Folio keeps running.

sys.excepthook catches what escapes the UI thread (PySide routes exceptions raised in slots there,
whatever thread the slot ran on); threading.excepthook catches Python threads. Either may run on
any thread, so the hook only writes the log (under a lock) and emits a signal; the dialog opens on
the UI thread, where the reporter lives. Repeats of the same error within a few seconds are logged
but not shown again, so a failing timer cannot bury the user in dialogs.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import traceback
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from PySide6.QtCore import QObject, Qt, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from app import __version__
from app.errors import USER_ERRORS, one_line

LOG_NAME = "errors.log"
MAX_LOG_BYTES = 1024 * 1024  # then the log moves to errors.log.1 and a new one starts
REPEAT_QUIET_S = 5.0

ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], Any]


def log_file_in(cache_dir: Path) -> Path:
    return cache_dir / "logs" / LOG_NAME


def friendly_summary(exc: BaseException) -> str:
    if isinstance(exc, USER_ERRORS):
        return one_line(exc)
    return f"{type(exc).__name__}: {one_line(exc)}"


class ErrorReporter(QObject):
    # summary line, full traceback text: emitted on whatever thread failed, shown on the UI thread
    reported = Signal(str, str)

    def __init__(self, log_file: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.log_file = log_file
        self.max_log_bytes = MAX_LOG_BYTES
        self._lock = threading.Lock()
        self._previous_sys: ExceptHook | None = None
        self._previous_thread: Callable[[threading.ExceptHookArgs], Any] | None = None
        self._showing = False
        self._last_shown: dict[str, float] = {}
        self.suppressed = 0  # errors logged but not shown (repeats, or while a dialog is open)
        # Queued when emitted off the UI thread: the receiver is this object, which lives on the UI thread.
        self.reported.connect(self._on_reported)

    # -- hooks --------------------------------------------------------------------------------------
    def install(self) -> ErrorReporter:
        self._previous_sys = sys.excepthook
        self._previous_thread = threading.excepthook
        sys.excepthook = self.excepthook
        threading.excepthook = self.thread_excepthook
        return self

    def uninstall(self) -> None:
        if sys.excepthook == self.excepthook and self._previous_sys is not None:
            sys.excepthook = self._previous_sys
        if threading.excepthook == self.thread_excepthook and self._previous_thread is not None:
            threading.excepthook = self._previous_thread

    def excepthook(
        self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None, thread_name: str = ""
    ) -> None:
        if issubclass(exc_type, (KeyboardInterrupt, SystemExit)):
            (self._previous_sys or sys.__excepthook__)(exc_type, exc, tb)
            return
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        where = thread_name or threading.current_thread().name
        self.write_log(where, details)
        with contextlib.suppress(RuntimeError):  # the reporter is torn down at exit: the log has it
            self.reported.emit(friendly_summary(exc), details)

    def thread_excepthook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is None or issubclass(args.exc_type, SystemExit):
            return
        name = args.thread.name if args.thread is not None else "thread"
        self.excepthook(args.exc_type, args.exc_value, args.exc_traceback, thread_name=name)

    # -- log --------------------------------------------------------------------------------------------
    def write_log(self, where: str, details: str) -> None:
        stamp = datetime.now().astimezone().isoformat(timespec="seconds")
        entry = f"=== {stamp} Folio {__version__} thread {where}\n{details.rstrip()}\n\n"
        with self._lock:
            try:
                self.log_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                if self.log_file.exists() and self.log_file.stat().st_size > self.max_log_bytes:
                    self.log_file.replace(self.log_file.with_name(self.log_file.name + ".1"))
                with self.log_file.open("a", encoding="utf-8") as handle:
                    handle.write(entry)
            except OSError:
                sys.stderr.write(entry)  # a full or read-only disk: stderr is all that is left

    # -- dialog (UI thread) --------------------------------------------------------------------------
    @Slot(str, str)
    def _on_reported(self, summary: str, details: str) -> None:
        now = time.monotonic()
        if self._showing or now - self._last_shown.get(summary, -1e9) < REPEAT_QUIET_S:
            self.suppressed += 1
            return
        if QApplication.instance() is None:
            return
        self._last_shown[summary] = now
        self._showing = True
        try:
            self.show_dialog(summary, details)
        except Exception as exc:  # the dialog itself failed: never recurse into the hook
            self.write_log("error dialog", "".join(traceback.format_exception(exc)))
        finally:
            self._showing = False

    def show_dialog(self, summary: str, details: str) -> None:
        parent = QApplication.activeWindow()
        box = QMessageBox(parent if isinstance(parent, QWidget) else None)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Something went wrong")
        box.setText("Folio ran into an unexpected problem and kept running.")
        box.setInformativeText(
            f"{summary}\n\nIf something looks wrong, restart Folio. The details were saved to {self.log_file}."
        )
        box.setDetailedText(details)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        open_folder = box.addButton("Open log folder", QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Close)
        box.exec()
        if box.clickedButton() is open_folder:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.log_file.parent)))


def install_error_reporter(log_file: Path, parent: QObject | None = None) -> ErrorReporter:
    return ErrorReporter(log_file, parent).install()
