"""One long-lived child process for work that must not hold the window process's GIL.

PyMuPDF holds Python's GIL for each call into MuPDF, and with both cores busy (the model, a file
being read) even a 20 ms call can leave the window's UI thread waiting far longer for the GIL. In a
child process MuPDF can take as long as it needs; the caller's thread only waits on a pipe, which
lets go of the GIL. The child is spawned on first use and kept (its imports take a second); if it
dies (killed, out of memory, a hostile file crashing MuPDF) the call in flight fails with ChildDied
and the next call gets a new child.
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from common.lifeline import Lifeline, lifeline, start_child

T = TypeVar("T")
PROGRESS_POLL_S = 0.1

_reports: Any = None  # in a child: the queue its progress reports go to (see report())


def _child_started(reports: Any, line: Lifeline | None = None) -> None:
    global _reports
    if line is not None:
        line.hold()  # the child ends with the window, however the window ends
    _reports = reports


def report(item: object) -> None:
    """Called in the child while a call runs: `item` goes to the caller's on_progress."""
    if _reports is not None:
        _reports.put(item)


class ChildDied(Exception):
    """The child ended during the call (crashed, killed, or stopped), or close() ended the call."""

    def __init__(self, closed: bool = False) -> None:
        super().__init__()
        self.closed = closed  # close() from another thread, not a crash


class ChildProcess:
    """A spawned single-worker pool; call() from one thread at a time, stop()/close() from any thread."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._reports: Any = None  # the queue of the current pool's child, for report()
        self._lock = threading.Lock()

    def call(
        self, fn: Callable[..., T], *args: Any, retries: int = 0, on_progress: Callable[[Any], None] | None = None
    ) -> T:
        """fn(*args) in the child (fn must be a module-level function). A child found dead before the
        call is replaced silently; one that dies during it raises ChildDied after `retries` more tries
        on fresh children (for work that is safe to repeat). What the child passes to report() during
        the call reaches on_progress, on the calling thread."""
        for attempt in range(retries + 1):
            pool, future = self._submit(fn, *args)
            try:
                return self._wait(pool, future, on_progress)
            except BrokenProcessPool as exc:
                self._discard(pool)
                if attempt == retries:
                    raise ChildDied() from exc
            except CancelledError as exc:  # close() shut the pool down while the call waited in it
                raise ChildDied(closed=True) from exc
        raise AssertionError("unreachable")

    def _wait(self, pool: ProcessPoolExecutor, future: Future[T], on_progress: Callable[[Any], None] | None) -> T:
        dead_since: float | None = None
        while True:
            try:
                result = future.result(timeout=PROGRESS_POLL_S)
            except TimeoutError:
                if on_progress is not None:
                    self._drain(on_progress)
                dead_since = _dead_since(pool, dead_since)
                if dead_since is not None:
                    _notice_death(pool, time.monotonic() - dead_since)
                continue
            if on_progress is not None:
                self._drain(on_progress)
            return result

    def _drain(self, on_progress: Callable[[Any], None]) -> None:
        reports = self._reports
        while reports is not None:
            try:
                item = reports.get_nowait()
            except (queue.Empty, OSError, EOFError, ValueError):
                return
            on_progress(item)

    def _submit(self, fn: Callable[..., T], *args: Any) -> tuple[ProcessPoolExecutor, Future[T]]:
        for _attempt in range(2):
            pool = self._start()
            try:
                # submit() starts the child when there is none: on the thread that outlives them all.
                return pool, start_child(functools.partial(pool.submit, fn, *args))
            except BrokenProcessPool:  # the idle child died (killed, out of memory): a fresh one
                self._discard(pool)
        raise ChildDied()

    def pids(self) -> list[int]:
        with self._lock:
            pool = self._pool
        processes = (getattr(pool, "_processes", None) or {}) if pool is not None else {}
        return [p.pid for p in list(processes.values()) if p.pid is not None]

    def stop(self) -> None:
        """End the child now: the call in flight raises ChildDied."""
        with self._lock:
            pool = self._pool
        if pool is not None:
            _end_children(pool)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            _end_children(pool)
            pool.shutdown(wait=False, cancel_futures=True)

    def _start(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                import multiprocessing

                context = multiprocessing.get_context("spawn")
                # A queue per child: one killed mid-report may leave its queue unreadable.
                self._reports = context.Queue()
                self._pool = ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=context,
                    initializer=_child_started,
                    initargs=(self._reports, lifeline()),
                )
            return self._pool

    def _discard(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)


def _end_children(pool: ProcessPoolExecutor) -> None:
    # The executor has no public way to end a running task; its children are plain Processes.
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive():
            process.kill()


# A child killed while it writes its result leaves half a message in the pipe. The executor's
# manager thread then waits in recv() for the rest, for ever: this process holds the pipe's write
# end too, so no end-of-file comes (seen under load in the kill tests: the window froze on close).
DEAD_GRACE_S = 1.0


def _dead_since(pool: ProcessPoolExecutor, since: float | None) -> float | None:
    """When the pool's child was first seen dead during this wait (None while it lives). A pool shut
    down while the call waits (close() or a discard from another thread: the executor then forgets its
    children and its result pipe) or left without a child counts as dead: its answer can never come,
    and waiting on it froze a closing window whose render call was in flight."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    if any(p.is_alive() for p in processes):
        return None
    return since if since is not None else time.monotonic()


def _notice_death(pool: ProcessPoolExecutor, dead_for: float) -> None:
    """Past the grace the executor gets to notice on its own: close this process's write end of the
    result pipe, so the manager's recv() ends and it breaks the pool (the future raises
    BrokenProcessPool); should even that not happen, the wait ends here."""
    if dead_for < DEAD_GRACE_S:
        return
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    if writer is not None and not writer.closed:
        writer.close()
    if dead_for >= 2 * DEAD_GRACE_S:
        raise BrokenProcessPool("the child ended without its result")
