"""Child processes that end when their parent ends, however it ends (quit, SIGTERM, SIGKILL, crash).

A child that outlives its window keeps the model in memory and, on Windows, the user's document
open (a file that cannot be moved or deleted). Two ways, one per platform:

- Linux: the child asks the kernel for SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG), then
  checks once that the parent is still the one that started it: a parent that died before the prctl
  would never send the signal (the classic race).
- elsewhere: the parent holds the write end of a pipe that it never writes; a thread in the child
  waits on the read end, and the pipe ends (EOF) when the parent's process is gone, whatever
  ended it. Nothing else holds the write end: spawned children inherit only what they are given.

Linux sends the death signal when the *thread* that started the child ends, not the process; so
children are started on one thread that lives as long as the process (`start_child`).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Lifeline:
    """What a child needs to die with its parent: the parent's pid and, off Linux, the pipe's read end."""

    parent_pid: int
    pipe: Any = None  # multiprocessing.connection.Connection; None on Linux

    def hold(self) -> None:
        """Called first thing in the child."""
        if self.pipe is None:
            if not _parent_death_signal():
                os._exit(1)
        else:
            threading.Thread(target=_watch, args=(self.pipe,), name="folio-lifeline", daemon=True).start()
        if os.getppid() != self.parent_pid and sys.platform != "win32":
            os._exit(1)  # the parent died before the signal was asked for


_writer: Any = None
_reader: Any = None
_lock = threading.Lock()


def lifeline(use_pipe: bool | None = None) -> Lifeline:
    """The lifeline to hand a child being started from this process (`use_pipe` forces the pipe, for tests)."""
    global _writer, _reader
    pipe = not sys.platform.startswith("linux") if use_pipe is None else use_pipe
    if not pipe:
        return Lifeline(os.getpid())
    with _lock:
        if _reader is None:
            import multiprocessing

            # Kept open for the life of this process, never written to.
            _reader, _writer = multiprocessing.get_context("spawn").Pipe(duplex=False)
        return Lifeline(os.getpid(), _reader)


def _parent_death_signal() -> bool:
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _watch(pipe: Any) -> None:
    try:
        while True:
            pipe.recv()
    except (EOFError, OSError):
        os._exit(1)  # the parent is gone: no cleanup that could hang on its pipes


class _Starter:
    """One thread, alive as long as the process, on which every child is started."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], queue.SimpleQueue[tuple[bool, Any]]]] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, start: Callable[[], T]) -> T:
        if not sys.platform.startswith("linux"):
            return start()  # the pipe lifeline does not care which thread started the child
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="folio-child-starter", daemon=True)
                self._thread.start()
        done: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self._jobs.put((start, done))
        ok, value = done.get()
        if not ok:
            raise value
        result: T = value
        return result

    def _serve(self) -> None:
        while True:
            start, done = self._jobs.get()
            try:
                done.put((True, start()))
            except BaseException as exc:  # handed back to the caller's thread
                done.put((False, exc))


_starter = _Starter()


def start_child(start: Callable[[], T]) -> T:
    """Run `start` (which starts a child process) on the process's child-starting thread."""
    return _starter.run(start)
