"""The planner: context, KV type and memory from GGUF facts and the hardware (pure, no llama.cpp)."""

from __future__ import annotations

import os

import psutil
import pytest

from inference.planner import (
    QWEN35_TIERS,
    GiB,
    GpuDevice,
    Hardware,
    PlanRequest,
    advise_tiers,
    estimate_memory,
    kv_bytes_per_token,
    max_context,
    plan,
    recommended_tier,
    recurrent_state_bytes,
    tier_facts,
)

NINE_B = tier_facts(QWEN35_TIERS[-1])
FULL = 262_144


def laptop(gib: int, gpus: tuple[GpuDevice, ...] = ()) -> Hardware:
    return Hardware(ram_total=gib * GiB, ram_available=gib * GiB * 3 // 4, physical_cores=8, gpus=gpus)


def test_qwen35_9b_geometry_matches_the_published_model() -> None:
    assert QWEN35_TIERS[-1].parameters == pytest.approx(8.95e9, rel=0.01)
    assert NINE_B.full_attention_layers == [3, 7, 11, 15, 19, 23, 27, 31] and len(NINE_B.recurrent_layers) == 24
    # DESIGN.md §3: KV per token f16 32,768 B, q8_0 17,408 B, q4_0 9,216 B; recurrent state about 50 MiB.
    assert kv_bytes_per_token(NINE_B, "f16") == 32_768
    assert kv_bytes_per_token(NINE_B, "q8_0") == 17_408
    assert kv_bytes_per_token(NINE_B, "q4_0") == 9_216
    assert recurrent_state_bytes(NINE_B) == 24 * (3 * 8192 + 128 * 4096) * 4


def test_full_262k_context_for_9b_in_16_gb_uses_q8_0() -> None:
    p = plan(NINE_B, laptop(16), PlanRequest(prompt_tokens=FULL - 1024, answer_tokens=1024))
    assert p.fits and p.n_ctx == FULL and p.kv_type == "q8_0" and p.flash_attn
    assert p.memory.kv == FULL * 17_408  # 4.25 GiB
    assert p.memory.ram <= p.budget <= 16 * GiB
    assert any("q8_0" in note for note in p.notes)


def test_more_memory_keeps_f16_and_less_falls_back_to_q4_0() -> None:
    request = PlanRequest(prompt_tokens=FULL - 1024)
    assert plan(NINE_B, laptop(32), request).kv_type == "f16"
    small = plan(NINE_B, laptop(12), request)
    assert small.fits and small.kv_type == "q4_0"


def test_says_plainly_when_it_does_not_fit() -> None:
    p = plan(NINE_B, laptop(8), PlanRequest(prompt_tokens=FULL - 1024))
    assert not p.fits
    assert "this machine can give" in p.reason and "smaller model" in p.reason and "\n" not in p.reason
    too_long = plan(NINE_B, laptop(64), PlanRequest(prompt_tokens=300_000))
    assert not too_long.fits and "holds 262,144" in too_long.reason


def test_context_has_room_for_follow_ups_and_respects_the_cap() -> None:
    p = plan(NINE_B, laptop(16), PlanRequest(prompt_tokens=20_000, answer_tokens=1024))
    assert p.n_ctx >= 20_000 + 1024 + 2048 and p.n_ctx % 1024 == 0 and p.kv_type == "f16"
    capped = plan(NINE_B, laptop(16), PlanRequest(prompt_tokens=20_000, context_cap=16_384))
    assert not capped.fits and "your context limit" in capped.reason
    forced = plan(NINE_B, laptop(64), PlanRequest(prompt_tokens=20_000, kv_type="q4_0"))
    assert forced.kv_type == "q4_0"


def test_tier_advice() -> None:
    assert recommended_tier(laptop(16)) == "Qwen3.5-9B"
    advice = {a.tier: a for a in advise_tiers(laptop(10))}
    assert not advice["Qwen3.5-9B"].fits and 0 < advice["Qwen3.5-9B"].max_context < FULL
    assert advice["Qwen3.5-4B"].fits and advice["Qwen3.5-0.8B"].fits
    assert recommended_tier(laptop(10)) == "Qwen3.5-4B"
    assert recommended_tier(laptop(10), context_tokens=32_768) == "Qwen3.5-9B"
    assert recommended_tier(laptop(8)) == "Qwen3.5-2B"
    assert recommended_tier(Hardware(2 * GiB, GiB, 2)) is None


def test_gpu_layers_follow_free_vram() -> None:
    none = plan(NINE_B, laptop(16), PlanRequest(prompt_tokens=8000))
    assert none.n_gpu_layers == 0 and none.memory.gpu == 0
    partial = plan(NINE_B, laptop(16, (GpuDevice("gpu", 4 * GiB, 6 * GiB),)), PlanRequest(prompt_tokens=8000))
    assert 0 < partial.n_gpu_layers < NINE_B.n_layer
    assert partial.memory.ram < none.memory.ram
    full = plan(NINE_B, laptop(16, (GpuDevice("gpu", 20 * GiB, 24 * GiB),)), PlanRequest(prompt_tokens=8000))
    assert full.n_gpu_layers == NINE_B.n_layer + 1


def test_memory_components_scale_as_llama_cpp_allocates() -> None:
    small = estimate_memory(NINE_B, n_ctx=4096, kv_type="q8_0")
    big = estimate_memory(NINE_B, n_ctx=8192, kv_type="q8_0")
    assert big.kv == 2 * small.kv and big.recurrent == small.recurrent and big.weights == small.weights
    assert estimate_memory(NINE_B, n_ctx=4000, kv_type="q8_0").kv == small.kv  # n_ctx is padded to 256
    # Without flash attention the scores matrix appears: the planner never plans that at long context.
    no_flash = estimate_memory(NINE_B, n_ctx=FULL, kv_type="f16", flash_attn=False)
    assert no_flash.compute > no_flash.kv
    assert max_context(NINE_B, laptop(16), "q8_0") == FULL


def test_a_plan_becomes_the_engine_settings_it_chose() -> None:
    p = plan(NINE_B, laptop(16), PlanRequest(prompt_tokens=FULL - 1024, answer_tokens=1024))
    config = p.engine_config("/models/9b.gguf", n_threads=3, model_id="abc")
    assert (config.model_path, config.n_ctx, config.kv_type, config.flash_attn) == (
        "/models/9b.gguf",
        FULL,
        "q8_0",
        True,
    )
    assert (config.n_batch, config.n_ubatch, config.n_gpu_layers) == (p.n_batch, p.n_ubatch, p.n_gpu_layers)
    assert config.n_threads == 3 and config.model_id == "abc"  # the caller's fields win


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this platform")
def test_cores_are_those_this_process_may_run_on() -> None:
    """Held to one CPU (taskset, a container's cpuset), the engine plans one thread, not the machine's count."""
    allowed = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(allowed)})
        assert Hardware.detect().physical_cores == 1
    finally:
        os.sched_setaffinity(0, allowed)
    assert Hardware.detect().physical_cores == min(len(allowed), psutil.cpu_count(logical=False) or len(allowed))
