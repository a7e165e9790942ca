"""Ask a question about documents: build the prompt, run the engine, check citations, store it all."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass

from app.audit import AuditLog, record_question
from app.citations import DocumentIndex
from app.context import AppContext
from app.conversations import Conversations, MessageRow
from app.engines import make_engine
from app.errors import FolioError
from app.grounding import Sources, ground_answer
from app.library import DocumentRow
from app.models import ModelRecord
from app.settings import engine_draft_tokens
from assets import read_text
from inference.chat_format import Message, PromptPart, opens_thinking, template_for
from inference.engine_api import Engine, EngineConfig, GenerateRequest, Sampling, TokenCount
from inference.engine_process import EngineProcess
from inference.errors import EngineError
from inference.events import (
    EngineEvent,
    Finished,
    GenerationStats,
    Loaded,
    Loading,
    PrefillProgress,
    PrefixReused,
    TokenText,
)
from inference.gguf_facts import ModelFacts
from inference.planner import GiB, GpuDevice, Hardware, Plan, PlanRequest, plan
from inference.prompt import PromptDocument, RenderedPrompt, SourceBlock, build_messages, render_prompt
from inference.remote import RemoteEngine
from inference.thinking import ThinkingSplitter
from inference.vision import has_images
from ingest.document import Anchor, unit_of


@dataclass(frozen=True)
class ChatStarted:
    conversation_id: int
    user_message_id: int
    assistant_message_id: int
    model_label: str
    demo_model: bool


@dataclass(frozen=True)
class EngineStatus:
    text: str


@dataclass(frozen=True)
class PrefillUpdate:
    done: int
    total: int
    tokens_per_s: float
    eta_s: float


@dataclass(frozen=True)
class AnswerDelta:
    channel: str  # 'answer' | 'thinking'
    text: str


@dataclass(frozen=True)
class AnswerDone:
    message: MessageRow
    stats: GenerationStats | None = None  # timings that are not stored, such as time to first token


ChatEvent = ChatStarted | EngineStatus | PrefillUpdate | AnswerDelta | AnswerDone
EventSink = Callable[[ChatEvent], None]


def prompt_documents(
    ctx: AppContext,
    document_ids: list[int],
    *,
    images: bool = False,
    pages: Mapping[int, Collection[int]] | None = None,
) -> list[PromptDocument]:
    """Documents as marked blocks; with images=True a scanned page or keyframe opens its own block.
    `pages` keeps only those pages of a document (its caller says so to the model and the user).
    An e-mail brings its attachments along, each part marked with its attachment number."""
    library = ctx.library
    documents: list[PromptDocument] = []
    for index, doc_id in enumerate(document_ids, start=1):
        doc = library.get(doc_id)
        keep = pages.get(doc_id) if pages is not None else None
        blocks = _source_blocks(ctx, doc, images=images, keep=keep)
        for attachment in library.attachments(doc_id):
            if attachment.document_id is None or (pages is not None and attachment.document_id not in pages):
                continue
            part = library.get(attachment.document_id)
            part_keep = pages.get(part.id) if pages is not None else None
            blocks += _source_blocks(ctx, part, images=images, attachment=attachment.position, keep=part_keep)
        documents.append(PromptDocument(index=index, title=doc.title, blocks=blocks))
    return documents


def _source_blocks(
    ctx: AppContext,
    doc: DocumentRow,
    *,
    images: bool,
    attachment: int | None = None,
    keep: Collection[int] | None = None,
) -> list[SourceBlock]:
    blocks: list[SourceBlock] = []
    current_marker: str | None = None
    current_image: str | None = None
    lines: list[str] = []
    unit = unit_of(doc.kind)
    for seg in ctx.library.segments(doc.id):
        if keep is not None and seg.page not in keep:
            continue
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
    return blocks


def document_indexes(ctx: AppContext, document_ids: list[int]) -> list[DocumentIndex]:
    library = ctx.library
    indexes = []
    for doc_id in document_ids:
        index = document_index(ctx, doc_id)
        for attachment in library.attachments(doc_id):
            if attachment.document_id is not None:
                index.attachments[attachment.position] = document_index(ctx, attachment.document_id)
        indexes.append(index)
    return indexes


def document_index(ctx: AppContext, doc_id: int) -> DocumentIndex:
    library = ctx.library
    doc = library.get(doc_id)
    return DocumentIndex(
        label_to_page=library.page_labels(doc_id),
        page_count=doc.page_count,
        duration_s=doc.duration_s,
        page_text=functools.partial(library.page_text, doc_id),
        document_id=doc_id,
        unit=unit_of(doc.kind),
        clause_paragraphs=functools.partial(library.clause_paragraphs, doc_id),
    )


def _with_attachments(ctx: AppContext, document_ids: list[int]) -> list[int]:
    library = ctx.library
    out = list(document_ids)
    for doc_id in document_ids:
        out += [a.document_id for a in library.attachments(doc_id) if a.document_id is not None]
    return list(dict.fromkeys(out))


class ChatService:
    """Runs one question at a time on the engine it owns."""

    def __init__(self, ctx: AppContext, engine: Engine | None = None) -> None:
        self.ctx = ctx
        self.engine: Engine = engine or make_engine(ctx.settings)  # local process or model server
        self.conversations = Conversations(ctx.db)
        self._hardware: Hardware | None = None
        # Grounding reads the documents' pages into passages once per selection (seconds for a long
        # contract), keyed by the documents' ids and sha256s: a stored document never changes.
        self._sources: dict[tuple[tuple[int, str], ...], Sources] = {}

    def cancel(self) -> None:
        self.engine.cancel()

    def close(self) -> None:
        self.engine.close()

    def hardware(self) -> Hardware:
        if self._hardware is None:
            gpus: tuple[GpuDevice, ...] = ()
            if isinstance(self.engine, EngineProcess):
                gpus = tuple(GpuDevice(*d) for d in self.engine.gpu_devices())
            self._hardware = Hardware.detect(gpus)
        return self._hardware

    def facts(self, model: ModelRecord) -> ModelFacts:
        return self.ctx.models.facts(model)

    def count_tokens(self, model: ModelRecord, rendered: RenderedPrompt) -> TokenCount:
        """Exact text tokens (the engine's tokenizer); images measured by the projector once loaded."""
        if not isinstance(self.engine, EngineProcess):
            raise FolioError("token counts need the local engine")
        probe = self.engine.config or EngineConfig(model.path, n_ctx=0, n_threads=1)
        if probe.model_path != model.path:
            probe = EngineConfig(model.path, n_ctx=0, n_threads=1)
        return self.engine.count_tokens(probe, rendered.parts, rendered.prefix_parts)

    def plan(self, model: ModelRecord, prompt_tokens: int, answer_tokens: int) -> Plan:
        settings = self.ctx.settings
        request = PlanRequest(
            prompt_tokens=prompt_tokens,
            answer_tokens=answer_tokens,
            context_cap=settings.context_cap,
            kv_type=settings.kv_cache_type,
            threads=settings.threads,
            draft_tokens=engine_draft_tokens(settings),
        )
        return plan(self.facts(model), self.hardware(), request)

    def engine_config(
        self, model: ModelRecord, count: TokenCount, answer_tokens: int, *, images: bool = False
    ) -> EngineConfig:
        """The planner's configuration, or the loaded one when it already holds this prompt."""
        mmproj = model.mmproj_path if images else None  # the projector costs memory: load it when needed
        current = self.engine.config
        forced_kv = self.ctx.settings.kv_cache_type
        if (
            current
            and current.model_path == model.path
            and current.n_ctx >= count.total + answer_tokens
            and forced_kv in ("auto", current.kv_type)
            and (current.mmproj_path == mmproj or mmproj is None)
            and current.draft_tokens == engine_draft_tokens(self.ctx.settings)
        ):
            return current  # re-creating a context costs seconds and drops what it holds
        chosen = self.plan(model, count.total, answer_tokens)
        if not chosen.fits:
            raise FolioError(chosen.reason)
        settings = self.ctx.settings
        return chosen.engine_config(
            model.path,
            mmproj_path=mmproj,
            model_id=model.sha256,
            state_cache_dir=str(self.ctx.paths.state_cache_dir) if settings.state_cache_gb else "",
            state_cache_bytes=settings.state_cache_gb * GiB,
        )

    def ask(
        self,
        document_ids: list[int],
        question: str,
        *,
        conversation_id: int | None = None,
        thinking: bool | None = None,
        max_tokens: int | None = None,
        on_event: EventSink | None = None,
    ) -> MessageRow:
        emit = on_event or (lambda _e: None)
        question = question.strip()
        if not question:
            raise FolioError("the question is empty")
        if conversation_id is not None:
            conversation = self.conversations.get(conversation_id)
            document_ids = conversation.document_ids
        if not document_ids:
            raise FolioError("no document selected")
        for doc_id in document_ids:
            self.ctx.library.get(doc_id)
        think = self.ctx.settings.thinking if thinking is None else thinking
        history = self._history(conversation_id) if conversation_id is not None else []
        instructions = read_text("prompts", "answer.md")
        answer_tokens = max_tokens or self.ctx.settings.max_answer_tokens
        if isinstance(self.engine, RemoteEngine):
            plan = self._plan_remote(self.engine, instructions, document_ids, history, question, emit)
        else:
            plan = self._plan_local(instructions, document_ids, history, question, think, answer_tokens, emit)
        # The conversation, the question, the answer row (marked incomplete from the start, so a crash
        # leaves an honest trace) and the audit entry are stored together or not at all.
        with self.ctx.db.atomic():
            if conversation_id is None:
                conversation_id = self.conversations.create(document_ids, _title_from(question))
            user_id = self.conversations.add_message(conversation_id, "user", question)
            answer_id = self.conversations.add_message(
                conversation_id, "assistant", "", status="incomplete", model=plan.label, model_sha256=plan.sha256
            )
            # -- audit hook: every question is on record before the model sees it --
            record_question(
                self.ctx,
                document_ids=document_ids,
                model_label=plan.label,
                model_sha256=plan.sha256,
                conversation_id=conversation_id,
                message_id=user_id,
                question=question,
                thinking=think,
            )
        AuditLog.for_context(self.ctx).sync_head()
        emit(ChatStarted(conversation_id, user_id, answer_id, plan.label, plan.demo))
        splitter = ThinkingSplitter(in_thinking=plan.starts_in_thinking)
        sampling = Sampling.recommended(thinking=think, max_tokens=answer_tokens)
        # Every document read (an e-mail's attachments too), so a purge finds the snapshots holding it.
        tags = tuple(self.ctx.library.get(d).sha256 for d in _with_attachments(self.ctx, document_ids))
        request = GenerateRequest(
            plan.parts, sampling, plan.prefix_parts, messages=plan.messages, thinking=think, prefix_tags=tags
        )
        stats: GenerationStats | None = None
        try:
            for event in self._events(plan, request):
                if isinstance(event, Loading):
                    emit(EngineStatus(f"loading {plan.label}"))
                elif isinstance(event, Loaded):
                    emit(EngineStatus(f"model ready in {event.seconds:.1f} s (context {event.n_ctx:,} tokens)"))
                elif isinstance(event, PrefixReused):
                    emit(
                        EngineStatus(
                            f"documents already read: {event.tokens:,} tokens reused "
                            f"({_SOURCES.get(event.source, event.source)}, {event.seconds:.2f} s)"
                        )
                    )
                elif isinstance(event, PrefillProgress):
                    emit(PrefillUpdate(event.done, event.total, event.tokens_per_s, event.eta_s))
                elif isinstance(event, TokenText):
                    for channel, text in splitter.feed(event.text):
                        emit(AnswerDelta(channel, text))
                elif isinstance(event, Finished):
                    stats = event.stats
        except (EngineError, FolioError) as exc:
            self.conversations.update_message(
                answer_id, text=splitter.answer_text, thinking=splitter.thinking_text, status="error", error=str(exc)
            )
            raise
        except BaseException:
            self.conversations.update_message(
                answer_id, text=splitter.answer_text, thinking=splitter.thinking_text, status="cancelled"
            )
            raise
        for channel, text in splitter.finish():
            emit(AnswerDelta(channel, text))
        assert stats is not None
        answer = splitter.answer_text
        emit(EngineStatus("checking every sentence against the documents"))
        grounded = ground_answer(answer, self.sources(document_ids))
        # The answer, its citations and each claim's verdict are stored in one transaction.
        self.conversations.update_message(
            answer_id,
            claims=[v.to_dict() for v in grounded.claims],
            text=answer,
            thinking=splitter.thinking_text,
            citations=[c.to_dict() for c in grounded.citations],
            prompt_tokens=stats.prompt_tokens,
            completion_tokens=stats.completion_tokens,
            cached_tokens=stats.cached_tokens,
            prefill_ms=round(stats.prefill_ms, 1),
            generate_ms=round(stats.generate_ms, 1),
            drafted_tokens=stats.drafted_tokens,
            accepted_tokens=stats.accepted_tokens,
            status="cancelled" if stats.stop_reason == "cancelled" else "complete",
        )
        done = self.conversations.message(answer_id)
        emit(AnswerDone(done, stats))
        return done

    def sources(self, document_ids: list[int]) -> Sources:
        key = tuple((d, self.ctx.library.get(d).sha256) for d in document_ids)
        if key not in self._sources:
            while len(self._sources) >= SOURCES_KEPT:
                self._sources.pop(next(iter(self._sources)))
            self._sources[key] = Sources.load(self.ctx, document_ids)
        return self._sources[key]

    def _events(self, plan: _Plan, request: GenerateRequest) -> Iterator[EngineEvent]:
        if isinstance(self.engine, RemoteEngine):
            return self.engine.generate(None, request)
        assert plan.config is not None
        return self.engine.generate(plan.config, request)

    def _plan_local(
        self,
        instructions: str,
        document_ids: list[int],
        history: list[Message],
        question: str,
        think: bool,
        answer_tokens: int,
        emit: EventSink,
    ) -> _Plan:
        model = self.ctx.models.active(self.ctx.settings)
        template = template_for(model.architecture, model.facts.chat_template)
        vision = model.mmproj_path is not None
        if not vision:
            self._say_images_left_out(document_ids, "the model has no vision projector", emit)
        documents = prompt_documents(self.ctx, document_ids, images=vision)
        messages = build_messages(instructions, documents, history, question)
        rendered = render_prompt(template, messages, enable_thinking=think)
        count = self.count_tokens(model, rendered)
        return _Plan(
            config=self.engine_config(model, count, answer_tokens, images=has_images(rendered.parts)),
            parts=rendered.parts,
            prefix_parts=rendered.prefix_parts,
            messages=(),  # the local engine takes the rendered parts
            starts_in_thinking=think and template.thinks and opens_thinking(rendered.parts),
            label=model.label,
            sha256=model.sha256,
            demo=model.is_starter,
        )

    def _plan_remote(
        self,
        engine: RemoteEngine,
        instructions: str,
        document_ids: list[int],
        history: list[Message],
        question: str,
        emit: EventSink,
    ) -> _Plan:
        for _event in engine.load():  # reach the server before anything is stored
            pass
        emit(EngineStatus(f"connected to {engine.label}"))
        if not self.ctx.settings.server_images:
            self._say_images_left_out(document_ids, "server_images is off", emit)
        documents = prompt_documents(self.ctx, document_ids, images=self.ctx.settings.server_images)
        messages = build_messages(instructions, documents, history, question)
        # The server applies the chat template itself and streams thinking apart from the answer.
        return _Plan(None, [], 0, tuple(messages), False, engine.label, None, False)

    def _say_images_left_out(self, document_ids: list[int], why: str, emit: EventSink) -> None:
        """Never leave pages out silently: scanned pages and keyframes the model will not see."""
        count = sum(1 for doc_id in document_ids for seg in self.ctx.library.segments(doc_id) if seg.image_blob)
        if count:
            emit(EngineStatus(f"{count} page image(s) left out ({why}); only their text, if any, is read"))

    def _history(self, conversation_id: int) -> list[Message]:
        history: list[Message] = []
        for m in self.conversations.messages(conversation_id):
            if m.role == "user":
                history.append(Message("user", m.text))
            elif m.role == "assistant" and m.status == "complete" and m.text:
                history.append(Message("assistant", m.text))
        # Drop a question whose answer never completed, so turns keep alternating.
        cleaned: list[Message] = []
        for turn in history:
            if cleaned and cleaned[-1].role == turn.role == "user":
                cleaned[-1] = turn
            else:
                cleaned.append(turn)
        if cleaned and cleaned[-1].role == "user":
            cleaned.pop()
        return cleaned


@dataclass(frozen=True)
class _Plan:
    """What one question needs from the engine, local or remote."""

    config: EngineConfig | None  # None for a model server
    parts: list[PromptPart]
    prefix_parts: int
    messages: tuple[Message, ...]
    starts_in_thinking: bool
    label: str
    sha256: str | None
    demo: bool


SOURCES_KEPT = 4  # document selections whose passages stay in memory for grounding
_SOURCES = {"context": "still in the model's context", "memory": "snapshot in memory", "disk": "snapshot on disk"}


def _title_from(question: str) -> str:
    line = " ".join(question.split())
    return line if len(line) <= 60 else line[:57].rstrip() + "..."
