"""Qt workers: long work runs on its own thread, one owner per resource, results come back as signals.

The chat worker runs questions, extraction runs, playbook reviews and comparisons, in turn, on the
window's session (one engine); the ingest worker owns the writes of new documents, and the purge worker,
on the same thread, destroys matters (so a purge never runs beside an add). Each opens its own SQLite
connection, in the matter the window works in (`use_matter`, queued like the jobs: a job sent before a
switch finishes in the matter it was sent in). The UI thread reads, renders and makes the odd one-row
write (rename, delete, recent documents).

Connect these signals only to methods of QObjects that live in the UI thread: a lambda or plain
function has no receiver, so Qt would call it in the worker's thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from app.chat import ChatEvent, ChatService
from app.context import AppContext
from app.engine.session import CancelToken, Session
from app.errors import FAULTS, USER_ERRORS, Cancelled, DoesNotFit, one_line
from app.extraction.runner import ExtractionEvent, ExtractionService
from app.processes.ingest_reader import IngestProcess
from app.purge import purge_matter
from ingest.progress import ReadProgress

if TYPE_CHECKING:
    from app.passes.estimate import ReadingEstimates
    from app.passes.plans import Planned
    from app.playbook.review import PlaybookReviewer


@dataclass(frozen=True)
class AskJob:
    document_ids: list[int]
    question: str
    conversation_id: int | None
    thinking: bool | None = None
    regenerate: bool = (
        False  # ask the conversation's last question again (its old exchange goes once this one is stored)
    )
    # When the documents do not fit the context together (the user's choice, app/passes): read them in
    # passes or by the pages a search ranks ('passes' | 'search'), or only these pages of one document.
    strategy: str | None = None
    pages: tuple[int, ...] | None = None
    plan: Planned | None = None  # the reading as its estimate planned it (app/passes/plans.py)


@dataclass(frozen=True)
class ExtractJob:
    template_key: str
    document_ids: list[int]


@dataclass(frozen=True)
class ReviewJob:
    """A document checked against a playbook (app.playbook): its fields read, every rule decided by code."""

    document_id: int
    playbook_key: str


@dataclass(frozen=True)
class ReviewStopped:
    """A review stopped by the user: the fields read so far are stored, and the same review resumes there."""

    cells_done: int
    cells_total: int


@dataclass(frozen=True)
class CompareJob:
    old_id: int
    new_id: int


@dataclass(frozen=True)
class SummaryUnavailable:
    """The redline stands; the model's summary could not be written (no model set up, stopped, ...)."""

    reason: str


NAMES_STOPPED = "stopped"  # names_event when the user stopped the model


@dataclass(frozen=True)
class IngestProgress:
    index: int
    total: int
    path: str
    pages: ReadProgress | None = None  # within the file: pages read so far (OCR is the slow part)


class ThreadContext:
    """A worker's own AppContext: its SQLite connection opened on the worker's thread (connections stay
    on the thread that made them), in the matter the window last sent."""

    def __init__(self, base: AppContext) -> None:
        self._base = base
        self._ctx: AppContext | None = None
        self.matter_id = base.chosen_matter

    def get(self) -> AppContext:
        if self._ctx is None:
            self._ctx = self._base.reopen()
            self._ctx.chosen_matter = self.matter_id
        return self._ctx

    def use_matter(self, matter_id: int) -> None:
        self.matter_id = matter_id
        if self._ctx is not None:
            self._ctx.chosen_matter = matter_id

    def close(self) -> None:
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None


def failure_line(exc: Exception) -> str:
    """A job's failure as the one line the window shows (a full disk, a locked library in plain words)."""
    if isinstance(exc, (*USER_ERRORS, *FAULTS)):
        return one_line(exc)
    return f"unexpected error: {type(exc).__name__}: {one_line(exc)}"


class EngineWorker(QObject):
    chat_event = Signal(object)  # app.chat.ChatEvent
    extraction_event = Signal(object)  # app.extraction.runner.ExtractionEvent
    compare_event = Signal(object)  # Redline, then Progress..., then Summary or SummaryUnavailable
    names_event = Signal(object)  # Progress..., then app.redaction.names.Suggestions
    # The extraction events of the review's fields (RunStarted, CellsStored, Progress...), then the stored
    # app.playbook.review.PlaybookReview, or ReviewStopped.
    review_event = Signal(object)
    failed = Signal(str)
    # A question whose documents do not fit the context: the job, the planner's line and how long each
    # other reading would take (app.passes.estimate.ReadingEstimates, or None when that could not be
    # told), so the window can offer to read them another way (ui/strategy_dialog.py).
    does_not_fit = Signal(object, str, object)
    finished = Signal()  # after every job, question or extraction run

    def __init__(self, ctx: AppContext, session: Session) -> None:
        super().__init__()
        self._own = ThreadContext(ctx)
        self.session = session
        self._service: ChatService | None = None
        self._extraction: ExtractionService | None = None
        self._reviewer: PlaybookReviewer | None = None
        self._token = CancelToken()  # the job under way's: Stop stops that job, whatever it is

    def _svc(self) -> ChatService:
        if self._service is None:  # created on the worker thread: its DB connection lives here
            self._service = ChatService(self._own.get(), self.session)
        return self._service

    @Slot(int)
    def use_matter(self, matter_id: int) -> None:
        """New conversations and tables go to this matter (the one holding their documents, preferred)."""
        self._own.use_matter(matter_id)

    @Slot(object)
    def ask(self, job: AskJob) -> None:
        with self._job() as token:
            if job.strategy is not None or job.pages is not None:
                from app.passes.service import LongQuestion

                try:
                    LongQuestion(self._svc()).ask(
                        job.document_ids,
                        job.question,
                        pages=job.pages,
                        strategy=job.strategy,
                        conversation_id=job.conversation_id,
                        thinking=job.thinking,
                        on_event=self._emit,
                        cancel=token,
                        regenerate=job.regenerate,
                        plan=job.plan,
                    )
                except Cancelled:  # stopped while the reading was planned: nothing was read or stored
                    self.failed.emit("stopped before any page was read")
                return
            try:
                self._svc().ask(
                    job.document_ids,
                    job.question,
                    conversation_id=job.conversation_id,
                    thinking=job.thinking,
                    on_event=self._emit,
                    regenerate=job.regenerate,
                    cancel=token,
                )
            except DoesNotFit as exc:  # asked again too: the old answer stays until another reading is chosen
                try:
                    estimates = self._estimate(job, token)
                except Cancelled:  # Stop while the readings were planned: the refusal stands, nothing offered
                    self.failed.emit(f"{one_line(exc)} (stopped before the other readings were planned)")
                    return
                self.does_not_fit.emit(job, one_line(exc), estimates)

    def _estimate(self, job: AskJob, token: CancelToken) -> ReadingEstimates | None:
        """How long the readings the window offers would take, with their plans; None when the selection
        cannot be planned (a model server, a document gone since): the offer then says the time is
        unknown. The job's Stop ends the planning (Cancelled)."""
        from app.passes.service import LongQuestion

        try:
            return LongQuestion(self._svc()).estimate(
                job.document_ids,
                job.question,
                conversation_id=job.conversation_id,
                thinking=job.thinking,
                regenerate=job.regenerate,
                on_event=self._emit,
                cancel=token,
            )
        except USER_ERRORS:
            return None

    @contextmanager
    def _job(self) -> Iterator[CancelToken]:
        """A job with a stop of its own; its failure is one line for the window (which stays alive),
        and the window always hears that the job ended."""
        self._token = CancelToken()
        try:
            yield self._token
        except Exception as exc:
            self.failed.emit(failure_line(exc))
        finally:
            self.finished.emit()

    def _emit(self, event: ChatEvent) -> None:
        self.chat_event.emit(event)

    @Slot(object)
    def extract(self, job: ExtractJob) -> None:
        """Fill an extraction table on the same engine as chat (one owner of the llama.cpp model)."""
        with self._job() as token:
            service = self._extractor()
            template = service.templates.get(job.template_key)
            run_id = service.start_run(template, job.document_ids)
            service.run(run_id, job.document_ids, on_event=self._emit_extraction, cancel=token)

    @Slot(object)
    def compare(self, job: CompareJob) -> None:
        """The redline of two library documents, then the model's summary of it on the shared engine."""
        from app.compare.redline import compare
        from app.compare.summary import summarise
        from app.compare.versions import version_from_library

        with self._job() as token:
            ctx = self._svc().ctx
            redline = compare(version_from_library(ctx, job.old_id), version_from_library(ctx, job.new_id))
            self.compare_event.emit(redline)
            if not redline.changes:
                self.compare_event.emit(SummaryUnavailable("the two versions have the same words"))
                return
            try:
                written = summarise(
                    ctx,
                    self.session,
                    redline,
                    job.old_id,
                    job.new_id,
                    on_progress=self.compare_event.emit,
                    cancel=token,
                )
            except Cancelled:
                self.compare_event.emit(SummaryUnavailable("stopped"))
            except USER_ERRORS as exc:
                self.compare_event.emit(SummaryUnavailable(one_line(exc)))
            else:
                self.compare_event.emit(written)

    @Slot(int)
    def names(self, document_id: int) -> None:
        """The people and organisations the model reads in a document, to offer for redaction."""
        from app.redaction.names import suggest_names

        with self._job() as token:
            try:
                found = suggest_names(
                    self._svc().ctx, self.session, document_id, on_progress=self.names_event.emit, cancel=token
                )
            except Cancelled:
                self.names_event.emit(NAMES_STOPPED)
                return
            self.names_event.emit(found)

    @Slot(object)
    def review(self, job: ReviewJob) -> None:
        """Check a document against a playbook on the same engine as chat and extraction. A stop keeps the
        fields read so far (the extraction run's cells), as `folio review` does, and says how far it came."""
        from app.extraction.runner import CellsStored, RunStarted
        from app.playbook.book import PlaybookStore

        with self._job() as token:
            reviewer = self._playbook_reviewer()
            playbook = PlaybookStore.for_config(reviewer.ctx.paths.config_dir).get(job.playbook_key)
            done = [0, len(playbook.template().fields)]

            def on_event(event: ExtractionEvent) -> None:
                if isinstance(event, RunStarted | CellsStored):
                    done[:] = [event.cells_done, event.cells_total]
                self.review_event.emit(event)

            try:
                review = reviewer.review(job.document_id, playbook, on_event=on_event, cancel=token)
            except Cancelled:
                self.review_event.emit(ReviewStopped(done[0], done[1]))
                return
            self.review_event.emit(review)

    def _playbook_reviewer(self) -> PlaybookReviewer:
        if self._reviewer is None:  # on the worker thread, on the window's session: one engine owner
            from app.playbook.review import PlaybookReviewer

            chat = self._svc()
            self._reviewer = PlaybookReviewer(chat.ctx, self.session)
        return self._reviewer

    def _extractor(self) -> ExtractionService:
        if self._extraction is None:
            chat = self._svc()
            self._extraction = ExtractionService(chat.ctx, self.session)
        return self._extraction

    def _emit_extraction(self, event: ExtractionEvent) -> None:
        self.extraction_event.emit(event)

    def cancel(self) -> None:
        """Called from the UI thread: stops the job under way (its request now, and every later one);
        thread-safe."""
        self._token.cancel()

    @Slot()
    def shutdown(self) -> None:
        self.session.close()
        self._own.close()
        self._service = None
        self._extraction = None
        self._reviewer = None


class IngestWorker(QObject):
    progress = Signal(object)  # IngestProgress
    added = Signal(int, bool)  # document id, created
    rejected = Signal(str, str)  # path, one-line reason
    finished = Signal()

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._own = ThreadContext(ctx)
        self._cancel = False
        self._reader = IngestProcess()  # MuPDF's long calls hold the GIL: read in a child process

    def cancel(self) -> None:
        """Called from the UI thread: the file being read is abandoned and the batch stops."""
        self._cancel = True
        self._reader.stop()

    @Slot(int)
    def use_matter(self, matter_id: int) -> None:
        """Files added from the next batch on go into this matter."""
        self._own.use_matter(matter_id)

    @Slot(list, object)
    def add(self, paths: list[str], password: str | None) -> None:
        ctx = self._own.get()
        self._cancel = False
        for index, path in enumerate(paths):
            if self._cancel:
                break
            self.progress.emit(IngestProgress(index, len(paths), path))

            def pages(done: ReadProgress, index: int = index, path: str = path) -> None:
                self.progress.emit(IngestProgress(index, len(paths), path, done))

            try:
                result = ctx.library.add(
                    path, password=password, limits=ctx.limits, load=self._reader.load, progress=pages
                )
            except Cancelled:
                break
            except USER_ERRORS as exc:
                self.rejected.emit(path, one_line(exc))
                continue
            except FAULTS as exc:
                self.rejected.emit(path, f"{Path(path).name}: {one_line(exc)}")
                continue
            except Exception as exc:
                self.rejected.emit(path, f"{Path(path).name}: unexpected error: {one_line(exc)}")
                continue
            self.added.emit(result.document.id, result.created)
        self.finished.emit()

    @Slot()
    def shutdown(self) -> None:
        self._reader.close()
        self._own.close()


class PurgeWorker(QObject):
    """Destroys a matter (`app.purge.purge_matter`, the code of `folio matter purge`) off the UI thread:
    a large matter takes a while, and the window keeps drawing its progress."""

    progress = Signal(object)  # app.purge.PurgeProgress
    purged = Signal(object)  # app.purge.MatterPurgeResult
    failed = Signal(str)

    def __init__(self, ctx: AppContext, session: Session) -> None:
        super().__init__()
        self._own = ThreadContext(ctx)
        self.session = session

    @Slot(str)
    def purge(self, name: str) -> None:
        try:
            # Holding the engine: a background read of one of these documents stops first (keeping
            # its checkpoint, which the purge then deletes), so no snapshot of them is written after.
            with self.session.turn():
                result = purge_matter(self._own.get(), name, on_progress=self.progress.emit)
        except Exception as exc:
            self.failed.emit(failure_line(exc))
            return
        self.purged.emit(result)

    @Slot()
    def shutdown(self) -> None:
        self._own.close()
