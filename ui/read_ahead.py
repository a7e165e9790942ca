"""Read-ahead in the window: the background reader (app.reading.ReadAhead) on a thread of its own,
its status delivered to the window as a Qt signal (queued to the UI thread).

A plain Python thread rather than a QThread worker: the reader's loop waits for work between
documents, and stop() ends that wait at once; the window stops it before the application quits."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal

from app.context import AppContext
from app.engine.session import Session
from app.reading import ReadAhead

STOP_WAIT_S = 30.0  # a read stops between two chunks: seconds at most, even for a large model


class ReadAheadRunner(QObject):
    status = Signal(object)  # app.reading.ReadAheadStatus

    def __init__(self, ctx: AppContext, session: Session) -> None:
        super().__init__()
        self._base = ctx
        self.reader = ReadAhead(ctx, session)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="folio-read-ahead", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        ctx = self._base.reopen()  # its own SQLite connection, on its own thread
        self.reader.ctx = ctx
        try:
            self.reader.run(self.status.emit)
        finally:
            ctx.close()

    def poke(self, *, retry_failed: bool = False) -> None:
        self.reader.poke(retry_failed=retry_failed)

    def use_matter(self, matter_id: int) -> None:
        self.reader.use_matter(matter_id)

    def toggle_pause(self) -> None:
        if self.reader.paused:
            self.reader.resume()
        else:
            self.reader.pause()

    def stop(self) -> None:
        self.reader.stop()
        if self._thread is not None:
            self._thread.join(STOP_WAIT_S)
            self._thread = None
