"""Selections of several documents reuse what was read: each document is tokenized apart and read in
chunks of its own, the state where each ends is kept on disk, and a question about {A, B} after A was
read reads only B and the question. Proven with logits: the state reached from A's snapshot equals a
cold read of the same selection, bit for bit, on the hybrid qwen35 (recurrent layers: no rollback,
so A's state must be taken exactly where A ends) and on the plain-transformer starter model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inference.chat_format import template_for
from inference.engine import LocalEngine
from inference.engine_api import GenerateRequest, Sampling
from inference.events import EngineEvent, PrefillProgress, StateSaved
from inference.gguf_facts import read_facts
from inference.prompt import PromptDocument, SourceBlock, build_messages, render_prompt
from tests.e2e.test_prefix_cache import _config, _fresh_logits

pytestmark = pytest.mark.e2e

SMALL_CHUNKS = {"n_batch": 64, "n_ubatch": 64}


def _document(index: int, title: str, what: str, pages: int) -> PromptDocument:
    blocks = [
        SourceBlock(f"[p. {p}]", f"Clause {p}. The {what} shall deliver item {p} within {p + 9} days of the order.")
        for p in range(1, pages + 1)
    ]
    return PromptDocument(index, title, blocks)


def _documents(*which: str) -> list[PromptDocument]:
    """The selection in this order, numbered as the prompt numbers them."""
    made = {"A": ("Supply agreement", "supplier", 9), "B": ("Service agreement", "contractor", 7)}
    return [_document(i, *made[name]) for i, name in enumerate(which, start=1)]


def _request(model: Path, documents: list[PromptDocument], question: str, **kw: object) -> GenerateRequest:
    facts = read_facts(model)
    template = template_for(facts.architecture, facts.chat_template)
    messages = build_messages("Answer from the documents.", documents, [], question)
    rendered = render_prompt(template, messages, enable_thinking=False)
    return GenerateRequest(rendered.parts, Sampling(max_tokens=2), rendered.prefix_parts, **kw)  # type: ignore[arg-type]


def _records(cache: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted(cache.glob("*.json"))]


@pytest.fixture(params=["hybrid qwen35", "transformer gemma3"])
def model(request: pytest.FixtureRequest) -> Path:
    return request.getfixturevalue("tiny_qwen35" if request.param == "hybrid qwen35" else "starter_gguf")


def test_a_question_on_a_and_b_after_a_reads_only_b_and_equals_a_cold_read(model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "states"
    only_a = _request(model, _documents("A"), "?", read_only=True)
    both = _request(model, _documents("A", "B"), "When is item 4 delivered?")

    first = LocalEngine(_config(model, cache, **SMALL_CHUNKS), cancelled=lambda: False)
    try:
        assert first.generate(only_a, lambda _e: None).stop_reason == "read"
        n_a = first.prompt_tokens(only_a.parts, only_a.prefix_parts)[1]
        keys, n_ab = first.prompt_tokens(both.parts, both.prefix_parts)
        # A's text and tokens do not depend on the document after it.
        assert keys[:n_a] == first.prompt_tokens(only_a.parts, only_a.prefix_parts)[0][:n_a]
    finally:
        first.close()
    assert n_ab > n_a + 100 and n_a % 64 != 0  # A ends inside a chunk of a plain reading: a stop of its own

    second = LocalEngine(_config(model, cache, **SMALL_CHUNKS), cancelled=lambda: False)  # nothing in memory
    try:
        events: list[EngineEvent] = []
        stats = second.generate(both, events.append)
        assert second.last_reuse == (n_a, "documents")
        assert stats.cached_tokens == n_a
        read = [e for e in events if isinstance(e, PrefillProgress)][-1]
        assert read.done == read.total == len(keys) - n_a  # only B and the question were decoded
        saved = [e for e in events if isinstance(e, StateSaved)]
        assert [(e.tokens, e.documents, e.complete) for e in saved] == [(n_ab, 2, True)]
        warm = second.prompt_logits(both)  # the question again, on the state reached from A's
    finally:
        second.close()
    assert sorted(int(r["tokens"]) for r in _records(cache)) == [n_a, n_ab]  # type: ignore[call-overload]

    cold = _fresh_logits(model, both, **SMALL_CHUNKS)
    assert np.array_equal(warm, cold)

    reopened = LocalEngine(_config(model, cache, **SMALL_CHUNKS), cancelled=lambda: False)
    try:
        assert np.array_equal(reopened.prompt_logits(both), cold)
        assert reopened.last_reuse == (n_ab, "disk")  # {A, B} itself is kept now
    finally:
        reopened.close()


def test_a_cold_read_of_several_documents_keeps_the_state_where_each_ends(model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "states"
    tags = {"prefix_tags": ("sha-a", "sha-b"), "document_tags": (("sha-a",), ("sha-b",))}
    both = _request(model, _documents("A", "B"), "?", read_only=True, **tags)
    only_a = _request(model, _documents("A"), "When is item 2 delivered?")

    engine = LocalEngine(_config(model, cache, **SMALL_CHUNKS), cancelled=lambda: False)
    try:
        events: list[EngineEvent] = []
        assert engine.generate(both, events.append).stop_reason == "read"
        n_a = engine.prompt_tokens(only_a.parts, only_a.prefix_parts)[1]
        n_ab = engine.prompt_tokens(both.parts, both.prefix_parts)[1]
    finally:
        engine.close()
    saved = [(e.tokens, e.documents) for e in events if isinstance(e, StateSaved)]
    assert saved == [(n_a, 1), (n_ab, 2)]
    records = sorted(_records(cache), key=lambda r: int(r["tokens"]))  # type: ignore[call-overload]
    assert [int(r["tokens"]) for r in records] == [n_a, n_ab]  # type: ignore[call-overload]
    assert not any(r.get("checkpoint") for r in records)
    # A purge of B deletes what holds B, not the state of A alone.
    assert [r["tags"] for r in records] == [["sha-a"], ["sha-a", "sha-b"]]

    # A question about A alone starts from the state kept inside the reading of {A, B}.
    alone = LocalEngine(_config(model, cache, **SMALL_CHUNKS), cancelled=lambda: False)
    try:
        got = alone.prompt_logits(only_a)
        assert alone.last_reuse == (n_a, "disk")
    finally:
        alone.close()
    assert np.array_equal(got, _fresh_logits(model, only_a, **SMALL_CHUNKS))


def test_a_new_conversation_puts_the_document_read_before_first(starter_home: Path, tmp_path: Path) -> None:
    from app.chat import ChatEvent, ChatService, ChatStarted
    from app.context import open_app
    from app.engine.session import Session
    from app.reading import read_document
    from app.store.conversations import Conversations
    from tests.e2e.test_read_cli import _long_contract

    ctx = open_app()
    try:
        first_added = ctx.library.add(_long_contract(tmp_path / "supply.txt", 12)).document
        read_before = ctx.library.add(_long_contract(tmp_path / "later.txt", 30)).document
        session = Session.for_context(ctx)
        read = read_document(ctx, session, read_before.id, lambda _p: None)
        session.close()  # a new engine process: what was read comes from disk

        events: list[ChatEvent] = []
        answer = ChatService(ctx, session).ask(
            [first_added.id, read_before.id], "When is order 7 delivered?", on_event=events.append
        )
        order = [read_before.id, first_added.id]
        assert Conversations(ctx.db).get(answer.conversation_id).document_ids == order
        assert next(e for e in events if isinstance(e, ChatStarted)).document_ids == tuple(order)
        assert answer.cached_tokens == read.prompt_tokens  # the document read before was not read again

        follow_up = ChatService(ctx, session).ask([], "And order 9?", conversation_id=answer.conversation_id)
        assert answer.prompt_tokens is not None and follow_up.cached_tokens is not None
        assert follow_up.cached_tokens > answer.prompt_tokens - 60  # same order, same documents' state
        session.close()
    finally:
        ctx.close()


def test_a_read_with_fewer_threads_keeps_the_state_a_question_continues_from(model: Path, tmp_path: Path) -> None:
    """Read ahead at most read_ahead_threads: set on the live context for the read only."""
    cache = tmp_path / "states"
    question = _request(model, _documents("A"), "When is item 4 delivered?")
    read = _request(model, _documents("A"), "?", read_only=True, n_threads=1)
    engine = LocalEngine(_config(model, cache, **SMALL_CHUNKS), cancelled=lambda: False)  # 2 threads
    try:
        assert engine.ctx is not None and engine.ctx.n_threads == 2
        seen: list[int] = []
        engine.generate(read, lambda _e: seen.append(engine.ctx.n_threads if engine.ctx else 0))
        assert seen and set(seen) == {1}  # the read ran on one thread...
        assert engine.ctx.n_threads == 2  # ...and the context is back to its own for the question
        engine.forget()  # the question starts from the state on disk
        got = engine.prompt_logits(question)
        assert engine.last_reuse[1] == "disk"
    finally:
        engine.close()
    assert np.array_equal(got, _fresh_logits(model, question, **SMALL_CHUNKS))
