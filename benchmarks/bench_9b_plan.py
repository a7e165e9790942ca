"""The full 262,144-token plan for a 9B-shaped qwen35 in 16 GB of RAM, allocated and run for real.

Real Qwen3.5-9B weights cannot be downloaded here, so this writes (never commits) a GGUF with the
published Qwen3.5-9B geometry (tests/fixtures/tiny_qwen35.QWEN35_9B: 32 layers, 8 gated-attention +
24 Gated DeltaNet, vocabulary 248,320) and all-zero Q4_K/Q6_K weights, as a sparse file in a temp
folder outside the repository (no disk cost), deletes it afterwards. Zero weights make llama.cpp
allocate and compute exactly as for the real model; only the words it writes are meaningless.

It plans for a 16 GiB machine, runs that plan on this one (needs ~10 GiB free), reads a few hundred
tokens and writes a few dozen, and records predicted vs reported vs resident memory.

Run: .venv/bin/python benchmarks/bench_9b_plan.py
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.results import write_section  # noqa: E402
from inference.chat_format import Message, template_for  # noqa: E402
from inference.engine_api import GenerateRequest, Sampling  # noqa: E402
from inference.engine_process import EngineProcess  # noqa: E402
from inference.events import Finished, Loaded  # noqa: E402
from inference.gguf_facts import read_facts  # noqa: E402
from inference.planner import GiB, Hardware, MiB, PlanRequest, plan  # noqa: E402
from inference.prompt import PromptDocument, SourceBlock, build_messages, render_prompt  # noqa: E402
from tests.fixtures.tiny_qwen35 import QWEN35_9B, write_qwen35_gguf  # noqa: E402

HEADING = "## Engine: the 262K-token plan on a 9B-shaped qwen35 (benchmarks/bench_9b_plan.py)"
FULL = 262_144


class PeakRss:
    """Polls a process's resident memory in the background and keeps the highest value."""

    def __init__(self, pid: int) -> None:
        import psutil

        self._proc = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, int(self._proc.memory_info().rss))
            except Exception:
                return
            self._stop.wait(0.2)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def main() -> int:
    import psutil

    tmp = Path(tempfile.mkdtemp(prefix="folio-9b-shaped-"))
    try:
        path = write_qwen35_gguf(
            tmp / "qwen35-9b-shaped-Q4_K.gguf", QWEN35_9B, weights="zero", matrix_type="Q4_K", output_type="Q6_K"
        )
        apparent, on_disk = path.stat().st_size, path.stat().st_blocks * 512
        print(f"wrote {path} ({apparent / GiB:.2f} GiB apparent, {on_disk / MiB:.1f} MiB on disk)", flush=True)
        facts = read_facts(path)
        cores = Hardware.detect().physical_cores
        laptop = Hardware(ram_total=16 * GiB, ram_available=12 * GiB, physical_cores=cores)
        chosen = plan(facts, laptop, PlanRequest(prompt_tokens=FULL - 1024, answer_tokens=1024, headroom=False))
        print(f"plan for 16 GiB: fits={chosen.fits} n_ctx={chosen.n_ctx} kv={chosen.kv_type}", flush=True)
        if not chosen.fits:
            print(f"the plan does not fit: {chosen.reason}", file=sys.stderr)
            return 1
        free = psutil.virtual_memory().available
        if free < chosen.memory.total + 2 * GiB:
            need = chosen.memory.total / GiB + 2
            print(f"skipped: only {free / GiB:.1f} GiB free here, the run needs {need:.1f}", file=sys.stderr)
            return 0
        config = chosen.engine_config(str(path))
        template = template_for("qwen35", facts.chat_template)
        page = " ".join(f"Clause {i}: the supplier delivers within {i + 9} days." for i in range(8))
        docs = [PromptDocument(1, "Agreement", [SourceBlock("[p. 1]", page)])]
        messages = build_messages("Answer from the documents.", docs, [Message("user", "hi")], "When?")
        rendered = render_prompt(template, messages, enable_thinking=False)
        request = GenerateRequest(rendered.parts, Sampling(max_tokens=48), rendered.prefix_parts)

        engine = EngineProcess()
        try:
            engine.gpu_devices()  # start the child; its RSS now is the baseline
            assert engine.pid is not None
            base = int(psutil.Process(engine.pid).memory_info().rss)
            watcher = PeakRss(engine.pid)
            start = time.perf_counter()
            events = list(engine.generate(config, request))
            elapsed = time.perf_counter() - start
            peak = watcher.stop()
        finally:
            engine.close()
        loaded = next(e for e in events if isinstance(e, Loaded))
        stats = next(e for e in events if isinstance(e, Finished)).stats
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    reported = loaded.memory
    m = chosen.memory
    rows = [
        "| part | predicted | llama.cpp reports | prediction / report |",
        "| --- | ---: | ---: | ---: |",
    ]
    for part in ("weights", "kv", "recurrent", "output", "compute"):
        p, r = getattr(m, part), reported.get(part, 0)
        rows.append(
            f"| {part} | {p / MiB:,.1f} MiB | {r / MiB:,.1f} MiB | {p / r:.3f} |" if r else f"| {part} | - | - | - |"
        )
    total_r = sum(reported.values())
    rows.append(
        f"| **llama.cpp buffers** | {m.llama_buffers / GiB:.2f} GiB | {total_r / GiB:.2f} GiB "
        f"| {m.llama_buffers / total_r:.3f} |"
    )
    resident = m.total - m.runtime
    rows.append(
        f"| **+ vocabulary tables** vs peak RSS growth of the engine process | {resident / GiB:.2f} GiB "
        f"| {(peak - base) / GiB:.2f} GiB (RSS) | {resident / (peak - base):.3f} |"
    )
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} CPUs shared with other "
        f"work, {psutil.virtual_memory().total / GiB:.1f} GiB RAM.",
        "",
        f"Model: a GGUF with the published Qwen3.5-9B geometry ({facts.n_layer} layers: "
        f"{len(facts.full_attention_layers)} gated attention with {facts.head_count_kv} KV heads x "
        f"{facts.key_length}, {len(facts.recurrent_layers)} Gated DeltaNet; vocabulary {facts.vocab_size:,}) and "
        f"all-zero Q4_K weights (Q6_K output), {apparent / GiB:.2f} GiB (the published Q4_K_M file is 5.23 GB), "
        "written as a sparse temp file by tests/fixtures/tiny_qwen35.py and deleted after the run.",
        "",
        f"Plan for a 16 GiB machine (budget {chosen.budget / GiB:.1f} GiB after the OS reserve): context "
        f"**{chosen.n_ctx:,} tokens, KV cache {chosen.kv_type}**, flash attention on, batch {chosen.n_batch}, "
        f"{chosen.n_threads} threads; predicted {m.total / GiB:.2f} GiB in all.",
        "",
        f"Run on this machine with that exact configuration: model + context ready in {loaded.seconds:.1f} s, "
        f"read {stats.prompt_tokens} prompt tokens and wrote {stats.completion_tokens} tokens "
        f"({stats.prefill_ms / 1000:.0f} s + {stats.generate_ms / 1000:.0f} s; {elapsed:.0f} s in all).",
        "",
        *rows,
    ]
    print("\n".join(lines))
    write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
