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

from inference.chat_format import template_for
from inference.drafters import PromptLookup
from inference.engine import LocalEngine
from inference.engine_api import EngineConfig, GenerateRequest, Sampling
from inference.events import EngineEvent, GenerationStats, TokenText
from inference.gguf_facts import read_facts
from inference.llama_native import ContextParams, NativeContext, NativeModel, NativeSampler, lib
from inference.prompt import PromptDocument, SourceBlock, build_messages, render_prompt
from inference.speculative import Pace
from tests.fixtures.tiny_qwen35 import TINY, write_qwen35_gguf

pytestmark = pytest.mark.e2e

CLAUSES = [  # short: with n_ubatch=1 (below) Gemma reads the prompt one token at a time
    "12.2 Termination for Cause. Either party may terminate this Agreement immediately upon written notice "
    "if the other party materially breaches this Agreement and fails to cure such breach within thirty (30) "
    "days after receiving notice of the breach.",
    "12.3 Effect of Termination. Upon termination, the Customer shall pay all fees accrued up to the "
    "effective date of termination, and each party shall return the Confidential Information of the other.",
]

SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"clause": {"type": "string"}, "quote": {"type": "string"}, "page": {"type": "integer"}},
        "required": ["clause", "quote", "page"],
    }
)


@pytest.fixture
def always_draft(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every available draft is checked, whatever it costs (the pace decides speed, not tokens)."""
    monkeypatch.setattr(Pace, "length", lambda self, kind, available: min(available, self.max_draft))


@pytest.fixture(scope="module")
def tiny_mtp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_qwen35_gguf(tmp_path_factory.mktemp("mtp") / "tiny-mtp.gguf", dataclasses.replace(TINY, mtp_layers=1))


@dataclasses.dataclass(frozen=True)
class Case:
    model: Path
    drafter: str  # lookup | oracle | mtp

    @property
    def gemma(self) -> bool:
        return "gemma" in self.model.name


ALL_CASES = ["gemma3-lookup", "qwen35-oracle", "qwen35-mtp"]
REFUSING_CASES = ["gemma3-oracle", "qwen35-oracle", "qwen35-mtp"]  # drafts refused in every answer


@pytest.fixture
def case(request: pytest.FixtureRequest) -> Case:
    name, drafter = request.param.split("-")
    fixture = {"gemma3": "starter_gguf", "qwen35": "tiny_mtp" if drafter == "mtp" else "tiny_qwen35"}[name]
    return Case(request.getfixturevalue(fixture), drafter)


def _request(model: Path, question: str, *, thinking: bool = False, **sampling: float) -> GenerateRequest:
    facts = read_facts(model)
    template = template_for(facts.architecture, facts.chat_template)
    pages = [SourceBlock(f"[p. {i}]", clause) for i, clause in enumerate(CLAUSES, 7)]
    doc = PromptDocument(1, "Master Services Agreement", pages)
    messages = build_messages("Answer from the documents. Quote exactly.", [doc], [], question)
    rendered = render_prompt(template, messages, enable_thinking=thinking)
    settings = {"temperature": 0.0, "max_tokens": 48, **sampling}
    return GenerateRequest(rendered.parts, Sampling(**settings), rendered.prefix_parts)  # type: ignore[arg-type]


def _config(model: Path, draft_tokens: int, *, rows_alone: bool = False) -> EngineConfig:
    """rows_alone: llama.cpp computes every token of a batch on its own (n_ubatch=1), with the
    one-token kernels, so a checked row equals a one-token decode bit for bit."""
    n_ubatch = 1 if rows_alone else 512
    return EngineConfig(str(model), n_ctx=2048, n_threads=2, draft_tokens=draft_tokens, n_ubatch=n_ubatch)


def _case_config(case: Case) -> EngineConfig:
    return _config(case.model, 8, rows_alone=case.gemma)  # F32 qwen35: batches of 2+ round alike already


def _answer(config: EngineConfig, request: GenerateRequest) -> tuple[list[int], str, GenerationStats]:
    """(the answer's token ids as written, its text, stats)."""
    engine = LocalEngine(config, cancelled=lambda: False)
    written: list[int] = []
    piece = NativeModel.piece

    def spy(self: NativeModel, token: int) -> bytes:  # every written token is turned into text once
        written.append(token)
        return piece(self, token)

    try:
        texts: list[str] = []

        def on(event: EngineEvent) -> None:
            if isinstance(event, TokenText):
                texts.append(event.text)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(NativeModel, "piece", spy)
            stats = engine.generate(request, on)
        assert len(written) == stats.completion_tokens
        return written, "".join(texts), stats
    finally:
        engine.close()


# Plain (undrafted) answers by (config, request): an oracle's drafts and the comparison in
# _same_answer need the same plain answer; greedy or seeded, it is the same tokens every time, so it
# is computed once (a Gemma one, read a token at a time, takes several seconds).
_PLAIN: dict[str, tuple[list[int], str, GenerationStats]] = {}


def _plain_answer(config: EngineConfig, request: GenerateRequest) -> tuple[list[int], str, GenerationStats]:
    plain = dataclasses.replace(config, draft_tokens=0)
    key = repr((plain, request))
    if key not in _PLAIN:
        _PLAIN[key] = _answer(plain, request)
    return _PLAIN[key]


def _drafts_from(case: Case, monkeypatch: pytest.MonkeyPatch, config: EngineConfig, request: GenerateRequest) -> None:
    if case.drafter == "oracle":
        _oracle(monkeypatch, config, request)
    elif case.drafter == "mtp":  # prompt lookup off: every draft comes from the MTP block
        monkeypatch.setattr(PromptLookup, "propose", lambda self, pending, limit: ([], 0, -1))


def _oracle(monkeypatch: pytest.MonkeyPatch, config: EngineConfig, request: GenerateRequest) -> None:
    """Drafts = the plain answer's next tokens, every fourth one spoiled (replaced by another token)."""
    plain = dataclasses.replace(config, draft_tokens=0)
    n_prompt = len(_prompt_keys(plain, request))
    answer = _plain_answer(plain, request)[0]

    def propose(self: PromptLookup, pending: int, limit: int) -> tuple[list[int], int, int]:
        at = len(self._tokens) - n_prompt + 1  # `pending` is answer[at - 1]
        draft = answer[at : at + limit]
        spoiled = [t if (at + i) % 4 else (t + 1) % 200 for i, t in enumerate(draft)]
        return spoiled, 4, -1

    monkeypatch.setattr(PromptLookup, "propose", propose)


def _prompt_keys(config: EngineConfig, request: GenerateRequest) -> list[int]:
    engine = LocalEngine(config, cancelled=lambda: False)
    try:
        return engine.prompt_tokens(request.parts, request.prefix_parts)[0]
    finally:
        engine.close()


def _same_answer(case: Case, config: EngineConfig, request: GenerateRequest) -> GenerationStats:
    plain_tokens, plain_text, plain = _plain_answer(config, request)
    tokens, text, stats = _answer(config, request)
    assert tokens == plain_tokens and text == plain_text
    assert (stats.completion_tokens, stats.stop_reason) == (plain.completion_tokens, plain.stop_reason)
    assert plain.drafted_tokens == 0
    if case.drafter == "mtp":
        assert stats.drafted_tokens > 0  # the MTP block drafted (random weights: nearly all refused)
    elif case.drafter == "oracle":
        assert stats.drafted_tokens > stats.accepted_tokens > 0  # drafts kept, and drafts taken back
    else:
        assert stats.accepted_tokens > 0  # a quote: prompt lookup drafted it
    return stats


@pytest.mark.usefixtures("always_draft")
@pytest.mark.parametrize("case", ALL_CASES, indirect=True)
@pytest.mark.parametrize("thinking", [False, True], ids=["thinking-off", "thinking-on"])
def test_greedy_answers_are_the_same_with_drafts(case: Case, thinking: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if thinking and case.gemma:
        pytest.skip("Gemma 3's template has no thinking mode")
    request = _request(case.model, "Quote clause 12.2 word for word.", thinking=thinking)
    config = _case_config(case)
    _drafts_from(case, monkeypatch, config, request)
    _same_answer(case, config, request)


@pytest.mark.usefixtures("always_draft")
@pytest.mark.parametrize("case", REFUSING_CASES, indirect=True)
def test_sampled_answers_are_the_same_with_drafts(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """The full sampler chain (top-k, presence penalty, top-p, min-p, temperature, seeded draw)."""
    request = _request(case.model, "Quote clause 12.3 word for word.", temperature=0.7, top_p=0.8, min_p=0.05)
    config = _case_config(case)
    _drafts_from(case, monkeypatch, config, request)
    _same_answer(case, config, request)


@pytest.mark.usefixtures("always_draft")
@pytest.mark.parametrize("case", ALL_CASES, indirect=True)
def test_grammar_answers_are_the_same_with_drafts(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    request = dataclasses.replace(
        _request(case.model, "Which clause allows termination for cause? Answer in JSON with a verbatim quote."),
        json_schema=SCHEMA,
    )
    config = _case_config(case)
    _drafts_from(case, monkeypatch, config, request)
    _same_answer(case, config, request)


@pytest.mark.usefixtures("always_draft")
def test_at_full_batch_speed_greedy_answers_part_only_at_near_ties(starter_gguf: Path) -> None:
    """With Gemma's normal micro-batches, a checked row rounds differently from a one-token decode
    (up to about one logit here): the first token where a drafted answer differs from the plain one
    must be one the plain run nearly did not choose (its two best logits within 1.5)."""
    margins: list[float] = []
    original = NativeSampler.sample

    def sample(self: NativeSampler, ctx: NativeContext, row: int = -1) -> int:
        top = np.sort(ctx.logits(row))[-2:]
        margins.append(float(top[1] - top[0]))
        return original(self, ctx, row)

    for question in ("Quote clause 12.2 word for word.", "Quote clause 12.3 word for word."):
        request = _request(starter_gguf, question, max_tokens=96)
        config = _config(starter_gguf, 8)
        margins.clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(NativeSampler, "sample", sample)
            plain_tokens = _answer(dataclasses.replace(config, draft_tokens=0), request)[0]
        plain_margins = list(margins)
        tokens, _, stats = _answer(config, request)
        assert stats.accepted_tokens > 0
        differ = next((i for i, (a, b) in enumerate(zip(tokens, plain_tokens, strict=False)) if a != b), None)
        if differ is None:
            assert len(tokens) == len(plain_tokens)
        else:
            assert plain_margins[differ] < 1.5, (differ, plain_margins[differ])


@pytest.mark.parametrize("kept", [1, 2, 5, 8])
def test_rollback_of_recurrent_state_equals_a_plain_run(tiny_qwen35: Path, kept: int) -> None:
    """Evaluate t0 + 8 drafts in one batch, keep t0 and the drafts before the first refused one
    (`kept` tokens), take the rest back, then evaluate the corrected token: the logits equal a run
    that never saw the refused drafts and evaluated the same micro-batches (the kept tokens in one
    batch), bit for bit, with the same recurrent state. A run that evaluates one kept token alone
    uses llama.cpp's one-token routines, which round differently: equal to ~1e-5 there."""
    model = NativeModel(str(tiny_qwen35))
    try:
        text = "The Supplier shall deliver the Goods within thirty days. Either party may terminate this Agreement."
        tokens = model.tokenize(text, add_special=False, parse_special=False)
        prompt, batch = tokens[:-9], tokens[-9:]
        correction = batch[-1] ^ 1
        n = len(prompt)

        def context(n_rs_seq: int) -> NativeContext:
            params = ContextParams(n_ctx=512, n_batch=128, n_ubatch=128, n_threads=2, n_outputs=9, n_rs_seq=n_rs_seq)
            ctx = NativeContext(model, params)
            assert ctx.decode(prompt, 0, want_logits=True) == 0
            return ctx

        speculative = context(8)
        assert speculative.n_rs_seq == 8
        assert speculative.decode(batch, n, want_logits=True, all_logits=True) == 0
        assert speculative.trim(n + kept)  # the recurrent state goes back to its snapshot after token `kept`
        assert speculative.pos_max() == n + kept - 1
        assert speculative.decode([correction], n + kept, want_logits=True) == 0
        plain = context(0)  # no snapshots at all: the same rounding (checked here), but no refused drafts
        assert plain.decode(batch[:kept], n, want_logits=True, all_logits=True) == 0
        assert plain.decode([correction], n + kept, want_logits=True) == 0
        got, expected = speculative.logits(), plain.logits()
        if kept > 1:
            assert np.array_equal(got, expected)
            assert bytes(speculative.get_state(partial=True)) == bytes(plain.get_state(partial=True))
        else:
            assert np.allclose(got, expected, atol=1e-4) and got.argmax() == expected.argmax()
        speculative.close()
        plain.close()
    finally:
        model.close()


@pytest.mark.usefixtures("always_draft")
@pytest.mark.parametrize("case", REFUSING_CASES, indirect=True)
def test_after_a_drafted_answer_the_context_is_exact_for_the_next_question(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`_held` stays true through refused drafts: the next question's logits (prefix reused from the
    context or the snapshot in memory) equal a fresh reading, bit for bit."""
    states = {"state_cache_dir": str(tmp_path / "states"), "state_cache_bytes": 1 << 30}
    config = dataclasses.replace(_case_config(case), **states)  # type: ignore[arg-type]
    first = _request(case.model, "Quote clause 12.3 word for word.")
    second = _request(case.model, "Quote clause 12.2 word for word.")
    _drafts_from(case, monkeypatch, config, first)
    engine = LocalEngine(config, cancelled=lambda: False)
    try:
        stats = engine.generate(first, lambda _e: None)
        assert stats.drafted_tokens > stats.accepted_tokens
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


def test_mtp_drafter_only_when_the_gguf_has_mtp_layers(tiny_mtp: Path, tiny_qwen35: Path) -> None:
    with_mtp = LocalEngine(_config(tiny_mtp, 4), cancelled=lambda: False)
    try:
        assert with_mtp.model is not None and with_mtp.model.n_layer_nextn == 1
        assert with_mtp._drafting is not None and with_mtp._drafting.mtp is not None
    finally:
        with_mtp.close()
    without = LocalEngine(_config(tiny_qwen35, 4), cancelled=lambda: False)
    try:
        assert without._drafting is not None and without._drafting.mtp is None
    finally:
        without.close()
    off = LocalEngine(_config(tiny_mtp, 0), cancelled=lambda: False)
    try:
        assert off._drafting is None and off.model is not None and off.model.n_layer_nextn == 0  # not even loaded
    finally:
        off.close()


@pytest.mark.parametrize("case", ["gemma3-lookup", "qwen35-oracle"], indirect=True)
def test_greedy_grammar_shortcut_draws_what_the_whole_grammar_draws(case: Case) -> None:
    """Greedy under a grammar checks the best token alone first; the answer is the one the grammar
    applied to the whole vocabulary gives (that pass costs ~0.1 s per token at 150K tokens)."""
    request = dataclasses.replace(_request(case.model, "Who may terminate? Answer in JSON."), json_schema=SCHEMA)
    config = _config(case.model, 0)
    shortcut = _answer(config, request)[0]
    with pytest.MonkeyPatch.context() as patch:
        whole_chain = lambda self, ctx, row=-1: int(lib().llama_sampler_sample(self.ptr, ctx.ptr, row))  # noqa: E731
        patch.setattr(NativeSampler, "sample", whole_chain)
        whole = _answer(config, request)[0]
    assert shortcut == whole and len(whole) > 10


@pytest.mark.usefixtures("always_draft")
def test_drafted_answers_about_page_images_are_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scanned pages as images in the prompt (tiny qwen35 + its tiny vision projector)."""
    from inference.chat_format import ChatTemplate
    from tests.fixtures.tiny_vision import png_image, write_tiny_mmproj, write_tiny_qwen35

    pages = []
    for i, color in enumerate([(200, 30, 30), (30, 30, 200)], 1):
        page = tmp_path / f"page{i}.png"
        page.write_bytes(png_image(96, 64, color, stripe=i == 1))
        pages.append(SourceBlock(f"[p. {i}]", f"Text printed on page {i}.", image=str(page)))
    messages = build_messages("Answer from the document.", [PromptDocument(1, "Scan", pages)], [], "What is on page 2?")
    rendered = render_prompt(ChatTemplate("chatml", thinks=True), messages, enable_thinking=False)
    request = GenerateRequest(rendered.parts, Sampling(temperature=0.0, max_tokens=48), rendered.prefix_parts)
    model = write_tiny_qwen35(tmp_path / "tiny-qwen35.gguf")
    config = EngineConfig(
        str(model),
        n_ctx=2048,
        n_threads=2,
        draft_tokens=8,
        mmproj_path=str(write_tiny_mmproj(tmp_path / "mmproj.gguf")),
    )
    _oracle(monkeypatch, config, request)
    _same_answer(Case(model, "oracle"), config, request)


def test_the_real_pace_drafts_nothing_until_it_has_timed_a_check(starter_gguf: Path) -> None:
    """Without the pinned pace: the first answer drafts nothing and says why; after enough plain
    tokens to pay for it, one probe times a check on this machine, and the pace decides from then on."""
    request = _request(starter_gguf, "Quote clause 12.2 word for word.")
    engine = LocalEngine(_config(starter_gguf, 8), cancelled=lambda: False)
    try:
        first = engine.generate(request, lambda _e: None)
        assert first.drafted_tokens == 0 and first.completion_tokens > 0
        assert first.draft_note == "no drafts yet: Folio first times what checking guesses costs on this computer"
        assert engine._drafting is not None
        pace = engine._drafting.pace
        for _ in range(8):
            if pace.probes:
                break
            engine.generate(request, lambda _e: None)
        assert pace.probes == 1 and pace.fit.line(pace.single_s) is not None
    finally:
        engine.close()


@pytest.mark.usefixtures("always_draft")
def test_a_request_may_ask_for_no_drafts(starter_gguf: Path) -> None:
    """What the benchmark compares on one engine: the same request written plainly drafts nothing
    (and gives no reason: drafting was not asked for), and the answer is the same."""
    request = _request(starter_gguf, "Quote clause 12.2 word for word.")
    config = _config(starter_gguf, 8, rows_alone=True)
    tokens, text, drafted = _answer(config, request)
    plain_tokens, plain_text, plain = _answer(config, dataclasses.replace(request, drafting=False))
    assert drafted.drafted_tokens > 0 and (plain.drafted_tokens, plain.draft_note) == (0, "")
    assert (plain_tokens, plain_text) == (tokens, text)
