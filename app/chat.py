"""Ask a question about documents: build the prompt, run the engine, check citations, store it all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.citations.grounding import ground_answer
from app.context import AppContext
from app.engine.session import BuildMessages, Documents, Progress, Session, note_saved, progress_of
from app.errors import FolioError
from app.store.audit import record_question
from app.store.conversations import Conversations, MessageRow
from assets import read_text
from inference.chat_format import Message
from inference.engine_api import Engine, Sampling
from inference.errors import EngineError
from inference.events import Finished, GenerationStats, StateSaved, TokenText
from inference.prompt import PromptDocument, build_messages
from inference.thinking import ThinkingSplitter


@dataclass(frozen=True)
class ChatStarted:
    conversation_id: int
    user_message_id: int
    assistant_message_id: int
    model_label: str
    demo_model: bool
    # The documents in the order the conversation keeps them (a new one's are put in reading order:
    # app.engine.session.reading_order); D1, D2 in its citations count in this order.
    document_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class Exchange:
    """A question and its answer row, as stored."""

    conversation_id: int
    user_id: int
    answer_id: int


@dataclass(frozen=True)
class AnswerDelta:
    channel: str  # 'answer' | 'thinking'
    text: str


@dataclass(frozen=True)
class AnswerDone:
    message: MessageRow
    stats: GenerationStats | None = None  # timings that are not stored, such as time to first token


ChatEvent = ChatStarted | Progress | AnswerDelta | AnswerDone
EventSink = Callable[[ChatEvent], None]


def question_messages(history: list[Message], question: str) -> BuildMessages:
    """The conversation of a question: the answering instructions and the documents first (the
    prefix the engine keeps), then the history and the question."""
    instructions = read_text("prompts", "answer.md")

    def build(documents: list[PromptDocument]) -> list[Message]:
        return build_messages(instructions, documents, history, question)

    return build


class ChatService:
    """Runs one question at a time on its session's engine."""

    def __init__(self, ctx: AppContext, session: Session | None = None) -> None:
        self.ctx = ctx
        self.session = session or Session.for_context(ctx)
        self.conversations = Conversations(ctx.db)

    def cancel(self) -> None:
        self.session.cancel()

    def close(self) -> None:
        self.session.close()

    @property
    def engine(self) -> Engine:
        return self.session.engine

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
        think = self.ctx.settings.thinking if thinking is None else thinking
        history = self._history(conversation_id) if conversation_id is not None else []
        answer_tokens = max_tokens or self.ctx.settings.max_answer_tokens
        build = question_messages(history, question)
        plan = self.session.prepare(
            self.ctx, document_ids, build, think=think, answer_tokens=answer_tokens, reuse_order=conversation_id is None
        )
        if plan.config is None:
            emit(Progress(f"connected to {plan.label}"))
        left_out = self.session.images_left_out_line(plan.documents)
        if left_out:
            emit(Progress(left_out))
        exchange = self.begin(
            plan.documents, question, conversation_id=conversation_id, label=plan.label, sha256=plan.sha256, think=think
        )
        emit(
            ChatStarted(
                exchange.conversation_id,
                exchange.user_id,
                exchange.answer_id,
                plan.label,
                plan.demo,
                tuple(plan.documents.ids),
            )
        )
        answer_id = exchange.answer_id
        splitter = ThinkingSplitter(in_thinking=plan.starts_in_thinking)
        sampling = Sampling.recommended(thinking=think, max_tokens=answer_tokens)
        request = plan.request(sampling=sampling, thinking=think)
        stats: GenerationStats | None = None
        try:
            for event in self.session.generate(plan.config, request):
                if isinstance(event, TokenText):
                    for channel, text in splitter.feed(event.text):
                        emit(AnswerDelta(channel, text))
                elif isinstance(event, Finished):
                    stats = event.stats
                elif isinstance(event, StateSaved):
                    note_saved(self.ctx, plan, event)
                else:
                    progress = progress_of(event, plan.label)
                    if progress is not None:
                        emit(progress)
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
        emit(Progress("checking every sentence against the documents"))
        done = self.finish(answer_id, plan.documents, splitter.answer_text, splitter.thinking_text, stats)
        emit(AnswerDone(done, stats))
        return done

    def begin(
        self,
        documents: Documents,
        question: str,
        *,
        conversation_id: int | None,
        label: str,
        sha256: str | None,
        think: bool,
        title: str | None = None,
    ) -> Exchange:
        """Store the question and an empty answer row marked incomplete (so a crash leaves an honest
        trace) with its audit entry: together, in one transaction, before the model sees anything."""
        with self.ctx.db.atomic():
            if conversation_id is None:
                conversation_id = self.conversations.create(documents.ids, title or _title_from(question))
            user_id = self.conversations.add_message(conversation_id, "user", question)
            answer_id = self.conversations.add_message(
                conversation_id, "assistant", "", status="incomplete", model=label, model_sha256=sha256
            )
            record_question(
                self.ctx.audit,
                self.ctx.settings,
                documents=[d.sha256 for d in documents.rows],  # as selected: an e-mail stands for its attachments
                model_label=label,
                model_sha256=sha256,
                conversation_id=conversation_id,
                message_id=user_id,
                question=question,
                thinking=think,
            )
        self.ctx.audit.sync_head()
        return Exchange(conversation_id, user_id, answer_id)

    def finish(
        self, answer_id: int, documents: Documents, answer: str, thinking: str, stats: GenerationStats
    ) -> MessageRow:
        """Ground the finished answer in the documents and store it with its citations, each claim's
        verdict and the engine's figures, in one transaction."""
        grounded = ground_answer(answer, self.session.sources(self.ctx, documents.rows))
        self.conversations.update_message(
            answer_id,
            claims=[v.to_dict() for v in grounded.claims],
            text=answer,
            thinking=thinking,
            citations=[c.to_dict() for c in grounded.citations],
            prompt_tokens=stats.prompt_tokens,
            completion_tokens=stats.completion_tokens,
            cached_tokens=stats.cached_tokens,
            prefill_ms=round(stats.prefill_ms, 1),
            generate_ms=round(stats.generate_ms, 1),
            drafted_tokens=stats.drafted_tokens,
            accepted_tokens=stats.accepted_tokens,
            draft_note=stats.draft_note,
            status="cancelled" if stats.stop_reason == "cancelled" else "complete",
        )
        return self.conversations.message(answer_id)

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


def _title_from(question: str) -> str:
    line = " ".join(question.split())
    return line if len(line) <= 60 else line[:57].rstrip() + "..."
