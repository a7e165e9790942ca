"""Speculative decoding is exact: answers written with drafts are the answers written without them.

Real llama.cpp on the starter model (Gemma 3 270M Q4_K_M, a plain transformer) and on tiny
random-weight qwen35 GGUFs (hybrid: Gated DeltaNet layers whose state cannot be rewound; one of them
carries an MTP block). Drafts come from prompt lookup and, for the MTP model, from its MTP block;
the adaptive pace is pinned to "always draft" so every answer exercises accepted and refused
drafts (the pace only decides speed; inference/speculative.py's Pace has its own tests). The random
tiny models never repeat themselves, so prompt lookup rarely has anything to offer there; an
"oracle" drafter then proposes the plain answer's own next tokens with every fourth one spoiled, so
long accepted runs, refusals in the middle of a batch and the bonus token after a full run all occur.

llama.cpp's CPU kernels round a batch of several tokens differently from one token
(inference/speculative.py, the module docstring): greedy answers must match token for token; for
sampled answers the tests either use F32 weights (the difference is in the last bits) or make
llama.cpp compute every checked row alone (n_ubatch=1), so the rows equal one-token decodes and
the sampler must draw the very same tokens."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from inference.chat_format import Message, template_for
from inference.engine import LocalEngine
from inference.engine_api import EngineConfig, GenerateRequest, Sampling
from inference.events import EngineEvent, GenerationStats, TokenText
from inference.gguf_facts import read_facts
from inference.llama_native import ContextParams, NativeContext, NativeModel
from inference.prompt import PromptDocument, SourceBlock, build_messages, render_prompt
from inference.drafters import PromptLookup
from inference.speculative import Pace
from tests.fixtures.tiny_qwen35 import TINY, write_qwen35_gguf

pytestmark = pytest.mark.e2e

CLAUSES = [
    "12.1 Termination for Convenience. Either party may terminate this Agreement at any time upon ninety "
    "(90) days prior written notice to the other party.",
    "12.2 Termination for Cause. Either party may terminate this Agreement immediately upon written notice "
    "if the other party materially breaches this Agreement and fails to cure such breach within thirty (30) "
    "days after receiving notice of the breach.",
    "12.3 Effect of Termination. Upon termination, the Customer shall pay all fees accrued up to the "
    "effective date of termination, and each party shall return the Confidential Information of the other.",
]


@pytest.fixture
def always_draft(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every available draft is checked, whatever it costs (the pace decides speed, not tokens)."""
    monkeypatch.setattr(Pace, "length", lambda self, kind, available: min(available, self.max_draft))


@pytest.fixture(scope="module")
def tiny_mtp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_qwen35_gguf(tmp_path_factory.mktemp("mtp") / "tiny-mtp.gguf", dataclasses.replace(TINY, mtp_layers=1))


@pytest.fixture(params=["gemma3", "qwen35", "qwen35+mtp"])
def model(request: pytest.FixtureRequest) -> Path:
    name = {"gemma3": "starter_gguf", "qwen35": "tiny_qwen35", "qwen35+mtp": "tiny_mtp"}[request.param]
    path: Path = request.getfixturevalue(name)
    return path


def _request(model: Path, question: str, *, thinking: bool = False, **sampling: float) -> GenerateRequest:
    facts = read_facts(model)
    template = template_for(facts.architecture, facts.chat_template)
    doc = PromptDocument(1, "Master Services Agreement", [SourceBlock(f"[p. {i}]", c) for i, c in enumerate(CLAUSES, 1)])
    messages = build_messages("Answer from the documents. Quote exactly.", [doc], [], question)
    rendered = render_prompt(template, messages, enable_thinking=thinking)
    settings = {"temperature": 0.0, "max_tokens": 96, **sampling}
    return GenerateRequest(rendered.parts, Sampling(**settings), rendered.prefix_parts)  # type: ignore[arg-type]


def _config(model: Path, draft_tokens: int, **kw: int) -> EngineConfig:
    return EngineConfig(str(model), n_ctx=2048, n_threads=2, draft_tokens=draft_tokens, **kw)


def _answer(config: EngineConfig, request: GenerateRequest) -> tuple[str, GenerationStats]:
    engine = LocalEngine(config, cancelled=lambda: False)
    try:
        texts: list[str] = []

        def on(event: EngineEvent) -> None:
            if isinstance(event, TokenText):
                texts.append(event.text)

        stats = engine.generate(request, on)
        return "".join(texts), stats
    finally:
        engine.close()


def _plain_tokens(config: EngineConfig, request: GenerateRequest) -> tuple[int, list[int]]:
    """(prompt length, answer token ids) of a run without drafts."""
    engine = LocalEngine(dataclasses.replace(config, draft_tokens=0), cancelled=lambda: False)
    try:
        n_prompt = len(engine.prompt_tokens(request.parts, request.prefix_parts)[0])
        engine.generate(request, lambda _e: None)
        return n_prompt, list(engine._held[n_prompt:])
    finally:
        engine.close()


def _oracle(monkeypatch: pytest.MonkeyPatch, config: EngineConfig, request: GenerateRequest) -> None:
    """Drafts = the plain answer's next tokens, every fourth one spoiled (replaced by another token)."""
    n_prompt, answer = _plain_tokens(config, request)

    def propose(self: PromptLookup, pending: int, limit: int) -> tuple[list[int], int, int]:
        at = len(self._tokens) - n_prompt + 1  # `pending` is answer[at - 1]
        draft = answer[at : at + limit]
        spoiled = [t if (at + i) % 4 else (t + 1) % 200 for i, t in enumerate(draft)]
        return spoiled, 4, -1

    monkeypatch.setattr(PromptLookup, "propose", propose)


def _same_answer(config: EngineConfig, request: GenerateRequest) -> GenerationStats:
    plain_text, plain = _answer(dataclasses.replace(config, draft_tokens=0), request)
    text, stats = _answer(config, request)
    assert text == plain_text
    assert (stats.completion_tokens, stats.stop_reason) == (plain.completion_tokens, plain.stop_reason)
    assert plain.drafted_tokens == 0
    return stats


@pytest.mark.usefixtures("always_draft")
@pytest.mark.parametrize("thinking", [False, True], ids=["thinking-off", "thinking-on"])
@pytest.mark.parametrize("drafter", ["lookup", "oracle"])
def test_greedy_answers_are_the_same_with_drafts(
    model: Path, thinking: bool, drafter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _request(model, "Quote clause 12.2 word for word.", thinking=thinking)
    config = _config(model, 8)
    if drafter == "oracle":
        _oracle(monkeypatch, config, request)
    stats = _same_answer(config, request)
    if drafter == "oracle" or "gemma" in model.name:
        assert stats.drafted_tokens > stats.accepted_tokens > 0  # drafts kept, and drafts taken back


@pytest.mark.usefixtures("always_draft")
@pytest.mark.parametrize("drafter", ["lookup", "oracle"])
def test_sampled_answers_are_the_same_with_drafts(model: Path, drafter: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Full sampler chain (top-k, presence penalty, top-p, min-p, temperature, seeded draw)."""
    request = _request(model, "Quote clause 12.3 word for word.", temperature=0.7, top_p=0.8, min_p=0.05)
    # Gemma's quantized matrices round a batch differently from one token: computing each checked
    # row alone makes them equal one-token decodes, so the draws must be the very same.
    alone = {"n_batch": 512, "n_ubatch": 1} if "gemma" in model.name else {}
    config = _config(model, 8, **alone)
    if drafter == "oracle":
        _oracle(monkeypatch, config, request)
    stats = _same_answer(config, request)
    if drafter == "oracle" or "gemma" in model.name:
        assert stats.drafted_tokens > stats.accepted_tokens > 0


@pytest.mark.usefixtures("always_draft")
def test_grammar_answers_are_the_same_and_refused_drafts_are_not_checked(model: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"clause": {"type": "string"}, "quote": {"type": "string"}, "page": {"type": "integer"}},
        "required": ["clause", "quote", "page"],
    }
    request = dataclasses.replace(
        _request(model, "Which clause allows termination for cause? Answer in JSON with a verbatim quote."),
        json_schema=json.dumps(schema),
    )
    stats = _same_answer(_config(model, 8), request)
    assert stats.drafted_tokens > 0


@pytest.mark.parametrize("rejected_at", [1, 3, 7])
def test_rollback_of_recurrent_state_equals_a_plain_run(tiny_qwen35: Path, rejected_at: int) -> None:
    """Evaluate t0 + 8 drafts in one batch, refuse the drafts from `rejected_at` on, take them back,
    then evaluate the corrected token: the logits equal a run that never saw the refused drafts and
    evaluated the same micro-batches (t0 and the accepted drafts in one batch). Bit for bit."""
    model = NativeModel(str(tiny_qwen35))
    try:
        prompt = model.tokenize("The Supplier shall deliver the Goods within thirty days.", add_special=False, parse_special=False)
        batch = model.tokenize(" Either party may terminate this Agreement.", add_special=False, parse_special=False)[:9]
        correction = batch[-1] ^ 1
        kept = rejected_at  # t0 and the drafts before the refused one
        n = len(prompt)

        def context(n_rs_seq: int) -> NativeContext:
            params = ContextParams(n_ctx=512, n_batch=64, n_ubatch=64, n_threads=2, n_outputs=9, n_rs_seq=n_rs_seq)
            ctx = NativeContext(model, params)
            assert ctx.decode(prompt, 0, want_logits=True) == 0
            return ctx

        speculative = context(8)
        assert speculative.n_rs_seq == 8
        assert speculative.decode(batch, n, want_logits=True, all_logits=True) == 0
        assert speculative.trim(n + kept)  # the recurrent state goes back to its snapshot after token `kept`
        assert speculative.pos_max() == n + kept - 1
        assert speculative.decode([correction], n + kept, want_logits=True) == 0
        plain = context(0)  # no snapshots at all: rounding is the same (checked below), the history is not
        assert plain.decode(batch[:kept], n, want_logits=True, all_logits=True) == 0
        assert plain.decode([correction], n + kept, want_logits=True) == 0
        assert np.array_equal(speculative.logits(), plain.logits())
        assert bytes(speculative.get_state(partial=True)) == bytes(plain.get_state(partial=True))
        speculative.close()
        plain.close()
    finally:
        model.close()


@pytest.mark.usefixtures("always_draft")
def test_after_a_drafted_answer_the_context_is_exact_for_the_next_question(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`_held` stays true through refused drafts: the next question's logits (prefix reused from the
    context or the snapshot in memory) equal a fresh reading, bit for bit."""
    config = dataclasses.replace(_config(model, 8), state_cache_dir=str(tmp_path / "states"), state_cache_bytes=1 << 30)
    first = _request(model, "Quote clause 12.1 word for word.")
    second = _request(model, "Quote clause 12.2 word for word.")
    _oracle(monkeypatch, config, first)
    engine = LocalEngine(config, cancelled=lambda: False)
    try:
        stats = engine.generate(first, lambda _e: None)
        assert stats.drafted_tokens > stats.accepted_tokens > 0
        reused = engine.prompt_logits(second)
        assert engine.last_reuse[0] > 0
    finally:
        engine.close()
    fresh = LocalEngine(dataclasses.replace(config, state_cache_dir=""), cancelled=lambda: False)
    try:
        expected = fresh.prompt_logits(second)
    finally:
        fresh.close()
    assert np.array_equal(reused, expected)


@pytest.mark.usefixtures("always_draft")
@pytest.mark.parametrize("temperature", [0.0, 0.7], ids=["greedy", "sampled"])
def test_mtp_drafts_alone_give_the_same_answers(tiny_mtp: Path, monkeypatch: pytest.MonkeyPatch, temperature: float) -> None:
    """Prompt lookup off: every draft comes from the MTP block (random weights: mostly refused)."""
    monkeypatch.setattr(PromptLookup, "propose", lambda self, pending, limit: ([], 0, -1))
    request = _request(tiny_mtp, "Summarise the agreement.", temperature=temperature, max_tokens=48)
    engine = LocalEngine(_config(tiny_mtp, 4), cancelled=lambda: False)
    try:
        assert engine.model is not None and engine.model.n_layer_nextn == 1
        assert engine._drafting is not None and engine._drafting.mtp is not None
    finally:
        engine.close()
    stats = _same_answer(_config(tiny_mtp, 4), request)
    assert stats.drafted_tokens > 0  # all of them MTP drafts, checked by the model


def test_without_mtp_layers_only_prompt_lookup_drafts(tiny_qwen35: Path) -> None:
    engine = LocalEngine(_config(tiny_qwen35, 4), cancelled=lambda: False)
    try:
        assert engine._drafting is not None and engine._drafting.mtp is None
    finally:
        engine.close()
