"""Ask a question about documents: build the prompt, run the engine, check citations, store it all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.citations.grounding import ground_answer
from app.context import AppContext
from app.engine.documents import BuildMessages, Documents
from app.engine.progress import Progress
from app.engine.session import CancelToken, Session
from app.errors import FolioError
from app.store.audit import record_question
from app.store.conversations import Conversations, MessageRow
from assets import read_text
from inference.chat_format import Message
from inference.engine_api import Engine, Sampling
from inference.errors import EngineError
from inference.events import GenerationStats
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
        self._token = CancelToken()  # the question under way's

    def matter_for(self, document_ids: list[int]) -> int:
        """The one matter holding all these documents (the current one when it does); a question across
        matters is refused in one line."""
        from app.store.matters import Matters

        return Matters(self.ctx.db).one_for(document_ids, prefer=self.ctx.matter_id)

    def cancel(self) -> None:
        """Stop the question under way (from any thread); the answer so far is kept, marked cancelled."""
        self._token.cancel()

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
        regenerate: bool = False,
        cancel: CancelToken | None = None,
    ) -> MessageRow:
        """Ask a question (a new conversation, or a follow-up in `conversation_id`) and store it with
        its grounded answer. `regenerate`: ask the conversation's last question again; the old
        exchange is removed only in the transaction that stores the new, complete answer, so an
        answer that cannot start or does not finish leaves it where it was."""
        emit = on_event or (lambda _e: None)
        token = self._token = cancel or CancelToken()
        replaced: int | None = None
        if regenerate:
            replaced, question = self.asked_again(conversation_id)
        question = question.strip()
        if not question:
            raise FolioError("the question is empty")
        matter_id: int | None = None
        if conversation_id is not None:
            conversation = self.conversations.get(conversation_id)
            document_ids = conversation.document_ids
            matter_id = conversation.matter_id
        if not document_ids:
            raise FolioError("no document selected")
        if matter_id is None:  # a question takes documents of one matter: refused here, before the engine
            matter_id = self.matter_for(document_ids)
        think = self.ctx.settings.thinking if thinking is None else thinking
        history = self.history(conversation_id, before=replaced) if conversation_id is not None else []
        answer_tokens = max_tokens or self.ctx.settings.max_answer_tokens
        build = question_messages(history, question)
        with self.session.turn():  # counting the prompt and answering it: one hold of the engine
            prepared = self.session.prepare(
                self.ctx,
                document_ids,
                build,
                think=think,
                answer_tokens=answer_tokens,
                reuse_order=conversation_id is None,
            )
            if prepared.config is None:
                emit(Progress(f"connected to {prepared.label}"))
            left_out = self.session.images_left_out_line(prepared.documents)
            if left_out:
                emit(Progress(left_out))
            exchange = self.begin(
                prepared.documents,
                question,
                conversation_id=conversation_id,
                label=prepared.label,
                sha256=prepared.sha256,
                think=think,
                matter_id=matter_id,
            )
            emit(
                ChatStarted(
                    exchange.conversation_id,
                    exchange.user_id,
                    exchange.answer_id,
                    prepared.label,
                    prepared.demo,
                    tuple(prepared.documents.ids),
                )
            )
            splitter = ThinkingSplitter(in_thinking=prepared.starts_in_thinking)

            def heard(text: str) -> None:
                for channel, piece in splitter.feed(text):
                    emit(AnswerDelta(channel, piece))

            request = prepared.request(
                sampling=Sampling.recommended(thinking=think, max_tokens=answer_tokens), thinking=think
            )
            try:
                result = self.session.run(prepared, request, cancel=token, on_progress=emit, on_text=heard)
            except (EngineError, FolioError) as exc:
                self._failed(exchange.answer_id, splitter, "error", str(exc))
                raise
            except Exception as exc:  # a bug or a database fault is an error with its reason, never "cancelled"
                self._failed(exchange.answer_id, splitter, "error", f"internal error: {type(exc).__name__}: {exc}")
                raise
            except BaseException:  # Ctrl+C in the CLI: a real cancel
                self._failed(exchange.answer_id, splitter, "cancelled")
                raise
        for channel, piece in splitter.finish():
            emit(AnswerDelta(channel, piece))
        emit(Progress("checking every sentence against the documents"))
        old = (replaced, exchange.user_id) if replaced is not None and not result.cancelled else None
        done = self.finish(
            exchange.answer_id, prepared.documents, splitter.answer_text, splitter.thinking_text, result.stats, old
        )
        emit(AnswerDone(done, result.stats))
        return done

    def _failed(self, answer_id: int, splitter: ThinkingSplitter, status: str, reason: str = "") -> None:
        """Keep what was written of an answer that stopped, marked with why."""
        fields: dict[str, Any] = {"text": splitter.answer_text, "thinking": splitter.thinking_text, "status": status}
        if reason:
            fields["error"] = reason
        self.conversations.update_message(answer_id, **fields)

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
        matter_id: int | None = None,
    ) -> Exchange:
        """Store the question and an empty answer row marked incomplete (so a crash leaves an honest
        trace) with its audit entry: together, in one transaction, before the model sees anything."""
        with self.ctx.db.atomic():
            if conversation_id is None:
                if matter_id is None:
                    matter_id = self.matter_for(documents.ids)
                conversation_id = self.conversations.create(documents.ids, title or _title_from(question), matter_id)
            elif matter_id is None:
                matter_id = self.conversations.get(conversation_id).matter_id
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
                matter_id=matter_id,
            )
        self.ctx.audit.sync_head()
        return Exchange(conversation_id, user_id, answer_id)

    def finish(
        self,
        answer_id: int,
        documents: Documents,
        answer: str,
        thinking: str,
        stats: GenerationStats,
        replaces: tuple[int, int] | None = None,
    ) -> MessageRow:
        """Ground the finished answer in the documents and store it with its citations, each claim's
        verdict and the engine's figures, in one transaction; `replaces` (the old question's id, the new
        question's id): the exchange this one was asked again for goes in the same transaction."""
        grounded = ground_answer(answer, self.session.sources(self.ctx, documents.rows))
        self.store_answer(
            answer_id,
            answer,
            thinking,
            [v.to_dict() for v in grounded.claims],
            [c.to_dict() for c in grounded.citations],
            stats,
            replaces,
        )
        return self.conversations.message(answer_id)

    def asked_again(self, conversation_id: int | None) -> tuple[int, str]:
        """Regenerate: the id of the conversation's last question and its text, to ask again."""
        if conversation_id is None:
            raise FolioError("there is no conversation to ask again")
        return self.conversations.last_exchange(conversation_id)

    def store_answer(
        self,
        answer_id: int,
        answer: str,
        thinking: str,
        claims: list[dict[str, Any]],
        citations: list[dict[str, Any]],
        stats: GenerationStats,
        replaces: tuple[int, int] | None = None,
    ) -> None:
        """An answer's text, its checked claims and citations, and the engine's figures, in one update;
        `replaces` (the old question's id, the new question's id): the exchange asked again (Regenerate)
        goes in the same transaction."""
        with self.ctx.db.atomic():
            if replaces is not None:
                conversation_id = self.conversations.message(answer_id).conversation_id
                self.conversations.drop_exchange(conversation_id, *replaces)
            self.conversations.update_message(
                answer_id,
                claims=claims,
                text=answer,
                thinking=thinking,
                citations=citations,
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

    def history(self, conversation_id: int, *, before: int | None = None) -> list[Message]:
        """The conversation's turns so far (up to the message `before`, a question asked again)."""
        history: list[Message] = []
        for m in self.conversations.messages(conversation_id):
            if before is not None and m.id == before:
                break
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
