"""Read files in a child process, so the window's process never waits on the file readers.

PyMuPDF holds Python's GIL for each call into MuPDF, and some calls are long: OCR of a scanned page
(MuPDF's Tesseract) held it for 1.4 s in benchmarks/bench_ui.py, freezing the window's UI thread
although the reading ran on another thread. In a child process the readers can take as long as
they need; the Document comes back pickled and is stored by the caller. A reader that crashes on a
hostile file takes down only the child: the file is rejected in one line and the next file gets a
new child. Cancel ends the child at once instead of waiting for a long file to finish.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from app.errors import Cancelled
from ingest import Document, Limits
from ingest import load as ingest_load
from ingest.errors import CorruptFile


def _load(path: str, password: str | None, limits: Limits | None) -> Document:
    return ingest_load(path, password=password, limits=limits)


class IngestProcess:
    """One child process, started on first use and kept for the next files (imports take a second).

    load() runs on one thread (the ingest worker's); stop() may be called from any other.
    """

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._stopped = False

    def load(self, path: str | Path, *, password: str | None = None, limits: Limits | None = None) -> Document:
        self._stopped = False
        future: Future[Document] | None = None
        for _attempt in range(2):
            pool = self._start()
            try:
                future = pool.submit(_load, str(path), password, limits)
                break
            except BrokenProcessPool:  # the idle child died (killed, out of memory): a fresh one for this file
                self._discard(pool)
        if future is None:
            raise CorruptFile(f"{Path(path).name}: the file reader could not start", path=str(path))
        try:
            return future.result()
        except BrokenProcessPool as exc:
            self._discard(pool)
            if self._stopped:
                raise Cancelled() from exc
            raise CorruptFile(f"{Path(path).name}: the file reader crashed on this file", path=str(path)) from exc

    def stop(self) -> None:
        """End the child now: the file being read is abandoned (load raises Cancelled)."""
        self._stopped = True
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

                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
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
