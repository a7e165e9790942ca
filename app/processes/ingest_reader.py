"""Read files in a child process, so the window's process never waits on the file readers.

PyMuPDF holds Python's GIL for each call into MuPDF, and some calls are long: OCR of a scanned page
(MuPDF's Tesseract) held it for 1.4 s in benchmarks/bench_ui.py, freezing the window's UI thread
although the reading ran on another thread; the default OCR engine (onnxruntime) loads 30 MB of
models and keeps the cores busy for a second or more per page. In a child process (app/processes/pool.py) the readers
can take as long as they need; the Document comes back pickled and is stored by the caller. A
reader that crashes on a hostile file takes down only the child: the file is rejected in one line
and the next file gets a new child. Cancel ends the child at once instead of waiting for a long
file to finish.
"""

from __future__ import annotations

from pathlib import Path

from app.errors import Cancelled
from app.processes.pool import ChildDied, ChildProcess, report
from ingest import Document, Limits
from ingest.errors import CorruptFile
from ingest.load import load as ingest_load
from ingest.ocr import OcrOptions
from ingest.progress import ProgressFn


def _load(
    path: str,
    password: str | None,
    limits: Limits | None,
    ocr: OcrOptions | None,
    progress: bool,
    resume_dir: Path | None = None,
) -> Document:
    return ingest_load(
        path, password=password, limits=limits, ocr=ocr, progress=report if progress else None, resume_dir=resume_dir
    )


class IngestProcess(ChildProcess):
    """One child process, started on first use and kept for the next files (imports take a second).

    load() runs on one thread (the ingest worker's); stop() may be called from any other.
    """

    def __init__(self) -> None:
        super().__init__()
        self._stopped = False

    def load(
        self,
        path: str | Path,
        *,
        password: str | None = None,
        limits: Limits | None = None,
        ocr: OcrOptions | None = None,
        progress: ProgressFn | None = None,
        resume_dir: Path | None = None,
    ) -> Document:
        """ingest.load in the child; `progress` is called here, on the calling thread, page by page."""
        self._stopped = False
        try:
            return self.call(
                _load, str(path), password, limits, ocr, progress is not None, resume_dir, on_progress=progress
            )
        except ChildDied as exc:
            if self._stopped or exc.closed:
                raise Cancelled() from exc
            if exc.__cause__ is None:
                raise CorruptFile(f"{Path(path).name}: the file reader could not start", path=str(path)) from exc
            raise CorruptFile(f"{Path(path).name}: the file reader crashed on this file", path=str(path)) from exc

    def stop(self) -> None:
        """End the child now: the file being read is abandoned (load raises Cancelled)."""
        self._stopped = True
        super().stop()
