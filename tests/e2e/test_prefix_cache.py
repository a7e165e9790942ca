"""Read once, ask many times — and prove with logits that a restored state is the state a fresh read makes.

Runs the real bundled llama.cpp on a hybrid qwen35 (recurrent state: no rollback) written by
tests/fixtures/tiny_qwen35.py and on the plain-transformer starter model (Gemma 3)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inference.chat_format import Message, template_for
from inference.engine import LocalEngine
from inference.engine_api import EngineConfig, GenerateRequest, Sampling
from inference.engine_process import EngineProcess
from inference.events import EngineEvent, Finished, PrefillProgress, PrefixReused
from inference.gguf_facts import read_facts
from inference.prompt import PromptDocument, SourceBlock, build_messages, render_prompt

pytestmark = pytest.mark.e2e


def _document(pages: int) -> PromptDocument:
    blocks = [
        SourceBlock(f"[p. {p}]", f"Clause {p}. The supplier shall deliver item {p} within {p + 9} days of the order.")
        for p in range(1, pages + 1)
    ]
    return PromptDocument(1, "Supply agreement", blocks)


class Asker:
    def __init__(self, model: Path, pages: int) -> None:
        facts = read_facts(model)
        self.template = template_for(facts.architecture, facts.chat_template)
        self.docs = [_document(pages)]

    def request(self, question: str, history: tuple[Message, ...] = ()) -> GenerateRequest:
        messages = build_messages("Answer from the documents.", self.docs, list(history), question)
        rendered = render_prompt(self.template, messages, enable_thinking=False)
        return GenerateRequest(rendered.parts, Sampling(max_tokens=3), rendered.prefix_parts)


def _config(model: Path, cache: Path | None, **kw: Any) -> EngineConfig:
    return EngineConfig(
        str(model),
        n_ctx=kw.pop("n_ctx", 4096),
        n_threads=2,
        state_cache_dir=str(cache) if cache else "",
        state_cache_bytes=1 << 30,
        **kw,
    )


def _fresh_logits(model: Path, request: GenerateRequest, **kw: Any) -> np.ndarray:
    engine = LocalEngine(_config(model, None, **kw), cancelled=lambda: False)
    try:
        return engine.prompt_logits(request)
    finally:
        engine.close()


@pytest.fixture(params=["hybrid qwen35", "transformer gemma3"])
def case(request: pytest.FixtureRequest) -> tuple[Path, int, str]:
    if request.param == "hybrid qwen35":
        return request.getfixturevalue("tiny_qwen35"), 12, "memory"
    return request.getfixturevalue("starter_gguf"), 5, "context"


def test_follow_up_new_conversation_and_reopen_equal_a_fresh_read(case: tuple[Path, int, str], tmp_path: Path) -> None:
    model, pages, in_memory_source = case
    ask = Asker(model, pages)
    cache = tmp_path / "states"
    first = ask.request("When is item 3 delivered?")
    follow_up = ask.request(
        "And item 5?", (Message("user", "When is item 3 delivered?"), Message("assistant", "Within 12 days."))
    )
    new_conversation = ask.request("Who delivers?")

    engine = LocalEngine(_config(model, cache), cancelled=lambda: False)
    try:
        events: list[EngineEvent] = []
        stats = engine.generate(first, events.append)
        n_prefix = engine.prompt_tokens(first.parts, first.prefix_parts)[1]
        assert stats.cached_tokens == 0 and stats.prompt_tokens > n_prefix > 120
        assert any(isinstance(e, PrefillProgress) for e in events)
        assert len(list(cache.glob("*.state"))) == 1  # the documents' snapshot was written

        got_follow_up = engine.prompt_logits(follow_up)
        assert engine.last_reuse == (n_prefix, in_memory_source)
        stats = engine.generate(new_conversation, events.append)
        assert stats.cached_tokens == n_prefix  # only the new question was evaluated
        assert next(e for e in reversed(events) if isinstance(e, PrefixReused)).source == in_memory_source
        got_new_conversation = engine.prompt_logits(new_conversation)
    finally:
        engine.close()

    reopened = LocalEngine(_config(model, cache), cancelled=lambda: False)  # a new context: nothing in memory
    try:
        got_reopened = reopened.prompt_logits(new_conversation)
        assert reopened.last_reuse == (n_prefix, "disk")
    finally:
        reopened.close()

    # Bit for bit: the restored state is the state a fresh read of the whole prompt produces.
    assert np.array_equal(got_follow_up, _fresh_logits(model, follow_up))
    expected = _fresh_logits(model, new_conversation)
    assert np.array_equal(got_new_conversation, expected)
    assert np.array_equal(got_reopened, expected)


def test_reopening_in_a_new_process_reads_the_snapshot(tiny_qwen35: Path, tmp_path: Path) -> None:
    ask = Asker(tiny_qwen35, 12)
    config = _config(tiny_qwen35, tmp_path / "states")
    first = EngineProcess()
    try:
        stats = next(
            e for e in first.generate(config, ask.request("When is item 3 delivered?")) if isinstance(e, Finished)
        )
        assert stats.stats.cached_tokens == 0
    finally:
        first.close()
    second = EngineProcess()
    try:
        question = ask.request("When is item 7 delivered?")
        events = list(second.generate(config, question))
        reused = next(e for e in events if isinstance(e, PrefixReused))
        done = next(e for e in events if isinstance(e, Finished)).stats
        assert reused.source == "disk" and done.cached_tokens == reused.tokens > 200
        assert done.prompt_tokens - done.cached_tokens < 80  # just the question was read
        second.close()
        logits = second.prompt_logits(config, question)  # yet another process, again from disk
    finally:
        second.close()
    assert np.array_equal(logits, _fresh_logits(tiny_qwen35, question))


def _damage_flip(state: Path) -> None:
    data = bytearray(state.read_bytes())
    data[len(data) // 2] ^= 0xFF
    state.write_bytes(bytes(data))


def _damage_but_recommit(state: Path) -> None:
    """Garbage that passes the checksum: only llama.cpp's own checks can refuse it."""
    state.write_bytes(b"\0" * 64)
    record = state.with_suffix(".json")
    meta = json.loads(record.read_text())
    meta.update(bytes=64, crc32=zlib.crc32(b"\0" * 64))
    record.write_text(json.dumps(meta))


@pytest.mark.parametrize("damage", [_damage_flip, _damage_but_recommit], ids=["flipped-byte", "garbage-state"])
def test_damaged_snapshot_is_ignored_and_rebuilt(
    tiny_qwen35: Path, tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    ask = Asker(tiny_qwen35, 8)
    cache = tmp_path / "states"
    question = ask.request("Who delivers?")
    for attempt in range(3):
        engine = LocalEngine(_config(tiny_qwen35, cache), cancelled=lambda: False)
        try:
            logits = engine.prompt_logits(question)
            reuse = engine.last_reuse
        finally:
            engine.close()
        if attempt == 0:
            assert reuse == (0, "")
            damage(next(cache.glob("*.state")))
        elif attempt == 1:
            assert reuse == (0, "")  # not trusted: the documents were read again...
            assert len(list(cache.glob("*.state"))) == 1  # ...and a good snapshot written in its place
        else:
            assert reuse[1] == "disk"
        assert np.array_equal(logits, _fresh_logits(tiny_qwen35, question))


def test_cancelled_read_resumes_where_it_stopped(tiny_qwen35: Path) -> None:
    ask = Asker(tiny_qwen35, 10)
    question = ask.request("When is item 2 delivered?")
    small_chunks = {"n_batch": 64, "n_ubatch": 64}
    stop = {"now": False}
    engine = LocalEngine(_config(tiny_qwen35, None, **small_chunks), cancelled=lambda: stop["now"])
    try:

        def on_event(event: EngineEvent) -> None:
            if isinstance(event, PrefillProgress) and event.done >= 128:
                stop["now"] = True

        stats = engine.generate(question, on_event)
        assert stats.stop_reason == "cancelled" and stats.completion_tokens == 0
        stop["now"] = False
        logits = engine.prompt_logits(question)
        n_keep, source = engine.last_reuse
        assert source == "context" and n_keep >= 128 and n_keep % 64 == 0  # whole micro-batches kept
    finally:
        engine.close()
    assert np.array_equal(logits, _fresh_logits(tiny_qwen35, question, **small_chunks))
