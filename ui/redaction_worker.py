"""The redaction worker: finding candidates and writing the redacted copy on a thread of its own.

The MuPDF and OCR work runs in a child process (app/redaction/child.py), so this thread only waits on
a pipe; Cancel (any thread) ends the child at once. Connect the signals only to methods of QObjects
living in the UI thread (see ui/workers.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from app.context import AppContext
from app.errors import USER_ERRORS, Cancelled, one_line
from app.redaction.candidates import Candidate, Search
from app.redaction.child import Found, Source
from app.redaction.service import Redactor


@dataclass(frozen=True)
class FindJob:
    document_id: int
    search: Search
    password: str | None = None


@dataclass(frozen=True)
class Findings:
    document_id: int
    source: Source
    found: Found


@dataclass(frozen=True)
class ExportJob:
    source: Source
    found: Found
    accepted: list[Candidate]
    path: Path
    label: bool
    overwrite: bool


class RedactionWorker(QObject):
    progress = Signal(object)  # app.redaction.child.Step
    found = Signal(object)  # Findings
    exported = Signal(object)  # app.redaction.service.Redacted
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._base = ctx
        self._ctx: AppContext | None = None
        self._redactor: Redactor | None = None
        self._sources: dict[int, Source] = {}  # a Word document is typeset once per dialog

    def _work(self) -> Redactor:
        if self._redactor is None:  # made on the worker thread: its SQLite connection lives here
            self._ctx = self._base.reopen()
            self._redactor = Redactor(self._ctx)
        return self._redactor

    def _waited_out(self) -> bool:
        """Cancel was pressed while this job waited its turn: it does not start (a context manager
        cannot skip its body, so each job asks this first)."""
        if self._redactor is None or not self._redactor.process.stopped:
            return False
        self._redactor.process.resume()  # the stop was for this job
        self.cancelled.emit()
        return True

    @contextmanager
    def _job(self) -> Iterator[None]:
        try:
            yield
        except Cancelled:
            self.cancelled.emit()
        except USER_ERRORS as exc:
            self.failed.emit(one_line(exc))
        except Exception as exc:
            self.failed.emit(f"unexpected error: {type(exc).__name__}: {one_line(exc)}")
        finally:
            if self._redactor is not None:
                self._redactor.process.resume()  # the dialog sends one job at a time: a stop was for this one

    @Slot(object)
    def find(self, job: FindJob) -> None:
        if self._waited_out():
            return
        with self._job():
            redactor = self._work()
            source = self._sources.get(job.document_id)
            if source is None:
                source = redactor.source(job.document_id, password=job.password)
                self._sources[job.document_id] = source
            found = redactor.find(source, job.search, on_progress=self.progress.emit)
            self.found.emit(Findings(job.document_id, source, found))

    @Slot(object)
    def export(self, job: ExportJob) -> None:
        if self._waited_out():
            return
        with self._job():
            done = self._work().export(
                job.source,
                job.found,
                job.accepted,
                job.path,
                label=job.label,
                overwrite=job.overwrite,
                on_progress=self.progress.emit,
            )
            self.exported.emit(done)

    def cancel(self) -> None:
        """From the UI thread: ends the child process doing the work (thread-safe)."""
        if self._redactor is not None:
            self._redactor.stop()

    @Slot()
    def shutdown(self) -> None:
        if self._redactor is not None:
            self._redactor.close()
            self._redactor = None
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None
