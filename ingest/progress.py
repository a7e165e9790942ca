"""Progress of reading one file, page by page, for the window's progress bar and the CLI's."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ReadProgress:
    done: int  # pages (or parts) finished
    total: int
    step: str  # what is happening, in plain words: 'OCR page 3 of 12'
    kept: int = 0  # pages an interrupted reading had finished, taken as they were (ingest.page_memo)


ProgressFn = Callable[[ReadProgress], None]

EVERY_S = 0.25  # fast pages are reported at most this often; slow ones (OCR) each time


class Ticker:
    """Reports pages as they are done without flooding the receiver with fast pages."""

    def __init__(self, progress: ProgressFn | None, total: int) -> None:
        self.progress = progress
        self.total = total
        self._last = 0.0

    def page_done(self, done: int, step: str, kept: int = 0) -> None:
        now = time.monotonic()
        if self.progress is not None and (now - self._last >= EVERY_S or done == self.total):
            self._last = now
            self.progress(ReadProgress(done, self.total, step, kept))
