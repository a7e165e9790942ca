"""llama.cpp's GGUF reader, through ctypes: checked field by field against the `gguf` package reading
the same real files, and fed damaged files that must give one-line errors, never a crash."""

from __future__ import annotations

import ctypes
import random
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inference.errors import ModelFileError
from inference.gguf_native import _lib, read_header, read_metadata
from tests.fixtures.model_stores import write_meta_gguf, write_projector
from tests.fixtures.tiny_qwen35 import write_gguf_header


def _every_value_type(path: Path) -> Path:
    """A GGUF holding each GGUF value type at values that tell the wrong C type apart."""
    from gguf import GGUFValueType, GGUFWriter

    writer = GGUFWriter(path, "llama")
    writer.add_uint8("t.u8", 250)
    writer.add_int8("t.i8", -7)
    writer.add_uint16("t.u16", 65_000)
    writer.add_int16("t.i16", -30_000)
    writer.add_uint32("t.u32", 4_000_000_000)
    writer.add_int32("t.i32", -2_000_000_000)
    writer.add_float32("t.f32", 0.1)
    writer.add_bool("t.bool_true", True)
    writer.add_bool("t.bool_false", False)
    writer.add_uint64("t.u64", 2**63 + 5)
    writer.add_int64("t.i64", -(2**62))
    writer.add_float64("t.f64", 1 / 3)
    writer.add_string("t.str", "Qwen3.5 – ünïcode ✓")
    writer.add_array("t.arr_str", ["a", "bb", "ccc"])
    writer.add_key_value("t.arr_i16", [-1, 2, -3], GGUFValueType.ARRAY, sub_type=GGUFValueType.INT16)
    writer.add_key_value("t.empty", "", GGUFValueType.STRING)  # add_string would skip it
    writer.add_tensor("a.weight", np.zeros((2, 32), dtype=np.float32))
    writer.add_tensor("b.bias", np.ones(32, dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _by_gguf_package(path: Path) -> tuple[dict[str, Any], list[str]]:
    """What the `gguf` package reads: scalars as values, arrays as their length (read_metadata's form)."""
    from gguf import GGUFReader, GGUFValueType

    reader = GGUFReader(path)
    values: dict[str, Any] = {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):  # the reader's own entries for the file header
            continue
        if field.types[0] == GGUFValueType.ARRAY:
            values[key] = len(field.data)
        else:
            value = field.contents()
            values[key] = value.item() if hasattr(value, "item") else value
    return values, [t.name for t in reader.tensors]


FILES: dict[str, Callable[[Path], Path]] = {
    "every value type": _every_value_type,
    "qwen35 model": lambda p: write_meta_gguf(p, vision_tensors=True),
    "vision projector": write_projector,
    "LoRA adapter": lambda p: write_gguf_header(p, "llama", general_type="adapter"),
}


@pytest.mark.parametrize("kind", FILES)
def test_every_key_and_tensor_name_is_what_the_gguf_package_reads(tmp_path: Path, kind: str) -> None:
    path = FILES[kind](tmp_path / "m.gguf")
    values, names = _by_gguf_package(path)
    assert read_metadata(path) == values
    assert read_header(path).tensor_names == tuple(names)


def test_value_types_come_through_with_their_sign_and_width(tmp_path: Path) -> None:
    meta = read_metadata(_every_value_type(tmp_path / "t.gguf"))
    assert (meta["t.u8"], meta["t.i8"], meta["t.u16"], meta["t.i16"]) == (250, -7, 65_000, -30_000)
    assert (meta["t.u32"], meta["t.i32"], meta["t.u64"], meta["t.i64"]) == (
        4_000_000_000,
        -2_000_000_000,
        2**63 + 5,
        -(2**62),
    )
    assert meta["t.f32"] == struct.unpack("<f", struct.pack("<f", 0.1))[0] and meta["t.f64"] == 1 / 3
    assert meta["t.bool_true"] is True and meta["t.bool_false"] is False
    assert (meta["t.str"], meta["t.empty"], meta["t.arr_str"], meta["t.arr_i16"]) == ("Qwen3.5 – ünïcode ✓", "", 3, 3)


def test_tiny_qwen35_header_matches_the_full_facts(tiny_qwen35: Path) -> None:
    from inference.gguf_facts import read_facts

    values, names = _by_gguf_package(tiny_qwen35)
    assert read_metadata(tiny_qwen35) == values
    header, facts = read_header(tiny_qwen35), read_facts(tiny_qwen35)
    assert header.tensor_names == tuple(names) and len(names) > 40
    assert (header.architecture, header.name, header.quantization) == (
        facts.architecture,
        facts.name,
        facts.quantization,
    )
    assert (header.context_length, header.block_count, header.embedding_length) == (
        facts.context_length,
        facts.block_count,
        facts.embedding_length,
    )
    assert header.size_bytes == facts.size_bytes and not header.is_projector


def test_starter_gemma_header_matches_the_gguf_package_facts(shared_models_dir: Path, starter_gguf: Path) -> None:
    # The gguf package needs ~15 s for gemma's 262K vocabulary: compare with the facts the session
    # fixture already read with it (cached), not a second full read.
    from app.models.registry import read_facts_cached

    facts = read_facts_cached(starter_gguf, shared_models_dir / "facts")
    header, meta = read_header(starter_gguf), read_metadata(starter_gguf)
    assert (header.architecture, header.name, header.quantization) == ("gemma3", facts.name, "Q4_K_M")
    assert header.architecture == facts.architecture
    assert (header.context_length, header.block_count, header.embedding_length) == (
        facts.context_length,
        facts.block_count,
        facts.embedding_length,
    )
    assert meta["tokenizer.ggml.tokens"] == facts.vocab_size == 262_144
    assert meta.get("tokenizer.chat_template") == facts.chat_template
    prefix = f"{facts.architecture}."
    ours = {k.removeprefix(prefix): v for k, v in meta.items() if k.startswith(prefix)}
    scalars = {k: v for k, v in facts.params.items() if not isinstance(v, list)}
    assert scalars and {k: ours[k] for k in scalars} == scalars
    assert header.tensor_names[0] and len(header.tensor_names) == len(set(header.tensor_names)) > 100
    assert not header.is_projector


# -- damaged files -------------------------------------------------------------------------------------------
def _refused(path: Path, match: str | None = None) -> str:
    with pytest.raises(ModelFileError, match=match) as caught:
        read_header(path)
    message = str(caught.value)
    assert message.startswith(path.name + ":") and "\n" not in message and len(message) < 300
    return message


def _header_end(path: Path) -> int:
    lib = _lib()
    from inference.gguf_native import _InitParams

    ctx = lib.gguf_init_from_file(str(path).encode(), _InitParams(no_alloc=True, ctx=None))
    try:
        return int(lib.gguf_get_data_offset(ctx))
    finally:
        lib.gguf_free(ctx)


def test_files_that_are_not_ggufs_are_refused_in_one_line(tmp_path: Path) -> None:
    cases = {
        "empty.gguf": b"",
        "three.gguf": b"GGU",
        "noise.gguf": random.Random(1).randbytes(4096),
        "notes.gguf": b"A contract, not a model\n",
        "ggml.gguf": b"ggjt" + bytes(100),  # the pre-GGUF llama.cpp format
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        _refused(tmp_path / name, "not a GGUF model file")
    assert "cannot be read" in _refused(tmp_path / "missing.gguf")
    (tmp_path / "folder.gguf").mkdir()
    _refused(tmp_path / "folder.gguf")


def test_a_gguf_cut_anywhere_is_refused(tmp_path: Path, tiny_qwen35: Path) -> None:
    data = tiny_qwen35.read_bytes()
    header_end = _header_end(tiny_qwen35)
    cuts = sorted({*range(4, header_end, max(1, header_end // 60)), header_end - 1, header_end, len(data) - 1})
    for cut in cuts:
        part = tmp_path / f"cut-{cut}.gguf"
        part.write_bytes(data[:cut])
        message = _refused(part)
        if cut >= header_end:
            assert "incomplete" in message  # the header is whole, the weights are not: llama.cpp would refuse it
    version = tmp_path / "v99.gguf"
    version.write_bytes(data[:4] + struct.pack("<I", 99) + data[8:])
    _refused(version, "version")


def test_huge_claimed_lengths_are_refused_without_reading_them(tmp_path: Path, tiny_qwen35: Path) -> None:
    data = tiny_qwen35.read_bytes()
    # Header: magic, version (u32), n_tensors (u64), n_kv (u64); then the first key's length (u64).
    patches = {
        "n_tensors": (8, struct.pack("<Q", 2**60)),
        "n_kv": (16, struct.pack("<Q", 2**60)),
        "key_length": (24, struct.pack("<Q", 2**62)),
    }
    tokens = data.index(b"tokenizer.ggml.tokens") + len(b"tokenizer.ggml.tokens")
    patches["array_count"] = (tokens + 8, struct.pack("<Q", 2**61))  # after value type and item type
    first_token = tokens + 16
    patches["string_in_array"] = (first_token, struct.pack("<Q", 2**40))
    patches["value_type"] = (tokens, struct.pack("<I", 77))
    for name, (offset, raw) in patches.items():
        bad = tmp_path / f"{name}.gguf"
        bad.write_bytes(data[:offset] + raw + data[offset + len(raw) :])
        _refused(bad, "damaged")


def test_random_damage_to_the_header_never_crashes(tmp_path: Path) -> None:
    path = write_meta_gguf(tmp_path / "m.gguf", vision_tensors=True)
    data = path.read_bytes()
    header_end = _header_end(path)
    rng = random.Random(7)
    refused = 0
    for i in range(300):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(4, header_end)] = rng.randrange(256)
        bad = tmp_path / f"bad-{i}.gguf"
        bad.write_bytes(bytes(damaged))
        try:
            read_header(bad)
            read_metadata(bad)
        except ModelFileError as exc:
            refused += 1
            assert "\n" not in str(exc)
        bad.unlink()
    assert refused > 100


def test_reading_leaves_ggmls_log_where_it_was_and_keeps_its_errors_to_itself(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from inference.gguf_native import _LogCallback

    lib = _lib()
    seen: list[bytes] = []
    ours = _LogCallback(lambda _level, text, _user: seen.append(text))

    def current() -> int | None:
        callback, user = ctypes.c_void_p(), ctypes.c_void_p()
        lib.ggml_log_get(ctypes.byref(callback), ctypes.byref(user))
        return callback.value

    (tmp_path / "noise.gguf").write_bytes(b"GGUF" + bytes(7))
    lib.ggml_log_set(ctypes.cast(ours, ctypes.c_void_p), None)  # e.g. llama_native's capture
    try:
        _refused(tmp_path / "noise.gguf", "damaged")
        assert current() == ctypes.cast(ours, ctypes.c_void_p).value
    finally:
        lib.ggml_log_set(None, None)  # back to ggml's default
    assert seen == []  # the reason went into the message instead
    _refused(tmp_path / "noise.gguf", "damaged")
    assert "gguf_init" not in capfd.readouterr().err  # nor to stderr, by ggml's default logger
