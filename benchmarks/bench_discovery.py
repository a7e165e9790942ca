"""How long it takes to look at a model file: the setup page's quick look vs the full GGUF reader.

Discovery (app/discovery.py) reads only the leading metadata (inference.gguf_peek.peek_gguf) and the
tensor names (to spot files llama.cpp cannot load); registering a model reads everything
(inference.gguf_facts.read_facts). The difference matters for a vocabulary of Qwen3.5's size
(248,320 tokens), so this writes (never commits) a small qwen35 GGUF with that vocabulary in a temp
folder, times the three readers side by side in one run, then deletes it.

Run: .venv/bin/python benchmarks/bench_discovery.py
"""

from __future__ import annotations

import dataclasses
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from inference.gguf_facts import read_facts  # noqa: E402
from inference.gguf_peek import peek_gguf, tensor_names  # noqa: E402
from tests.fixtures.tiny_qwen35 import TINY, write_qwen35_gguf  # noqa: E402

RESULTS = REPO / "benchmarks" / "RESULTS.md"
HEADING = "## Model discovery: looking at a GGUF (benchmarks/bench_discovery.py)"
VOCAB = 248_320


def best_of(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="folio-bench-discovery-"))
    try:
        path = write_qwen35_gguf(folder / "qwen35-vocab.gguf", dataclasses.replace(TINY, vocab_size=VOCAB))
        peek = best_of(lambda: peek_gguf(path), 20)
        names = best_of(lambda: tensor_names(path), 5)
        full = best_of(lambda: read_facts(path), 2)
        size_mb = path.stat().st_size / 1024**2
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = [
        ("leading metadata (peek_gguf)", peek),
        ("+ tensor names (tensor_names)", names),
        ("full facts (read_facts, gguf package)", full),
    ]
    lines = [
        f"A qwen35 GGUF with a {VOCAB:,}-token vocabulary ({size_mb:.0f} MB, tiny weights); best of several "
        f"runs, one process, {platform.machine()} shared machine (Python {platform.python_version()}).",
        "",
        "| reader | time | vs full read |",
        "| --- | ---: | ---: |",
        *[f"| {name} | {t * 1000:,.3f} ms | {full / t:,.0f}x faster |" for name, t in rows[:2]],
        f"| {rows[2][0]} | {full * 1000:,.0f} ms | 1x |",
        "",
        "Discovery pays peek + tensor names per file found; the full read happens once, when a model is",
        "chosen (then cached per file, size and mtime in the model cache's facts/ folder).",
    ]
    print("\n".join(lines))
    write_results(lines)
    return 0


def write_results(lines: list[str]) -> None:
    section = "\n".join([HEADING, "", *lines]).rstrip() + "\n"
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    if HEADING in text:
        before, _, rest = text.partition(HEADING)
        nxt = rest.find("\n## ")
        text = before + section + (rest[nxt + 1 :] if nxt >= 0 else "")
    else:
        text = text.rstrip() + "\n\n" + section
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
