"""The library's search box, answered off the UI thread: a common word in a library of 10,000 contracts
matches hundreds of thousands of passages, and ranking them (BM25) takes longer than a frame.

One worker on its own thread with its own SQLite connection. Each search has a serial number; a newer
one makes the worker drop the older ones still queued and interrupts the one running (SQLite stops it
between rows), so typing never waits for searches nobody reads any more."""

from __future__ import annotations

import sqlite3
import threading

from PySide6.QtCore import QObject, Signal, Slot

from app.context import AppContext
from app.errors import USER_ERRORS, one_line
from app.store.search import Search
from ui.workers import failure_line

HITS = 50  # passages listed; the list is for opening pages, not for counting


class SearchWorker(QObject):
    found = Signal(int, object)  # serial, list[SearchHit] or a one-line error

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._base = ctx
        self._ctx: AppContext | None = None
        self._lock = threading.Lock()
        self._wanted = 0  # the newest serial asked for
        self._running = 0  # the serial of the query running now (0: none)

    def want(self, serial: int) -> None:
        """From the UI thread, before queueing the search `serial`: stop the one running, if older."""
        with self._lock:
            self._wanted = serial
            if self._running and self._running < serial and self._ctx is not None:
                self._ctx.db.conn.interrupt()

    @Slot(int, str, object)
    def query(self, serial: int, text: str, matter_id: int | None) -> None:
        with self._lock:
            if serial < self._wanted:
                return  # a newer search is queued behind this one
            self._running = serial
        try:
            if self._ctx is None:
                self._ctx = self._base.reopen()
            hits = Search(self._ctx.db).query(text, conversations=False, limit=HITS, matter_id=matter_id)
        except sqlite3.OperationalError as exc:
            if "interrupt" in str(exc):
                return  # a newer search stopped it
            self.found.emit(serial, failure_line(exc))
            return
        except USER_ERRORS as exc:
            self.found.emit(serial, one_line(exc))
            return
        finally:
            with self._lock:
                self._running = 0
        self.found.emit(serial, hits)

    @Slot()
    def shutdown(self) -> None:
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None
