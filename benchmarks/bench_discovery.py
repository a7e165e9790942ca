"""How long it takes to look at a model file: llama.cpp's GGUF reader vs the `gguf` package's.

Discovery (app/models/discovery.py) reads each file's header with llama.cpp's own C reader
(inference.gguf_native.read_header: every key, the tensor table, no weights); registering a model
reads the full facts (inference.gguf_facts.read_facts) with the same C reader since 2026-11-28; the
`gguf` package's GGUFReader is timed as the baseline it replaced. The
difference matters for a vocabulary of Qwen3.5's size (248,320 tokens), so this writes (never
commits) a small qwen35 GGUF with that vocabulary in a temp folder, times the readers side by side in
one run, then deletes it.

Run: .venv/bin/python benchmarks/bench_discovery.py
"""

from __future__ import annotations

import dataclasses
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

from gguf import GGUFReader

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.results import best_of, write_section  # noqa: E402
from inference.gguf_facts import read_facts  # noqa: E402
from inference.gguf_native import read_header  # noqa: E402
from tests.fixtures.tiny_qwen35 import TINY, write_qwen35_gguf  # noqa: E402

HEADING = "## Model discovery: looking at a GGUF (benchmarks/bench_discovery.py)"
VOCAB = 248_320
ROUNDS = 3


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="folio-bench-discovery-"))
    try:
        path = write_qwen35_gguf(folder / "qwen35-vocab.gguf", dataclasses.replace(TINY, vocab_size=VOCAB))
        start = time.perf_counter()
        read_header(path)  # the first call imports llama_cpp and loads libggml-base, once per process
        first = time.perf_counter() - start
        # Interleaved rounds, best of each: load from other work on the machine hits all readers alike.
        native = reader = full = float("inf")
        for _ in range(ROUNDS):
            native = min(native, best_of(lambda: read_header(path), 5))
            reader = min(reader, best_of(lambda: GGUFReader(path), 1))
            full = min(full, best_of(lambda: read_facts(path), 1))
        size_mb = path.stat().st_size / 1024**2
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = [
        ("llama.cpp reader (read_header: all keys + tensor table)", native),
        ("gguf package GGUFReader (all keys + tensor table)", reader),
        ("full facts (read_facts, llama.cpp reader)", full),
    ]
    lines = [
        f"A qwen35 GGUF with a {VOCAB:,}-token vocabulary ({size_mb:.0f} MB, tiny weights); best of "
        f"{ROUNDS} interleaved rounds, one process, {platform.machine()} shared machine "
        f"(Python {platform.python_version()}).",
        "",
        "| reader | time | vs llama.cpp's reader |",
        "| --- | ---: | ---: |",
        f"| {rows[0][0]} | {native * 1000:,.1f} ms | 1x |",
        *[f"| {name} | {t * 1000:,.0f} ms | {t / native:,.0f}x slower |" for name, t in rows[1:]],
        "",
        f"The first read in a process also imports llama_cpp and loads libggml-base: {first * 1000:,.0f} ms in all.",
        "",
        "Discovery pays one llama.cpp read per file found: the parser that will load the model, so what",
        "the setup page offers llama.cpp can open. The full facts are read once, when a model is chosen",
        "(then cached per file, size and mtime in the model cache's facts/ folder).",
    ]
    print("\n".join(lines))
    write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
