"""The planner's memory prediction against what llama.cpp itself reports allocating (within 10%)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from inference.engine import LocalEngine
from inference.engine_api import EngineConfig
from inference.gguf_facts import read_facts
from inference.planner import estimate_memory
from tests.fixtures.tiny_qwen35 import TINY, write_qwen35_gguf

pytestmark = pytest.mark.e2e


def _reported(path: Path, n_ctx: int, kv: str, draft_tokens: int = 0) -> dict[str, int]:
    config = EngineConfig(str(path), n_ctx=n_ctx, n_threads=2, kv_type=kv, draft_tokens=draft_tokens)
    engine = LocalEngine(config, cancelled=lambda: False)
    try:
        return engine.memory_report
    finally:
        engine.close()


@pytest.mark.parametrize(("n_ctx", "kv"), [(4096, "f16"), (16384, "q8_0"), (32768, "q4_0")])
def test_starter_model_prediction(starter_gguf: Path, shared_models_dir: Path, n_ctx: int, kv: str) -> None:
    from app.models.registry import read_facts_cached

    facts = read_facts_cached(starter_gguf, shared_models_dir / "facts")
    predicted = estimate_memory(facts, n_ctx=n_ctx, kv_type=kv)
    reported = _reported(starter_gguf, n_ctx, kv)
    assert predicted.kv == reported["kv"]  # exact: cells x layers x row sizes
    assert predicted.weights == pytest.approx(reported["weights"], rel=0.01)
    assert predicted.compute == pytest.approx(reported["compute"], rel=0.10)
    assert predicted.llama_buffers == pytest.approx(sum(reported.values()), rel=0.10)


@pytest.mark.parametrize("shape", ["tiny", "wider", "with-mtp"])
def test_hybrid_qwen35_prediction(tmp_path: Path, shape: str) -> None:
    variants = {
        "tiny": TINY,
        "wider": replace(TINY, n_embd=256, n_ff=768, head_dim=64, ssm_d_state=32, ssm_dt_rank=8, rope_dims=32),
        "with-mtp": replace(TINY, mtp_layers=1),
    }
    path = write_qwen35_gguf(tmp_path / f"{shape}.gguf", variants[shape])
    facts = read_facts(path)
    for n_ctx in (4096, 16384):
        predicted = estimate_memory(facts, n_ctx=n_ctx, kv_type="f16")
        reported = _reported(path, n_ctx, "f16")
        assert predicted.kv == reported["kv"]
        assert predicted.recurrent == pytest.approx(reported["recurrent"], abs=11 * 1024)  # logged to 0.01 MiB
        assert predicted.weights == pytest.approx(reported["weights"], abs=11 * 1024)  # MTP layers not loaded
        assert predicted.llama_buffers == pytest.approx(sum(reported.values()), rel=0.10)


@pytest.mark.parametrize("shape", ["tiny", "with-mtp"])
def test_drafting_memory_prediction(tmp_path: Path, shape: str, starter_gguf: Path) -> None:
    """Drafting adds logits rows, recurrent snapshots (hybrid) and the MTP block with its own context."""
    path = write_qwen35_gguf(tmp_path / f"{shape}.gguf", replace(TINY, mtp_layers=1 if shape == "with-mtp" else 0))
    facts = read_facts(path)
    predicted = estimate_memory(facts, n_ctx=4096, kv_type="f16", draft_tokens=8)
    reported = _reported(path, 4096, "f16", draft_tokens=8)
    assert predicted.kv == reported["kv"]  # the MTP context's one-layer cache included
    assert predicted.recurrent == pytest.approx(reported["recurrent"], abs=11 * 1024 * 9)  # 1 + 8 snapshots
    assert predicted.weights == pytest.approx(reported["weights"], abs=11 * 1024)  # MTP layers loaded now
    # Never short; on this 4-layer toy the MTP graph's activations are over-counted (+10% in all, measured).
    total = sum(reported.values())
    assert total <= predicted.llama_buffers <= total * 1.12
    starter = read_facts(starter_gguf)
    assert estimate_memory(starter, n_ctx=4096, kv_type="f16", draft_tokens=8).llama_buffers == pytest.approx(
        sum(_reported(starter_gguf, 4096, "f16", draft_tokens=8).values()), rel=0.10
    )
