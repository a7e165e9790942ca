"""Read-ahead: documents are read into the model in the background, one at a time, newest first; a
question preempts the read (it stops between chunks, keeping a checkpoint) and the read resumes after
the answer. One engine process for both, through the session. The real starter model."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from app.chat import ChatService
from app.context import open_app
from app.engine.session import Session
from app.reading import ReadAhead, ReadAheadStatus, reading_states
from tests.e2e.test_read_cli import LONG, _long_contract

pytestmark = pytest.mark.e2e


def _wait(condition: object, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_question_preempts_read_ahead_which_then_resumes(
    starter_home: Path, contract_pdf: Path, tmp_path: Path
) -> None:
    ctx = open_app()
    ctx.settings.read_ahead = True
    try:
        short = ctx.library.add(contract_pdf).document
        long = ctx.library.add(_long_contract(tmp_path / "supply.txt", LONG)).document
        assert [s.kind for s in reading_states(ctx, [short.sha256, long.sha256]) or []] == ["unread", "unread"]
        session = Session.for_context(ctx)
        reader = ReadAhead(ctx.reopen(), session)
        statuses: list[ReadAheadStatus] = []
        thread = threading.Thread(target=reader.run, args=(statuses.append,), kwargs={"idle_s": 0.2}, daemon=True)
        thread.start()
        try:
            # Newest first: the long document is being read...
            _wait(lambda: any(s.document_id == long.id and s.progress and s.progress.done > 0 for s in statuses))
            # ...when a question about the other one comes: it does not wait for that read to end.
            answer = ChatService(ctx, session).ask([short.id], "Which law governs this agreement?")
            assert answer.status == "complete"
            long_state = reading_states(ctx, [long.sha256])
            assert long_state is not None and long_state[0].kind == "partial"  # stopped, what it read kept
            assert any(s.document_id == long.id and s.state == "waiting" for s in statuses)

            # After the answer the read resumes from its checkpoint and finishes; the asked one is ready too.
            _wait(lambda: [s.kind for s in reading_states(ctx, [short.sha256, long.sha256]) or []] == ["ready"] * 2)
            resumed = [
                s for s in statuses if s.document_id == long.id and s.progress and "unfinished" in s.progress.text
            ]
            assert resumed, "the read of the long document continued from its checkpoint"
            _wait(lambda: statuses[-1].state == "idle")
            assert statuses[-1].words() == "all documents read"
        finally:
            reader.stop()
            thread.join(timeout=60)
        assert not thread.is_alive()

        # The first question about the document read ahead starts from what was read.
        answer = ChatService(ctx, session).ask([long.id], "When is order 7 delivered?")
        assert answer.prompt_tokens and answer.cached_tokens and answer.prompt_tokens - answer.cached_tokens < 60
        session.close()
    finally:
        ctx.close()


def test_read_ahead_stays_off_with_a_server_and_when_switched_off(starter_home: Path) -> None:
    ctx = open_app()
    try:
        reader = ReadAhead(ctx, Session.for_context(ctx))
        assert reader.why_off() == "off in Settings"  # as the test settings say
        ctx.settings.read_ahead = True
        assert reader.why_off() is None
        ctx.settings.read_ahead = False
        assert reader.why_off() == "off in Settings"
        ctx.settings.read_ahead = True
        ctx.settings.server_url = "http://127.0.0.1:9"
        assert reader.why_off() == "a model server answers; it keeps its own cache"
        assert reader.next_document() is None
    finally:
        ctx.close()
