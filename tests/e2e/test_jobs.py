"""One request path, one stop per job, nothing lost on failure (issue 35), with the REAL starter model.

Every job (chat, extraction, comparison, reading) runs its requests through `Session.run` under its
own CancelToken: a stop ends that job's request under way and every later one, is never lost between
two of its requests, and never lands on another job's request. Regenerate replaces the old exchange
only when the new answer is stored whole; a failure is stored as an error with its reason, and only a
real stop as cancelled.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.chat import AnswerDelta, ChatService
from app.context import open_app
from app.engine.session import CancelToken, Session
from app.errors import Cancelled, FolioError
from app.extraction.runner import CellsStored, ExtractionService, RunFinished
from app.extraction.templates import Template
from inference.errors import EngineCrashed

pytestmark = pytest.mark.e2e
LONG = "Write a very long and detailed essay about every clause of this agreement, clause by clause."


def _statuses(ctx, conversation_id: int) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    from app.store.conversations import Conversations

    return [(m.role, m.status) for m in Conversations(ctx.db).messages(conversation_id)]


def test_a_stopped_answer_is_kept_cancelled_and_the_stop_ends_with_it(starter_home: Path, contract_pdf: Path) -> None:
    ctx = open_app()
    service = ChatService(ctx)
    try:
        doc = ctx.library.add(contract_pdf).document
        token = CancelToken()

        def on_event(event: object) -> None:
            if isinstance(event, AnswerDelta) and event.channel == "answer":
                token.cancel()  # from inside the answer: the request under way stops

        stopped = service.ask([doc.id], LONG, max_tokens=2000, on_event=on_event, cancel=token)
        assert stopped.status == "cancelled" and stopped.text and stopped.completion_tokens < 2000
        # The stop was that job's: the next question, a new job, is answered in full.
        again = service.ask([doc.id], "Which law governs?", conversation_id=stopped.conversation_id)
        assert again.status == "complete"
        # A token stopped before its job starts runs nothing at all.
        early = CancelToken()
        early.cancel()
        nothing = service.ask([doc.id], "Which law governs?", cancel=early)
        assert nothing.status == "cancelled" and nothing.text == "" and nothing.prompt_tokens == 0
    finally:
        service.close()
        ctx.close()


def test_a_stop_between_two_requests_of_an_extraction_is_not_lost(starter_home: Path, contract_pdf: Path) -> None:
    """The stop arrives while the run stores one field's cells, between two requests: the next request
    never starts, and running again resumes where it stopped."""
    fields = [{"name": n, "kind": "yes_no", "description": n} for n in ("Insurance", "Audit Rights", "Exclusivity")]
    template = Template.from_dict({"key": "three", "name": "Three clauses", "fields": fields})
    ctx = open_app()
    service = ExtractionService(ctx)
    try:
        doc = ctx.library.add(contract_pdf).document
        run_id = service.start_run(template, [doc.id])
        token = CancelToken()
        asked: list[int] = []
        session_run = service.session.run

        def counting_run(*args, **kwargs):  # type: ignore[no-untyped-def]
            asked.append(1)
            return session_run(*args, **kwargs)

        service.session.run = counting_run  # type: ignore[method-assign]

        def on_event(event: object) -> None:
            if isinstance(event, CellsStored):
                token.cancel()  # between the first field's request(s) and the next field's

        finished = service.run(run_id, on_event=on_event, cancel=token)
        assert finished == RunFinished(run_id, "cancelled", 1, 3)
        before = len(asked)
        again = service.run(run_id)  # a new job: its own stop, not the old one
        assert again.status == "complete" and again.cells_done == 3 and len(asked) > before
    finally:
        service.close()
        ctx.close()


def test_a_comparison_summary_stops_and_the_engine_serves_the_next_job(starter_home: Path, tmp_path: Path) -> None:
    from app.compare.redline import compare
    from app.compare.summary import summarise
    from app.compare.versions import version_from_library
    from tests.fixtures.contract_versions import edited_contract

    ctx = open_app()
    session = Session.for_context(ctx)
    try:
        old_path, new_path = edited_contract(tmp_path)
        old = ctx.library.add(old_path).document
        new = ctx.library.add(new_path).document
        redline = compare(version_from_library(ctx, old.id), version_from_library(ctx, new.id))
        token = CancelToken()
        timer = threading.Timer(3.0, token.cancel)
        timer.start()
        with pytest.raises(Cancelled):
            summarise(ctx, session, redline, old.id, new.id, cancel=token)
        timer.cancel()
        answer = ChatService(ctx, session).ask([old.id], "Which law governs?")
        assert answer.status == "complete"
    finally:
        session.close()
        ctx.close()


def test_regenerate_keeps_the_old_answer_until_the_new_one_is_stored(starter_home: Path, contract_pdf: Path) -> None:
    ctx = open_app()
    service = ChatService(ctx)
    try:
        doc = ctx.library.add(contract_pdf).document
        first = service.ask([doc.id], "Which law governs?")
        conversation = first.conversation_id
        assert _statuses(ctx, conversation) == [("user", "complete"), ("assistant", "complete")]

        # It cannot start (the configured model is gone): the old exchange is untouched.
        active = ctx.settings.active_model
        ctx.settings.active_model = "0" * 64
        with pytest.raises(FolioError, match="no longer registered"):
            service.ask([], "", conversation_id=conversation, regenerate=True)
        ctx.settings.active_model = active
        assert [m.id for m in service.conversations.messages(conversation)][-1] == first.id

        # It starts and fails (the engine dies mid-answer): stored as an error with its reason, the old
        # answer still there.
        def kill(event: object) -> None:
            if isinstance(event, AnswerDelta):
                service.session.engine.kill()  # type: ignore[attr-defined]

        with pytest.raises(EngineCrashed):
            service.ask([], "", conversation_id=conversation, regenerate=True, on_event=kill, max_tokens=2000)
        messages = service.conversations.messages(conversation)
        assert first.id in [m.id for m in messages]
        assert messages[-1].status == "error" and "stopped unexpectedly" in messages[-1].error

        # It finishes: the new exchange replaces the old one, in the transaction that stores it.
        done = service.ask([], "", conversation_id=conversation, regenerate=True)
        ids = [m.id for m in service.conversations.messages(conversation)]
        assert first.id not in ids and done.id == ids[-1] and done.status == "complete"
    finally:
        service.close()
        ctx.close()


def test_a_bug_while_answering_is_an_error_with_its_reason_not_cancelled(
    starter_home: Path, contract_pdf: Path
) -> None:
    ctx = open_app()
    service = ChatService(ctx)
    try:
        doc = ctx.library.add(contract_pdf).document

        def broken(event: object) -> None:
            if isinstance(event, AnswerDelta):
                raise RuntimeError("a broken listener")

        with pytest.raises(RuntimeError):
            service.ask([doc.id], "Which law governs?", on_event=broken)
        (conversation,) = service.conversations.all()
        answer = service.conversations.messages(conversation.id)[-1]
        assert answer.status == "error" and answer.error == "internal error: RuntimeError: a broken listener"
    finally:
        service.close()
        ctx.close()
