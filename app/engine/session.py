"""A session: one engine, the plan that sizes it and the caches that go with it, shared by chat,
extraction and model setup so the window never runs two engine processes.

The session never asks which engine it has: an engine that applies the chat template itself (a
model server) says so (`Engine.applies_template`), and the session then sends the conversation
instead of planning a local context. Everything here may be called from more than one thread (the
window's chat worker and its model setup worker): the lock keeps one request on the engine at a
time. A background read (read-ahead) gives way: whatever else wants the engine cancels it, and it
stops between two chunks, keeping a checkpoint of what it read (`generate(background=True)`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.caches import Readings
from app.engine.factory import make_engine
from app.errors import FolioError
from app.models.registry import ModelRecord, current_facts
from app.settings import engine_draft_tokens
from inference.chat_format import Message, PromptPart, opens_thinking, template_for
from inference.engine_api import Engine, EngineConfig, GenerateRequest, TokenCount
from inference.events import EngineEvent, Loaded, Loading, PrefillProgress, PrefixReused, StateSaved
from inference.gguf_facts import ModelFacts
from inference.planner import GiB, GpuDevice, Hardware, Plan, PlanRequest, plan
from inference.prompt import PromptDocument, RenderedPrompt, SourceBlock, render_prompt
from inference.vision import has_images
from ingest.document import Anchor, unit_of

if TYPE_CHECKING:
    from app.citations.grounding import Sources
    from app.context import AppContext
    from app.paths import Paths
    from app.settings import Settings
    from app.store.library import DocumentRow


@dataclass(frozen=True)
class Progress:
    """What the engine is doing, for chat and extraction alike: a status line, or (total > 0) how
    far reading the prompt has come."""

    text: str = ""
    done: int = 0
    total: int = 0
    tokens_per_s: float = 0.0
    eta_s: float = 0.0

    @property
    def reading(self) -> bool:
        return self.total > 0


def progress_of(event: EngineEvent, label: str) -> Progress | None:
    """The user-facing progress for an engine event, or None for the answer's own events."""
    if isinstance(event, Loading):
        return Progress(f"loading {label}")
    if isinstance(event, Loaded):
        return Progress(f"model ready in {event.seconds:.1f} s (context {event.n_ctx:,} tokens)")
    if isinstance(event, PrefixReused):
        where = _REUSED_FROM.get(event.source, event.source)
        return Progress(f"documents already read: {event.tokens:,} tokens reused ({where}, {event.seconds:.2f} s)")
    if isinstance(event, PrefillProgress):
        return Progress("", event.done, event.total, event.tokens_per_s, event.eta_s)
    return None


_REUSED_FROM = {
    "context": "still in the model's context",
    "memory": "snapshot in memory",
    "disk": "snapshot on disk",
    "documents": "the documents read before, from disk",
    "checkpoint": "continuing an unfinished reading",
}


@dataclass(frozen=True)
class Documents:
    """The documents of one question, read from the library once."""

    rows: list[DocumentRow]
    prompt: list[PromptDocument]
    images_left_out: int  # scanned pages and keyframes the model will not see
    attachments: list[DocumentRow] = field(default_factory=list)  # the e-mails' attachments read along
    attached: list[list[str]] = field(default_factory=list)  # per row: its attachments' sha256s

    @property
    def ids(self) -> list[int]:
        return [d.id for d in self.rows]

    @property
    def tags(self) -> tuple[str, ...]:
        """The sha256s of every document read (an e-mail's attachments too): stored with a snapshot
        so a purge finds it."""
        return tuple(dict.fromkeys(d.sha256 for d in [*self.rows, *self.attachments]))

    @property
    def document_tags(self) -> tuple[tuple[str, ...], ...]:
        """The same, per document in prompt order (an e-mail with its attachments)."""
        if len(self.attached) != len(self.rows):
            return ()
        return tuple((row.sha256, *parts) for row, parts in zip(self.rows, self.attached, strict=True))


def read_documents(
    ctx: AppContext,
    document_ids: list[int],
    *,
    images: bool = False,
    pages: Mapping[int, Collection[int]] | None = None,
) -> Documents:
    """Documents as marked blocks; with images=True a scanned page or keyframe opens its own block.
    `pages` keeps only those pages of a document (its caller says so to the model and the user).
    An e-mail brings its attachments along, each part marked with its attachment number."""
    library = ctx.library
    rows = [library.get(doc_id) for doc_id in document_ids]
    documents: list[PromptDocument] = []
    attachments: list[DocumentRow] = []
    attached: list[list[str]] = []
    left_out = 0
    for index, doc in enumerate(rows, start=1):
        keep = pages.get(doc.id) if pages is not None else None
        blocks, missed = _source_blocks(ctx, doc, images=images, keep=keep)
        attached.append([])
        left_out += missed
        for attachment in library.attachments(doc.id):
            if attachment.document_id is None or (pages is not None and attachment.document_id not in pages):
                continue
            part = library.get(attachment.document_id)
            attachments.append(part)
            attached[-1].append(part.sha256)
            part_keep = pages.get(part.id) if pages is not None else None
            part_blocks, missed = _source_blocks(
                ctx, part, images=images, attachment=attachment.position, keep=part_keep
            )
            blocks += part_blocks
            left_out += missed
        documents.append(PromptDocument(index=index, title=doc.title, blocks=blocks))
    return Documents(rows, documents, left_out, attachments, attached)


def _source_blocks(
    ctx: AppContext,
    doc: DocumentRow,
    *,
    images: bool,
    attachment: int | None = None,
    keep: Collection[int] | None = None,
) -> tuple[list[SourceBlock], int]:
    """One document's blocks, and how many of its page images were left out."""
    blocks: list[SourceBlock] = []
    current_marker: str | None = None
    current_image: str | None = None
    lines: list[str] = []
    left_out = 0
    unit = unit_of(doc.kind)
    for seg in ctx.library.segments(doc.id):
        if keep is not None and seg.page not in keep:
            continue
        if seg.image_blob and not images:
            left_out += 1
        image = str(ctx.paths.blobs_dir / seg.image_blob) if images and seg.image_blob else None
        if not seg.text and image is None:
            continue
        anchor = Anchor(page=seg.page, label=seg.label, t_seconds=seg.t_seconds, unit=unit, attachment=attachment)
        marker = anchor.marker()
        if (marker != current_marker or image is not None) and (lines or current_image):
            blocks.append(SourceBlock(current_marker or "", "\n".join(lines), image=current_image))
            lines = []
            current_image = None
        current_marker = marker
        current_image = image or current_image
        if seg.text:
            lines.append(seg.text)
    if lines or current_image:
        blocks.append(SourceBlock(current_marker or "", "\n".join(lines), image=current_image))
    return blocks, left_out


def prompt_documents(
    ctx: AppContext,
    document_ids: list[int],
    *,
    images: bool = False,
    pages: Mapping[int, Collection[int]] | None = None,
) -> list[PromptDocument]:
    return read_documents(ctx, document_ids, images=images, pages=pages).prompt


@dataclass(frozen=True)
class Prepared:
    """What one request needs from the engine, whichever engine it is."""

    config: EngineConfig | None  # None when the engine applies the template itself
    parts: list[PromptPart]
    prefix_parts: int
    messages: tuple[Message, ...]
    starts_in_thinking: bool
    label: str
    sha256: str | None
    demo: bool
    documents: Documents
    pages_only: bool = False  # only some pages of the documents: not what a question about them reads

    def request(self, **fields: object) -> GenerateRequest:
        return GenerateRequest(
            self.parts,
            prefix_parts=self.prefix_parts,
            messages=self.messages,
            prefix_tags=self.documents.tags,
            document_tags=self.documents.document_tags,
            **fields,  # type: ignore[arg-type]
        )


def note_saved(ctx: AppContext, plan: Prepared, event: StateSaved) -> None:
    """Note a state the engine saved: the state that holds the request's first documents (all of them
    after the prefix), or a checkpoint of a read of one document (one of several is another prefix)."""
    rows = plan.documents.rows
    if plan.sha256 is None or not rows or plan.pages_only:
        return
    readings = Readings(ctx.paths)
    if event.complete:
        held = event.documents or (1 if len(rows) == 1 else 0)  # 0: a prefix that marks no documents
        if 0 < held <= len(rows):
            readings.note_documents(plan.sha256, [d.sha256 for d in rows[:held]], key=event.key, tokens=event.tokens)
    elif len(rows) == 1:
        readings.note(plan.sha256, rows[0].sha256, checkpoint=event.key, kept=event.tokens)


def reading_order(ctx: AppContext, model_sha: str, document_ids: list[int]) -> list[int]:
    """The order to put a new selection's documents in: those whose state was kept before first (the
    longest state on disk that holds some of them, in its order), then the rest in the order they were
    added to the library. Each document's text does not depend on the documents after it
    (inference.prompt), so the engine starts from that state and reads only the rest; and a set of
    documents always comes in the same order, whatever order it was selected in, so one reading of it
    serves every later selection of the same documents."""
    ids = list(dict.fromkeys(document_ids))
    rows = {doc_id: ctx.library.get(doc_id) for doc_id in ids}
    by_sha = {row.sha256: doc_id for doc_id, row in rows.items()}
    first = [by_sha[sha] for sha in Readings(ctx.paths).read_first(model_sha, list(by_sha)) if sha in by_sha]
    return first + sorted(doc_id for doc_id in ids if doc_id not in first)


BuildMessages = Callable[[list[PromptDocument]], list[Message]]


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
    _background: bool = False  # a background read holds the engine

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
        if self._engine is not None:
            self._engine.cancel()  # thread-safe: sets a flag, takes no lock

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """The engine to this thread alone; a background read holding it stops for us (between chunks)."""
        with self._making:
            self._waiting += 1
        try:
            if self._background:
                self.cancel()
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
        if self._background:
            self.cancel()

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
            raise FolioError(chosen.reason)
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
            return Prepared(None, [], 0, tuple(messages), False, served, None, False, documents)
        model = ctx.models.active(self.settings)
        if reuse_order and len(document_ids) > 1:
            document_ids = reading_order(ctx, model.sha256, document_ids)
        template = template_for(model.architecture, model.facts.chat_template)
        documents = read_documents(ctx, document_ids, images=model.mmproj_path is not None, pages=pages)
        rendered = render_prompt(template, build(documents.prompt), enable_thinking=think)
        count = self.count_tokens(model, rendered)
        return Prepared(
            config=self.engine_config(model, count, answer_tokens, images=has_images(rendered.parts)),
            parts=rendered.parts,
            prefix_parts=rendered.prefix_parts,
            messages=(),  # the local engine takes the rendered parts
            starts_in_thinking=think and template.thinks and opens_thinking(rendered.parts),
            label=model.label,
            sha256=model.sha256,
            demo=model.is_starter,
            documents=documents,
            pages_only=pages is not None,
        )

    def images_left_out_line(self, documents: Documents) -> str | None:
        """Never leave pages out silently: scanned pages and keyframes the model will not see."""
        if not documents.images_left_out:
            return None
        why = "server_images is off" if self.engine.applies_template else "the model has no vision projector"
        return f"{documents.images_left_out} page image(s) left out ({why}); only their text, if any, is read"

    def generate(
        self, config: EngineConfig | None, request: GenerateRequest, *, background: bool = False
    ) -> Iterator[EngineEvent]:
        """The engine's events for one request, with the engine to itself while they come. A background
        request is cancelled (it ends with stop_reason 'cancelled') as soon as another one waits."""
        if not background:
            with self.turn():
                yield from self.engine.generate(config, request)
            return
        with self.lock:
            self._background = True
            try:
                for event in self.engine.generate(config, request):
                    if self._waiting:
                        self.engine.cancel()  # also covers a wait that began as this request started
                    yield event
            finally:
                self._background = False

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
