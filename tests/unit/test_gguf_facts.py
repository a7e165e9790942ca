"""GGUF facts are read from metadata, and files llama.cpp should never see are refused first."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from inference.errors import ModelFileError
from inference.gguf_facts import ModelFacts, read_facts
from tests.fixtures.tiny_qwen35 import TINY, write_clip_header, write_gguf_header, write_qwen35_gguf


def test_qwen35_facts_come_from_metadata(tiny_qwen35: Path) -> None:
    facts = read_facts(tiny_qwen35)
    assert facts.architecture == "qwen35" and facts.is_hybrid
    assert facts.n_layer == 4 and facts.full_attention_layers == [3] and facts.recurrent_layers == [0, 1, 2]
    assert facts.kv_heads_per_layer == [0, 0, 0, 2]
    assert (facts.head_count, facts.head_count_kv, facts.key_length, facts.value_length) == (4, 2, 16, 16)
    assert facts.ssm == {"conv_kernel": 4, "inner_size": 64, "state_size": 16, "group_count": 2, "time_step_rank": 4}
    assert facts.context_length == 262_144 and facts.vocab_size == 281 and facts.vocab_merges == 16
    assert facts.quantization == "ALL_F32"
    assert facts.chat_template and "enable_thinking" in facts.chat_template
    assert not facts.has_mtp and facts.mtp_tensor_bytes == 0
    assert 0 < facts.tensor_bytes < facts.size_bytes


def test_mtp_layers_are_counted_apart(tmp_path: Path, tiny_qwen35: Path) -> None:
    with_mtp = read_facts(write_qwen35_gguf(tmp_path / "mtp.gguf", replace(TINY, mtp_layers=1)))
    plain = read_facts(tiny_qwen35)
    assert with_mtp.has_mtp and with_mtp.block_count == 5 and with_mtp.n_layer == 4
    assert with_mtp.full_attention_layers == [3]  # the MTP block is not part of the trunk
    assert with_mtp.tensor_bytes == plain.tensor_bytes  # llama.cpp skips MTP weights by default
    assert with_mtp.mtp_tensor_bytes > 0


def test_starter_model_facts(starter_gguf: Path, shared_models_dir: Path) -> None:
    from app.models.registry import read_facts_cached

    facts = read_facts_cached(starter_gguf, shared_models_dir / "facts")  # the gguf reader is slow on 262K tokens
    assert facts.architecture == "gemma3" and not facts.is_hybrid
    assert facts.sliding_window == 512 and facts.n_layer == 18
    assert facts.full_attention_layers == list(range(18)) and facts.recurrent_layers == []
    assert facts.quantization == "Q4_K_M" and facts.vocab_size == 262_144


def test_mmproj_projector_type(tmp_path: Path) -> None:
    facts = read_facts(write_clip_header(tmp_path / "mmproj.gguf"))
    assert facts.is_mmproj and facts.projector_type == "qwen3vl_merger"


def test_facts_survive_json_and_old_records_are_marked_stale(tiny_qwen35: Path) -> None:
    facts = read_facts(tiny_qwen35)
    assert ModelFacts.from_json(facts.to_json()) == facts
    old = facts.to_json().replace('"version": 2', '"version": 1')
    assert not ModelFacts.from_json(old).is_current


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: (d / "notes.gguf").write_text("not a model") and d / "notes.gguf", "not a GGUF model file"),
        (lambda d: write_gguf_header(d / "x.gguf", "not-an-architecture"), "is not supported"),
        (lambda d: write_gguf_header(d / "bert.gguf", "bert"), "not a chat model"),
        (lambda d: write_gguf_header(d / "lora.gguf", "llama", general_type="adapter"), "LoRA adapter"),
        (lambda d: write_gguf_header(d / "novocab.gguf", "llama"), "no vocabulary"),
        (lambda d: d, "is a folder"),
        (lambda d: d / "missing.gguf", "no such file"),
    ],
    ids=["text", "unknown-arch", "encoder", "lora", "no-vocab", "folder", "missing"],
)
def test_unusable_files_are_refused_in_one_line(tmp_path: Path, make: object, message: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(ModelFileError, match=message) as info:
        read_facts(path)
    assert "\n" not in str(info.value)


def test_truncated_model_is_refused(tmp_path: Path, tiny_qwen35: Path) -> None:
    cut = tmp_path / "cut.gguf"
    data = tiny_qwen35.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError, match="truncated"):
        read_facts(cut)
