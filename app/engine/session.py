"""The session: the one owner of an engine, shared by every job that asks the model anything
(chat, extraction, comparison, reading, model setup), so the window never runs two engine processes.

A job prepares its request (`prepare`: the documents read into prompt blocks, rendered through the
model's chat template, counted and planned for a local model; the conversation itself for a model
server, which applies its own template) and runs it (`run`: the engine's events folded into one
`Result`, progress handed to the job's callback as it comes). Every model request goes through
`run`. Each job has its own `CancelToken`: a stop is for that job's requests only, checked before
each request starts and passed down to the engine as the id of the request under way, so it is never
lost between two requests of one job and never lands on another's.

Everything here may be called from more than one thread (the window's chat worker, its model setup
and read-ahead): `turn()` gives the engine to one thread at a time, and a job holds it across
prepare and run (`with session.turn():`), so counting a prompt and answering it are one hold. A
background read gives way: whatever else wants the engine stops the background request (it keeps a
checkpoint and resumes later). The session never asks which engine it has: an engine says what it
does (`Engine.applies_template`).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from app.caches import Readings
from app.engine.documents import BuildMessages, Documents, read_documents, reading_order
from app.engine.factory import make_engine
from app.engine.progress import Progress, progress_of
from app.errors import DoesNotFit, FolioError
from app.models.registry import ModelRecord, current_facts
from app.settings import engine_draft_tokens
from inference.chat_format import Message, opens_thinking, template_for
from inference.engine_api import Engine, EngineConfig, GenerateRequest, TokenCount
from inference.events import Finished, GenerationStats, Scored, StateSaved, TokenText
from inference.gguf_facts import ModelFacts
from inference.planner import GiB, GpuDevice, Hardware, Plan, PlanRequest, plan
from inference.prompt import RenderedPrompt, render_prompt
from inference.vision import has_images

if TYPE_CHECKING:
    from app.citations.grounding import Sources
    from app.context import AppContext
    from app.paths import Paths
    from app.settings import Settings
    from app.store.library import DocumentRow

_REQUEST_IDS = itertools.count(1)


class CancelToken:
    """One job's stop, thread-safe. `cancel()` from any thread stops the job's request under way (the
    engine is told that request's id) and every later request of the job before it starts."""

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._running: tuple[Engine, int] | None = None

    def cancel(self) -> None:
        self._stopped.set()
        with self._lock:
            running = self._running
        if running is not None:
            engine, request_id = running
            engine.cancel(request_id)

    @property
    def cancelled(self) -> bool:
        return self._stopped.is_set()

    @contextlib.contextmanager
    def running(self, engine: Engine, request_id: int) -> Iterator[None]:
        """While this request runs, a cancel stops it; one that came just before stops it at once."""
        with self._lock:
            self._running = (engine, request_id)
        if self._stopped.is_set():
            engine.cancel(request_id)
        try:
            yield
        finally:
            with self._lock:
                self._running = None


@dataclass(frozen=True)
class ModelIdentity:
    """Who answers: a local model (by its sha256) or a model server (by its name; weights unknown)."""

    label: str
    key: str  # what a result is keyed on: the local model's sha256, or 'server:<label>'
    sha256: str | None
    demo: bool  # the starter model: answers are a demonstration, not advice
    record: ModelRecord | None  # the local model's record; None for a server


@dataclass(frozen=True)
class Prepared:
    """One request ready for the engine, whichever engine it is: rendered parts on a planned context
    (a local model), or the conversation (a server that applies its own template)."""

    config: EngineConfig | None  # None when the engine applies the template itself
    # A local model's rendered prompt (template markup and untrusted text apart), or for a model
    # server the conversation itself.
    prompt: RenderedPrompt | tuple[Message, ...]
    starts_in_thinking: bool
    label: str
    sha256: str | None
    demo: bool
    documents: Documents
    pages_only: bool = False  # only some pages of the documents: not what a question about them reads

    def request(self, **fields: object) -> GenerateRequest:
        prompt = self.prompt
        rendered = isinstance(prompt, RenderedPrompt)
        return GenerateRequest(
            prompt.parts if isinstance(prompt, RenderedPrompt) else [],
            prefix_parts=prompt.prefix_parts if isinstance(prompt, RenderedPrompt) else 0,
            messages=() if rendered else prompt,  # type: ignore[arg-type]
            prefix_tags=self.documents.tags,
            document_tags=self.documents.document_tags,
            **fields,  # type: ignore[arg-type]
        )


@dataclass(frozen=True)
class Result:
    """What one request gave: the text written (raw, thinking included), the scores of a scored
    request, and the engine's figures (stop_reason 'cancelled' for a stopped one)."""

    text: str
    stats: GenerationStats
    scored: Scored | None = None

    @property
    def cancelled(self) -> bool:
        return self.stats.stop_reason == "cancelled"


def note_saved(paths: Paths, prepared: Prepared, event: StateSaved) -> None:
    """Note a state the engine saved: the state that holds the request's first documents (all of them
    after the prefix), or a checkpoint of a read of one document (one of several is another prefix)."""
    rows = prepared.documents.rows
    if prepared.sha256 is None or not rows or prepared.pages_only:
        return
    readings = Readings(paths)
    if event.complete:
        held = event.documents or (1 if len(rows) == 1 else 0)  # 0: a prefix that marks no documents
        if 0 < held <= len(rows):
            readings.note_documents(
                prepared.sha256, [d.sha256 for d in rows[:held]], key=event.key, tokens=event.tokens
            )
    elif len(rows) == 1:
        readings.note(prepared.sha256, rows[0].sha256, checkpoint=event.key, kept=event.tokens)


ProgressSink = Callable[[Progress], None]
TextSink = Callable[[str], None]


@dataclass
class Session:
    """One engine (made on first use), this machine's hardware, and the grounding passages of the
    last document selections."""

    settings: Settings
    paths: Paths
    _engine: Engine | None = None
    _hardware: Hardware | None = None
    _sources: dict[tuple[tuple[int, str], ...], tuple[AppContext, Sources]] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)  # one request on the engine at a time
    _making: threading.Lock = field(default_factory=threading.Lock)
    _waiting: int = 0  # requests waiting for the engine: a background read gives way to them
    _background: int = 0  # the id of the background request holding the engine (0: none)
    _jobs: CancelToken | None = None  # the token of `cancel()`: the job that runs now, whatever it is

    @classmethod
    def for_context(cls, ctx: AppContext, engine: Engine | None = None) -> Session:
        return cls(ctx.settings, ctx.paths, engine)

    @property
    def engine(self) -> Engine:
        # Its own lock, held for no time at all: the UI thread may ask while an answer holds `lock`.
        with self._making:
            if self._engine is None:
                self._engine = make_engine(self.settings)  # local process or model server
            return self._engine

    def cancel(self) -> None:
        """Stop whatever request runs now (Ctrl+C in the CLI; a job with its own token cancels that)."""
        if self._engine is not None:
            self._engine.cancel()  # thread-safe: sets a flag, takes no lock

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """The engine to this thread alone; a background read holding it stops for us (between chunks)."""
        with self._making:
            self._waiting += 1
        try:
            self.pause_background()
            self.lock.acquire()
        finally:
            with self._making:
                self._waiting -= 1
        try:
            yield
        finally:
            self.lock.release()

    def pause_background(self) -> None:
        """Stop a background read between two chunks (it keeps a checkpoint); safe from any thread."""
        running = self._background
        if running and self._engine is not None:
            self._engine.cancel(running)

    @property
    def wanted(self) -> bool:
        """Another request waits for the engine (a background read should not start now)."""
        return self._waiting > 0

    def close(self) -> None:
        """End the engine; the next request makes a new one from the settings as they are then."""
        with self.turn():
            with self._making:
                engine, self._engine = self._engine, None
            if engine is not None:
                engine.close()
            self._hardware = None
            self._sources.clear()

    # -- who answers -----------------------------------------------------------------------------
    def model_identity(self, ctx: AppContext) -> ModelIdentity:
        """The model that answers: the server's (reached now, before anything is stored) or the active
        local one."""
        served = self.served_label()
        if served is not None:
            return ModelIdentity(served, f"server:{served}", None, False, None)
        record = ctx.models.active(self.settings)
        return ModelIdentity(record.label, record.sha256, record.sha256, record.is_starter, record)

    def context_ceiling(self, model: ModelRecord) -> int:
        """The most tokens a request to this local model may use: its trained context, capped by the
        user's setting (0: unknown and uncapped)."""
        ceiling = self.facts(model).context_length or 0
        cap = self.settings.context_cap
        return min(ceiling, cap) if ceiling and cap else ceiling or cap

    # -- planning --------------------------------------------------------------------------------
    def hardware(self) -> Hardware:
        if self._hardware is not None:  # measured once: model setup need not wait for an answer
            return self._hardware
        with self.turn():
            if self._hardware is None:
                gpus = tuple(GpuDevice(*d) for d in self.engine.gpu_devices())
                self._hardware = Hardware.detect(gpus)
            return self._hardware

    def facts(self, model: ModelRecord) -> ModelFacts:
        return current_facts(model, self.paths.models_dir / "facts")

    def count_tokens(self, model: ModelRecord, rendered: RenderedPrompt) -> TokenCount:
        """Exact text tokens (the engine's tokenizer); images measured by the projector once loaded."""
        with self.turn():
            probe = self.engine.config
            if probe is None or probe.model_path != model.path:
                probe = EngineConfig(model.path, n_ctx=0, n_threads=1)
            return self.engine.count_tokens(probe, rendered.parts, rendered.prefix_parts)

    def plan(self, model: ModelRecord, prompt_tokens: int, answer_tokens: int) -> Plan:
        request = PlanRequest(
            prompt_tokens=prompt_tokens,
            answer_tokens=answer_tokens,
            context_cap=self.settings.context_cap,
            kv_type=self.settings.kv_cache_type,
            threads=self.settings.threads,
            draft_tokens=engine_draft_tokens(self.settings),
        )
        return plan(self.facts(model), self.hardware(), request)

    def engine_config(
        self, model: ModelRecord, count: TokenCount, answer_tokens: int, *, images: bool = False
    ) -> EngineConfig:
        """The planner's configuration, or the loaded one when it already holds this prompt."""
        mmproj = model.mmproj_path if images else None  # the projector costs memory: load it when needed
        current = self.engine.config
        forced_kv = self.settings.kv_cache_type
        if (
            current
            and current.model_path == model.path
            and current.n_ctx >= count.total + answer_tokens
            and forced_kv in ("auto", current.kv_type)
            and (current.mmproj_path == mmproj or mmproj is None)
            and current.draft_tokens == engine_draft_tokens(self.settings)
        ):
            return current  # re-creating a context costs seconds and drops what it holds
        chosen = self.plan(model, count.total, answer_tokens)
        if not chosen.fits:
            raise DoesNotFit(chosen.reason)
        return chosen.engine_config(
            model.path,
            mmproj_path=mmproj,
            model_id=model.sha256,
            state_cache_dir=str(self.paths.state_cache_dir) if self.settings.state_cache_gb else "",
            state_cache_bytes=self.settings.state_cache_gb * GiB,
        )

    # -- requests --------------------------------------------------------------------------------
    def served_label(self) -> str | None:
        """The model server's model, reached now (before anything is stored); None for a local engine."""
        if not self.engine.applies_template:
            return None
        with self.turn():
            for _event in self.engine.load(None):
                pass
        return self.engine.label

    def prepare(
        self,
        ctx: AppContext,
        document_ids: list[int],
        build: BuildMessages,
        *,
        think: bool,
        answer_tokens: int,
        pages: Mapping[int, Collection[int]] | None = None,
        reuse_order: bool = False,
    ) -> Prepared:
        """Read the documents once (only `pages` of them, when given) and turn them into what the
        engine takes: rendered parts on a planned context (local), or the conversation itself (a
        server applies its own template). With reuse_order (a new conversation: nothing refers to its
        documents by number yet), a local model gets them in `reading_order`; `documents.rows` says
        the order used."""
        served = self.served_label()
        if served is not None:
            documents = read_documents(ctx, document_ids, images=self.settings.server_images, pages=pages)
            messages = build(documents.prompt)
            return Prepared(None, tuple(messages), False, served, None, False, documents)
        model = ctx.models.active(self.settings)
        if reuse_order and len(document_ids) > 1:
            document_ids = reading_order(ctx, model.sha256, document_ids)
        template = template_for(model.architecture, model.facts.chat_template)
        documents = read_documents(ctx, document_ids, images=model.mmproj_path is not None, pages=pages)
        rendered = render_prompt(template, build(documents.prompt), enable_thinking=think)
        count = self.count_tokens(model, rendered)
        return Prepared(
            config=self.engine_config(model, count, answer_tokens, images=has_images(rendered.parts)),
            prompt=rendered,
            starts_in_thinking=think and template.thinks and opens_thinking(rendered.parts),
            label=model.label,
            sha256=model.sha256,
            demo=model.is_starter,
            documents=documents,
            pages_only=pages is not None,
        )

    def run(
        self,
        prepared: Prepared,
        request: GenerateRequest,
        *,
        cancel: CancelToken | None = None,
        on_progress: ProgressSink | None = None,
        on_text: TextSink | None = None,
        background: bool = False,
    ) -> Result:
        """Run one request on the engine and fold its events: the text (each piece also to `on_text`
        as it comes), the scores of a scored request, the engine's figures; progress to `on_progress`;
        states the engine kept noted for reading order. A token already cancelled runs nothing. A
        background request gives way to any other (it ends 'cancelled' with a checkpoint)."""
        request = replace(request, request_id=request.request_id or next(_REQUEST_IDS))
        token = cancel or CancelToken()
        pieces: list[str] = []
        scored: Scored | None = None
        stats: GenerationStats | None = None
        with self._holding(request.request_id, background):
            if token.cancelled:
                return Result("", _CANCELLED, None)
            engine = self.engine
            with token.running(engine, request.request_id):
                for event in engine.generate(prepared.config, request):
                    if background and self._waiting:
                        engine.cancel(request.request_id)  # a wait that began as this request started
                    if isinstance(event, TokenText):
                        pieces.append(event.text)
                        if on_text is not None:
                            on_text(event.text)
                    elif isinstance(event, Scored):
                        scored = event
                    elif isinstance(event, Finished):
                        stats = event.stats
                    elif isinstance(event, StateSaved):
                        note_saved(self.paths, prepared, event)
                    elif on_progress is not None:
                        progress = progress_of(event, prepared.label)
                        if progress is not None:
                            on_progress(progress)
        if stats is None:
            raise FolioError(f"{prepared.label} ended the answer without saying how")
        return Result("".join(pieces), stats, scored)

    @contextlib.contextmanager
    def _holding(self, request_id: int, background: bool) -> Iterator[None]:
        """The engine for one request: a turn (stopping a background read), or, for a background
        request, the lock alone, giving way as soon as anything else wants it."""
        if not background:
            with self.turn():
                yield
            return
        with self.lock:
            self._background = request_id
            try:
                if self._waiting:
                    self.pause_background()
                yield
            finally:
                self._background = 0

    def images_left_out_line(self, documents: Documents) -> str | None:
        """Never leave pages out silently: scanned pages and keyframes the model will not see."""
        if not documents.images_left_out:
            return None
        why = "server_images is off" if self.engine.applies_template else "the model has no vision projector"
        return f"{documents.images_left_out} page image(s) left out ({why}); only their text, if any, is read"

    def sources(self, ctx: AppContext, rows: Sequence[DocumentRow]) -> Sources:
        """The documents' passages for grounding, kept for the last few selections (seconds to build
        for a long contract; a stored document never changes, so ids and sha256s are the key)."""
        from app.citations.grounding import Sources

        key = tuple((d.id, d.sha256) for d in rows)
        kept = self._sources.get(key)
        if kept is None or kept[0] is not ctx:  # passages read page text through the ctx that loaded them
            while len(self._sources) >= SOURCES_KEPT:
                self._sources.pop(next(iter(self._sources)))
            kept = self._sources[key] = (ctx, Sources.load(ctx, [d.id for d in rows]))
        return kept[1]


SOURCES_KEPT = 4  # document selections whose passages stay in memory for grounding


_CANCELLED = GenerationStats(0, 0, 0, 0.0, 0.0, 0, "cancelled")  # a request stopped before it started
