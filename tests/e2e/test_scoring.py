"""Scored answers (GenerateRequest.choices) with real llama.cpp models: the choices' log-probabilities
are the model's own next-token distribution after the prompt, read in one forward pass on top of the
documents already read, on the starter (plain attention) and the tiny hybrid qwen35 (recurrent state)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from inference.chat_format import template_for
from inference.engine import LocalEngine
from inference.engine_api import EngineConfig, GenerateRequest, Sampling
from inference.engine_process import EngineProcess
from inference.events import Finished, PrefixReused, Scored, TokenText
from inference.gguf_facts import read_facts
from inference.prompt import PromptDocument, SourceBlock, build_messages, render_prompt

pytestmark = pytest.mark.e2e

YES_NO = (("Yes", "yes"), ("No", "no"))
CONTRACT = PromptDocument(
    1,
    "Supply Agreement",
    [
        SourceBlock("[p. 1]", "This Supply Agreement is made on March 14, 2012 between Acme Corp. and Beta LLC."),
        SourceBlock("[p. 2]", "This Agreement shall be governed by the laws of the State of Indiana."),
    ],
)


def _request(model: Path, architecture: str, question: str, **fields: object) -> GenerateRequest:
    template = template_for(architecture, read_facts(model).chat_template)
    messages = build_messages("Answer from the document.", [CONTRACT], [], question)
    rendered = render_prompt(template, messages, enable_thinking=False)
    return GenerateRequest(
        rendered.parts,
        Sampling(0.0, 1.0, 1, 0.0, 0.0, 8),
        rendered.prefix_parts,
        **fields,  # type: ignore[arg-type]
    )


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    wide = logits.astype(np.float64)
    top = wide.max()
    return wide - (top + np.log(np.exp(wide - top).sum()))


@pytest.mark.parametrize("which", ["starter", "qwen35"])
def test_scores_are_the_models_next_token_probabilities(which: str, starter_gguf: Path, tiny_qwen35: Path) -> None:
    model, architecture = (starter_gguf, "gemma3") if which == "starter" else (tiny_qwen35, "qwen35")
    engine = LocalEngine(EngineConfig(str(model), n_ctx=2048, n_threads=2), cancelled=lambda: False)
    try:
        question = "Is this agreement governed by the laws of Indiana? Answer Yes or No."
        scored: list[Scored] = []
        stats = engine.generate(_request(model, architecture, question, choices=YES_NO), scored.append)
        assert stats.stop_reason == "scored" and stats.completion_tokens == 0
        (event,) = [e for e in scored if isinstance(e, Scored)]
        assert len(event.logprobs) == 2 and all(lp <= 0 for lp in event.logprobs)

        # The same prompt read plainly: the scores are the log-softmax at the choices' first tokens.
        logits = engine.prompt_logits(_request(model, architecture, question))
        assert engine.model is not None
        table = _log_softmax(logits)
        for spellings, got in zip(YES_NO, event.logprobs, strict=True):
            ids = sorted({engine.model.tokenize(s, add_special=False, parse_special=False)[0] for s in spellings})
            want = math.log(sum(math.exp(table[i]) for i in ids))
            assert got == pytest.approx(want, abs=1e-4)

        # A greedy answer starts with the most likely token: when it is one of the choices, that choice
        # scores highest of the two.
        first: list[str] = []
        engine.generate(
            _request(model, architecture, question),
            lambda e: first.append(e.text) if isinstance(e, TokenText) else None,
        )
        said = "".join(first).strip().lower()
        if said.startswith("yes"):
            assert event.logprobs[0] > event.logprobs[1]
        elif said.startswith("no"):
            assert event.logprobs[1] > event.logprobs[0]
    finally:
        engine.close()


def test_many_scored_questions_read_the_documents_once(tiny_qwen35: Path) -> None:
    """Each question after the first restores the documents' state (the recurrent part from memory)
    and reads only its own tokens; the scores equal those of a cold engine asked the same question."""
    engine = EngineProcess()
    config = EngineConfig(str(tiny_qwen35), n_ctx=2048, n_threads=2)
    questions = [f"Does the agreement have a clause about {topic}? Answer Yes or No." for topic in
                 ("governing law", "insurance", "audit rights", "exclusivity")]  # fmt: skip
    try:
        warm: list[tuple[float, ...]] = []
        for n, question in enumerate(questions):
            request = _request(tiny_qwen35, "qwen35", question, choices=YES_NO)
            events = list(engine.generate(config, request))
            warm.append(next(e for e in events if isinstance(e, Scored)).logprobs)
            stats = next(e for e in events if isinstance(e, Finished)).stats
            if n:
                reused = next(e for e in events if isinstance(e, PrefixReused))
                assert reused.source in ("memory", "context")
                prefix = engine.count_tokens(config, request.parts, request.prefix_parts).prefix
                assert stats.cached_tokens == prefix
    finally:
        engine.close()
    cold = EngineProcess()
    try:
        last = list(cold.generate(config, _request(tiny_qwen35, "qwen35", questions[-1], choices=YES_NO)))
        assert next(e for e in last if isinstance(e, Scored)).logprobs == pytest.approx(warm[-1], abs=1e-5)
    finally:
        cold.close()


def test_a_choice_without_tokens_is_an_error_line(starter_gguf: Path) -> None:
    engine = EngineProcess()
    try:
        from inference.errors import EngineError

        with pytest.raises(EngineError, match="has no tokens"):
            list(
                engine.generate(
                    EngineConfig(str(starter_gguf), n_ctx=1024, n_threads=2),
                    _request(starter_gguf, "gemma3", "Yes or no?", choices=(("Yes",), ("",))),
                )
            )
        # The engine lives on: the next request is answered.
        events = list(
            engine.generate(
                EngineConfig(str(starter_gguf), n_ctx=1024, n_threads=2),
                _request(starter_gguf, "gemma3", "Yes or no?", choices=YES_NO),
            )
        )
        assert any(isinstance(e, Scored) for e in events)
    finally:
        engine.close()
