"""Reading a document before the first question (`folio read`, read-ahead).

A read renders the prompt a question about that one document uses (the same instructions, the same
planned context) and has the local engine read only the documents (`GenerateRequest.read_only`).
The engine writes checkpoints while it reads and the snapshot at the end (inference.engine); what
it saved and how far it came go into the document's reading record (app.caches.Readings).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from app.caches import NOTE_EVERY_S, Readings, ReadState
from app.clock import duration_words
from app.errors import USER_ERRORS, FolioError, one_line

# The engine, the prompt and the planner (app.chat and what it imports: 0.1 s) are imported inside
# read_document and ReadAhead, which read; `folio list` and the window's list only ask each document's
# reading state (reading_states), which needs none of them.
if TYPE_CHECKING:
    from app.context import AppContext
    from app.engine.progress import Progress
    from app.engine.session import CancelToken, Session
    from app.store.library import DocumentRow
    from inference.events import GenerationStats


def read_document(
    ctx: AppContext,
    session: Session,
    document_id: int,
    on_progress: Callable[[Progress], None],
    *,
    background: bool = False,
    cancel: CancelToken | None = None,
) -> GenerationStats:
    """Read one document into the active local model, as a first question about it would, and keep
    it on disk. A stop (`cancel`) ends it between chunks and keeps a checkpoint of what was read; in
    the background, so does any other request for the engine (stop_reason 'cancelled')."""
    if session.served_label() is not None:
        raise FolioError("reading ahead is for a local model; a model server keeps its own cache")
    if not ctx.settings.state_cache_gb:
        raise FolioError("nothing read could be kept: the snapshot cache is off (state_cache_gb = 0)")
    from app.chat import question_messages
    from inference.engine_api import Sampling

    doc = ctx.library.get(document_id)
    settings = ctx.settings
    # The question's words come after the documents: they do not change what is read and kept.
    prepared = session.prepare(
        ctx,
        [document_id],
        question_messages([], "?"),
        think=settings.thinking,
        answer_tokens=settings.max_answer_tokens,
    )
    assert prepared.sha256 is not None
    readings = Readings(ctx.paths)
    model_sha = prepared.sha256
    readings.note(model_sha, doc.sha256, pid=os.getpid(), done=0, eta_s=0.0)
    # In the background, at most read_ahead_threads (0: as many as a question): the user keeps cores.
    threads = settings.read_ahead_threads if background else 0
    request = prepared.request(sampling=Sampling(max_tokens=1), read_only=True, n_threads=threads)
    last_note = 0.0
    reused = 0  # tokens restored from a checkpoint: part of what is read

    def heard(progress: Progress) -> None:
        nonlocal last_note, reused
        if progress.reused:
            reused = progress.reused
        if progress.reading:
            # Counted over the whole document: what an earlier read kept is read too.
            progress = replace(progress, done=reused + progress.done, total=reused + progress.total)
            if time.monotonic() - last_note >= NOTE_EVERY_S:
                last_note = time.monotonic()
                readings.note(model_sha, doc.sha256, done=progress.done, total=progress.total, eta_s=progress.eta_s)
        on_progress(progress)

    try:
        stats = session.run(prepared, request, cancel=cancel, on_progress=heard, background=background).stats
    except BaseException:
        readings.note(model_sha, doc.sha256, pid=0)
        raise
    # A read that finished says how fast this computer reads with the model: a question that does not
    # fit the context estimates its readings by it before the model has answered anything.
    speed: dict[str, float] = {}
    if stats.stop_reason == "read" and stats.prefill_ms > 0:
        speed = {"read_tokens": stats.prompt_tokens - stats.cached_tokens, "read_ms": stats.prefill_ms}
    readings.note(model_sha, doc.sha256, pid=0, **speed)
    return stats


def _local_model_sha(ctx: AppContext) -> str | None:
    """The active local model's sha256; None with a model server (it keeps its own cache)."""
    if ctx.settings.server_url.strip():
        return None
    try:
        return ctx.models.active_sha256(ctx.settings)
    except FolioError:
        return None


def reading_states(ctx: AppContext, doc_shas: list[str]) -> list[ReadState] | None:
    """Each document's reading state with the active local model; None when a server answers."""
    model_sha = _local_model_sha(ctx)
    if model_sha is None:
        return None
    readings = Readings(ctx.paths)
    return [readings.state(model_sha, sha) for sha in doc_shas]


def wait_for_reading(ctx: AppContext, document_ids: list[int], on_progress: Callable[[ReadState], None]) -> None:
    """A question about documents another Folio process is reading (any of them) waits for those
    reads, and then starts from what they kept, instead of reading the documents a second time."""
    model_sha = _local_model_sha(ctx)
    if model_sha is None:
        return
    shas = [ctx.library.get(doc_id).sha256 for doc_id in document_ids]
    Readings(ctx.paths).wait_for_other_reader(model_sha, shas, on_progress)


def on_battery() -> bool:
    """True when the computer runs on battery (psutil tells; a desktop has none)."""
    import psutil

    try:
        battery = psutil.sensors_battery()
    except (OSError, RuntimeError, NotImplementedError):
        return False
    return battery is not None and not battery.power_plugged


# Snapshot bytes per token when the model's facts cannot be read: Qwen3.5-9B's f16 KV cache (DESIGN.md).
FALLBACK_STATE_BYTES_PER_TOKEN = 32_768
PROMPT_TOKENS = 600  # the instructions around a document in a read (assets/prompts/answer.md and markup)


@dataclass(frozen=True)
class ReadingPlan:
    """What read-ahead will read in the current matter: the documents not read yet that the snapshot
    cache can keep beside the matter's documents already read, most recently opened first, then the
    newest. The rest is left out: read, it would push out of the cache what was read before."""

    document_ids: tuple[int, ...] = ()
    tokens: int = 0
    left_out: int = 0  # unread documents of the matter past what the cache keeps
    cache_gb: int = 0
    tokens_per_s: float = 0.0  # the reading speed the estimate uses (0: not known yet)

    @property
    def seconds(self) -> float | None:
        return self.tokens / self.tokens_per_s if self.tokens_per_s > 0 else None

    def words(self) -> str:
        """e.g. '12 documents planned, about 3 h; 188 more do not fit the 20 GB snapshot cache'."""
        if not self.document_ids and not self.left_out:
            return ""
        count = len(self.document_ids)
        said = f"{count} document{'s' if count != 1 else ''} planned"
        if count:
            said += (
                f", about {duration_words(self.seconds)}"
                if self.seconds is not None
                else ", time known after the first read"
            )
        if self.left_out:
            said += f"; {self.left_out} more do not fit the {self.cache_gb} GB snapshot cache"
        return said


@dataclass(frozen=True)
class ReadAheadStatus:
    """What the background reader is doing, for the status bar."""

    state: str  # reading | waiting (a question has the engine) | paused | idle (nothing to read) | off
    title: str = ""
    document_id: int | None = None
    progress: Progress | None = None
    reason: str = ""  # why it is off, or the last document's error
    plan: ReadingPlan | None = None  # the budget, when the reader planned one (not while off)

    def words(self) -> str:
        budget = self.plan.words() if self.plan is not None else ""
        said = self._state_words()
        return f"{said} · {budget}" if budget and self.state not in ("off", "paused") else said

    def _state_words(self) -> str:
        if self.state == "reading" and self.progress is not None and self.progress.reading:
            state = ReadState("reading", self.progress.done, self.progress.total, self.progress.eta_s)
            return f"{self.title}: {state.words()}"
        if self.state == "reading":
            return f"{self.title}: starting to read"
        if self.state == "paused":
            return "paused"
        if self.state == "waiting":
            return f"{self.title}: waiting for the answer"
        if self.state == "off":
            return f"off ({self.reason})"
        if self.reason:
            return f"stopped on {self.reason}"
        return "all it can keep read" if self.plan is not None and self.plan.left_out else "all documents read"


class ReadAhead:
    """Reads the documents of the current matter not yet read with the active local model, the most
    recently opened first, then the newest, one at a time, in the background: run() on a thread of its
    own with its own AppContext. A question preempts it (the session cancels the read between chunks,
    keeping a checkpoint); the next turn resumes it."""

    def __init__(self, ctx: AppContext, session: Session) -> None:
        self.ctx = ctx
        self.session = session
        # The matter whose documents are read (None: the whole library). A library of thousands of
        # documents in dozens of matters is weeks of reading, and more state than the cache keeps.
        self.matter_id = ctx.chosen_matter
        self.paused = False
        self._stop = threading.Event()
        self._poke = threading.Event()
        self._failed: set[int] = set()  # documents whose read failed: not retried until poked
        self.tokens_per_s = 0.0  # the last background read's speed, for the plan's estimate
        self.last_plan = ReadingPlan()

    def why_off(self) -> str | None:
        settings = self.ctx.settings
        if not settings.read_ahead:
            return "off in Settings"
        if settings.server_url.strip():
            return "a model server answers; it keeps its own cache"
        if not settings.state_cache_gb:
            return "the snapshot cache is off"
        if not settings.read_ahead_on_battery and on_battery():
            return "on battery"
        return None

    def next_document(self) -> DocumentRow | None:
        """The first document of the plan (planned afresh: documents come, reads end, matters change)."""
        documents = self.plan()
        return documents[0] if documents else None

    def plan(self) -> list[DocumentRow]:
        """The matter's documents to read, in order, within what the snapshot cache keeps; the budget
        in numbers is `last_plan`. A document already read holds its room; one that would not fit is
        left out (a smaller one after it may still fit)."""
        model_sha = _local_model_sha(self.ctx)
        if model_sha is None:
            self.last_plan = ReadingPlan()
            return []
        from app.store.conversations import Conversations
        from app.store.recent import RecentDocuments
        from inference.planner import GiB

        readings = Readings(self.ctx.paths)
        opened = RecentDocuments(self.ctx.db).opened()  # what the user came back to is read first
        documents = self.ctx.library.all(self.matter_id)
        room = float(self.ctx.settings.state_cache_gb * GiB)
        per_token, per_document = self._state_size()
        planned: list[DocumentRow] = []
        tokens = left_out = 0
        for doc in sorted(documents, key=lambda d: (opened.get(d.id, 0), d.id), reverse=True):
            if doc.id in self._failed or doc.status != "ready":
                continue
            kind = readings.state(model_sha, doc.sha256).kind
            size = (doc.token_estimate + PROMPT_TOKENS) * per_token + per_document
            if size > room:
                left_out += kind in ("unread", "partial")
                continue
            room -= size
            if kind in ("unread", "partial"):
                planned.append(doc)
                tokens += doc.token_estimate + PROMPT_TOKENS
        speed = self.tokens_per_s or Conversations(self.ctx.db).answer_figures(model_sha).read_per_s
        cache_gb = self.ctx.settings.state_cache_gb
        self.last_plan = ReadingPlan(tuple(d.id for d in planned), tokens, left_out, cache_gb, speed)
        return planned

    def _state_size(self) -> tuple[float, int]:
        """Snapshot bytes per token and per document (a recurrent state) of the active model, from its
        GGUF facts; the KV cache type set, or f16 when Folio chooses (the largest: never too many)."""
        from inference.planner import kv_bytes_per_token, recurrent_state_bytes

        settings = self.ctx.settings
        try:
            facts = self.ctx.models.facts(self.ctx.models.active(settings))
            kv = settings.kv_cache_type if settings.kv_cache_type != "auto" else "f16"
            recurrent = recurrent_state_bytes(facts) if facts.is_hybrid or facts.is_recurrent else 0
            return kv_bytes_per_token(facts, kv), recurrent
        except USER_ERRORS:
            pass  # no model set up yet, or its file is gone
        except (OSError, KeyError, ValueError):
            pass  # facts that cannot be read: plan as for the largest model
        return float(FALLBACK_STATE_BYTES_PER_TOKEN), 0

    def poke(self, *, retry_failed: bool = False) -> None:
        """Look again now (a document was added, a setting or the model changed, an answer ended)."""
        if retry_failed:
            self._failed.clear()
        self._poke.set()

    def use_matter(self, matter_id: int) -> None:
        """Read this matter's documents from now on: a read of another's stops (with its checkpoint)."""
        if matter_id != self.matter_id:
            self.matter_id = matter_id
            self.session.pause_background()
            self._poke.set()

    def pause(self) -> None:
        self.paused = True
        self.session.pause_background()
        self._poke.set()

    def resume(self) -> None:
        self.paused = False
        self._poke.set()

    def stop(self) -> None:
        self._stop.set()
        self.session.pause_background()
        self._poke.set()

    def run(self, on_status: Callable[[ReadAheadStatus], None], idle_s: float = 30.0) -> None:
        """Until stop(): read the next document, or wait for a poke (or idle_s) when there is none."""
        while not self._stop.is_set():
            reason = self.why_off()
            doc = None if reason else self.next_document()
            plan = None if reason else self.last_plan
            if doc is None or self.paused:
                state = "off" if reason else "paused" if self.paused else "idle"
                on_status(ReadAheadStatus(state, reason=reason or "", plan=plan))
                self._poke.wait(idle_s)
                self._poke.clear()
                continue
            if self.session.wanted:
                on_status(ReadAheadStatus("waiting", doc.title, doc.id, plan=plan))
            self._read(doc, on_status)

    def _read(self, doc: DocumentRow, on_status: Callable[[ReadAheadStatus], None]) -> None:
        plan = self.last_plan

        def progress(p: Progress) -> None:
            if p.reading and p.tokens_per_s > 0:
                self.tokens_per_s = p.tokens_per_s
            on_status(ReadAheadStatus("reading", doc.title, doc.id, p, plan=plan))

        try:
            stats = read_document(self.ctx, self.session, doc.id, progress, background=True)
        except USER_ERRORS as exc:
            self._failed.add(doc.id)
            on_status(ReadAheadStatus("idle", doc.title, doc.id, reason=f"{doc.title}: {one_line(exc)}", plan=plan))
            return
        if stats.stop_reason == "cancelled":
            on_status(ReadAheadStatus("paused" if self.paused else "waiting", doc.title, doc.id, plan=plan))
