"""Speculative decoding benchmark: answers written with drafts against the same answers without, one run.

Real contracts from the shared corpus (CUAD, `../shared/corpus/contracts_pdf`), added to a temporary
library and put to the model exactly as Folio does (instructions, page markers, the chat's sampling;
extraction's grammar-constrained JSON with verbatim quotes), on the real Qwen2.5-Coder-1.5B
(`make eval`; skipped with a note when it is not installed) and the starter model (Gemma 3 270M):
- quote-heavy questions ("quote the termination clause"),
- extraction (JSON schema grammar, one field per request, as `folio extract` does),
- free-form summaries in the model's own words.
One engine per model answers every request twice, with drafting and without (the order alternates),
so the shared machine's load falls on both alike and nothing else differs; both start from the
documents' state. Decode speed = answer tokens / seconds spent
writing them (reading the prompt excluded); the processor-time column divides answer tokens by the
processor time of whole requests (the question read, then the answer written: the same reading on
both sides), which another program's load does not inflate. Every request runs `--rounds` times (2):
Folio's pace drafts nothing until it has timed a check on this machine, which it does only after
enough plain tokens to pay for the probe, so a first round alone shows mostly plain writing. The
notes say what the pace learnt. "Same answer" counts answers word for word those of the
plain engine (sampled ones too: same sampler, same seed); see inference/speculative.py on why a batch's
rounding can part them at a near-tie.

`--rollback` also measures what taking back refused drafts costs a hybrid model of Qwen3.5-9B's
shape (a zero-weight GGUF written as a sparse temp file): llama.cpp's per-token recurrent snapshots
(`n_rs_seq`, what Folio uses) against copying the recurrent state out before every check and back
after a refusal (`llama_state_seq_get/set_data_ext` with PARTIAL_ONLY), plus re-reading the kept tokens.

Run: .venv/bin/python benchmarks/bench_speculative.py [--models eval,starter] [--threads 1] [--rollback]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.results import threads, write_section  # noqa: E402

HEADING = "## Speculative decoding (benchmarks/bench_speculative.py)"
CORPUS = REPO.parent / "shared" / "corpus" / "contracts_pdf"
# One short contract (4 pages): reading it stays short, so a run on a shared machine measures writing.
CONTRACTS = ["SPHERE3DCORP_06_24_2020-EX-10.12-CONSULTING AGREEMENT.PDF"]
QUOTES = [
    "Quote the termination clause word for word.",
    "Quote the governing law clause exactly as written.",
]
SUMMARIES = [
    "Summarise this agreement in your own words in one paragraph.",
    "In your own words, what does each party have to do under this agreement?",
]
FIELDS = ["Governing Law", "Parties", "Expiration Date"]
ANSWER_TOKENS = 200
GOALS = {"quote-heavy": 1.5, "extraction": 1.5, "free-form": 0.97}


@dataclasses.dataclass
class Tally:
    answers: int = 0
    tokens: int = 0
    ms: float = 0.0
    cpu_s: float = 0.0  # processor time of whole requests (the question read, then the answer written)
    drafted: int = 0
    accepted: int = 0
    same: int = 0  # answers word for word the plain engine's (drafting side only)

    def add(self, stats: object, cpu_s: float) -> None:
        from inference.events import GenerationStats

        assert isinstance(stats, GenerationStats)
        self.cpu_s += cpu_s
        self.answers += 1
        self.tokens += stats.completion_tokens
        self.ms += stats.generate_ms
        self.drafted += stats.drafted_tokens
        self.accepted += stats.accepted_tokens

    @property
    def rate(self) -> float:
        return self.tokens / (self.ms / 1000) if self.ms else 0.0

    @property
    def cpu_rate(self) -> float:
        return self.tokens / self.cpu_s if self.cpu_s else 0.0


def requests_for(ctx: object, doc_id: int, template_source: str | None, architecture: str) -> list[tuple[str, object]]:
    """(workload, request) pairs for one document, built the way chat and extraction build them."""
    from app.context import AppContext
    from app.engine.documents import prompt_documents
    from app.extraction.prompt import FieldAsk, extraction_messages
    from app.extraction.schema import group_schema, max_output_bytes
    from app.extraction.templates import TemplateStore
    from assets import read_text
    from inference.chat_format import template_for
    from inference.engine_api import GenerateRequest, Sampling
    from inference.prompt import build_messages, render_prompt

    assert isinstance(ctx, AppContext)
    template = template_for(architecture, template_source)
    documents = prompt_documents(ctx, [doc_id])
    instructions = read_text("prompts", "answer.md")
    chat = Sampling.recommended(thinking=False, max_tokens=ANSWER_TOKENS)
    out: list[tuple[str, object]] = []
    for workload, questions in (("quote-heavy", QUOTES), ("free-form", SUMMARIES)):
        for question in questions:
            rendered = render_prompt(
                template, build_messages(instructions, documents, [], question), enable_thinking=False
            )
            out.append((workload, GenerateRequest(rendered.parts, chat, rendered.prefix_parts)))
    contract_review = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
    settings = ctx.settings.extraction
    for name in FIELDS:
        field = next(f for f in contract_review.fields if f.name == name)
        schema = group_schema([(field.key, field.yes_no, 0)], settings.value_chars, settings.quote_chars)
        greedy = Sampling(0.0, 1.0, 1, 0.0, 0.0, max_output_bytes(schema) + 2)
        rendered = render_prompt(template, extraction_messages(documents, [FieldAsk(field)]), enable_thinking=False)
        request = GenerateRequest(rendered.parts, greedy, rendered.prefix_parts, json_schema=json.dumps(schema))
        out.append(("extraction", request))
    return out


def bench_model(
    label: str, model: Path, threads: int, draft_tokens: int, work: Path, rounds: int, notes: list[str]
) -> dict[str, tuple[Tally, Tally]]:
    os.environ["FOLIO_HOME"] = str(work / f"home-{label}")
    from app.context import open_app
    from inference.engine import LocalEngine
    from inference.engine_api import EngineConfig
    from inference.gguf_facts import read_facts

    facts = read_facts(model)
    ctx = open_app()
    try:
        doc_ids = [ctx.library.add(CORPUS / name).document.id for name in CONTRACTS]
        base = EngineConfig(
            str(model), n_ctx=16384, n_threads=threads, state_cache_dir=str(work / f"states-{label}"),
            state_cache_bytes=8 << 30,
        )  # fmt: skip
        # One engine for both sides, so nothing but drafting differs between them: two engines (two
        # copies of the model in one process) ran up to 18% apart with drafting off in both, and a
        # snapshot restored into the second one rounds differently from the first one's own reading.
        engine = LocalEngine(dataclasses.replace(base, draft_tokens=draft_tokens), cancelled=lambda: False)
        tallies: dict[str, tuple[Tally, Tally]] = {}
        turn = 0
        try:
            requests = [
                r for doc_id in doc_ids for r in requests_for(ctx, doc_id, facts.chat_template, facts.architecture)
            ]
            for _workload, request in requests:  # the documents are read before anything is timed
                engine.generate(dataclasses.replace(request, read_only=True), lambda _e: None)  # type: ignore[type-var]
            for workload, request in requests * rounds:
                sides = [(dataclasses.replace(request, drafting=False), 0), (request, 1)]  # type: ignore[type-var]
                texts: dict[int, list[str]] = {0: [], 1: []}
                for asked, side in sides if turn % 2 == 0 else sides[::-1]:
                    began = time.process_time()
                    stats = engine.generate(asked, functools.partial(_collect, texts[side]))  # type: ignore[arg-type]
                    cpu = time.process_time() - began
                    tallies.setdefault(workload, (Tally(), Tally()))[side].add(stats, cpu)
                turn += 1
                p, d = tallies[workload]
                d.same += texts[0] == texts[1]
                print(f"  [{label}] {workload}: plain {p.rate:.1f} tok/s, drafting {d.rate:.1f} tok/s "
                      f"({d.accepted}/{d.drafted} drafts kept, {d.same}/{d.answers} answers the same)",
                      flush=True)  # fmt: skip
            notes.append(pace_note(label, engine))
        finally:
            engine.close()
    finally:
        ctx.close()
    return tallies


def pace_note(label: str, engine: object) -> str:
    """What the drafting engine's pace learnt on this machine during the run."""
    pace = engine._drafting.pace if engine._drafting is not None else None  # type: ignore[attr-defined]
    if pace is None:
        return f"{label}: no drafting (the context keeps no rollback snapshots)"
    return f"{label}: the pace probed {pace.probes} time(s); {pace.idle_note() or 'drafting paid'}"


def _collect(into: list[str], event: object) -> None:
    from inference.events import TokenText

    if isinstance(event, TokenText):
        into.append(event.text)


def batch_costs(
    model: Path, threads: int, sizes: tuple[int, ...] = (1, 2, 3, 5, 9, 17), rounds: int = 3
) -> dict[int, float]:
    """Seconds to decode a batch of n tokens with logits for every one (what checking n-1 drafts costs),
    median of `rounds` interleaved rounds, on a context already holding 512 tokens."""
    from inference.llama_native import ContextParams, NativeContext, NativeModel

    native = NativeModel(str(model))
    ctx = NativeContext(native, ContextParams(n_ctx=2048, n_batch=512, n_ubatch=512, n_threads=threads, n_outputs=17))
    try:
        text = " ".join(f"Clause {i}: the Supplier shall deliver the Goods within {i} days." for i in range(60))
        tokens = native.tokenize(text, add_special=True, parse_special=False)[:600]
        assert ctx.decode(tokens[:512], 0, want_logits=True) == 0
        times: dict[int, list[float]] = {n: [] for n in sizes}
        for _ in range(rounds):
            for n in sizes:
                began = time.perf_counter()
                ctx.decode(tokens[512 : 512 + n], 512, want_logits=True, all_logits=n > 1)
                times[n].append(time.perf_counter() - began)
                ctx.trim(512)
    finally:
        ctx.close()
        native.close()
    return {n: sorted(t)[len(t) // 2] for n, t in times.items()}


def cost_lines(costs: dict[str, dict[int, float]]) -> list[str]:
    sizes = sorted(next(iter(costs.values())))
    lines = [
        "What checking drafts costs: one decode of n tokens with logits for each, in one-token decodes (median of 3 "
        "interleaved rounds). Checking k drafts pays only when more than that many tokens are kept on average; "
        "the ceiling is the speed-up if every draft were right.",
        "",
        "| model | " + " | ".join(f"n={n}" for n in sizes) + " | ceiling (all drafts right) |",
        "| --- | " + " | ".join("---:" for _ in sizes) + " | ---: |",
    ]
    for label, c in costs.items():
        ratios = [c[n] / c[1] for n in sizes]
        ceiling = max(n / r for n, r in zip(sizes, ratios, strict=True))
        lines.append(f"| {label} | " + " | ".join(f"{r:.2f}" for r in ratios) + f" | {ceiling:.2f}x |")
    return lines


def table(results: dict[str, dict[str, tuple[Tally, Tally]]]) -> list[str]:
    rows = [
        "| model | workload | answers | tokens written (plain / drafting) | plain tok/s | drafting tok/s "
        "| speed-up (clock) | speed-up (processor time) | drafted tokens kept | same answer as plain | goal |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for label, tallies in results.items():
        for workload in ("quote-heavy", "extraction", "free-form"):
            if workload not in tallies:
                continue
            p, d = tallies[workload]
            ratio = d.rate / p.rate if p.rate else 0.0
            cpu_ratio = d.cpu_rate / p.cpu_rate if p.cpu_rate else 0.0
            goal = GOALS[workload]
            kept = f"{d.accepted / d.drafted:.0%} of {d.drafted:,}" if d.drafted else "none drafted"
            verdict = f">= {goal:.2f}x: {'met' if min(ratio, cpu_ratio) >= goal else 'not met'}"
            rows.append(
                f"| {label} | {workload} | {p.answers} | {p.tokens:,} / {d.tokens:,} | {p.rate:.1f} | {d.rate:.1f} "
                f"| {ratio:.2f}x | {cpu_ratio:.2f}x | {kept} | {d.same} of {d.answers} | {verdict} |"
            )
    return rows


# -- rollback cost on a 9B-shaped hybrid ------------------------------------------------------------------
def bench_rollback(work: Path, threads: int, drafts: int = 8, repeats: int = 3) -> list[str]:
    from inference.llama_native import ContextParams, NativeContext, NativeModel
    from tests.fixtures.tiny_qwen35 import QWEN35_9B, write_qwen35_gguf

    path = write_qwen35_gguf(work / "qwen35-9b-shape.gguf", QWEN35_9B, weights="zero", matrix_type="Q4_K")
    model = NativeModel(str(path))
    prompt = list(range(1000, 1064))
    batch = list(range(2000, 2001 + drafts))
    n = len(prompt)
    results: dict[str, list[float]] = {}
    clock = [0.0]

    def lap(name: str) -> None:
        """Time since the previous lap, under `name`."""
        now = time.perf_counter()
        results.setdefault(name, []).append(now - clock[0])
        clock[0] = time.perf_counter()

    try:
        for rs in (0, drafts):
            params = ContextParams(
                n_ctx=1024, n_batch=64, n_ubatch=64, n_threads=threads, n_outputs=drafts + 1, n_rs_seq=rs
            )
            ctx = NativeContext(model, params)
            assert ctx.decode(prompt, 0, want_logits=True) == 0
            for _ in range(repeats):
                clock[0] = time.perf_counter()
                if rs:  # snapshots: check, refuse every draft, take them back by removing positions
                    ctx.decode(batch, n, want_logits=True, all_logits=True)
                    lap("snapshots: check a batch")
                    assert ctx.trim(n + 1)
                    lap("snapshots: take back")
                    ctx.decode([batch[0]], n + 1, want_logits=True)
                    lap("one-token decode")
                    ctx.trim(n)
                else:  # checkpoint: copy the recurrent state out, check, copy it back, re-read the kept token
                    state = ctx.get_state(partial=True)
                    lap("checkpoint: copy out")
                    ctx.decode(batch, n, want_logits=True, all_logits=True)
                    lap("checkpoint: check a batch")
                    ctx.set_state(state, partial=True)
                    ctx.trim(n)
                    lap("checkpoint: copy back")
                    ctx.decode(batch[:1], n, want_logits=True)
                    lap("checkpoint: re-read the kept token")
                    ctx.trim(n)
            ctx.close()
    finally:
        model.close()
        path.unlink(missing_ok=True)
    best = {k: min(v) for k, v in results.items()}
    single = best["one-token decode"]
    snap = best["snapshots: check a batch"] + best["snapshots: take back"]
    check = (
        best["checkpoint: copy out"] + best["checkpoint: check a batch"] + best["checkpoint: copy back"]
        + best["checkpoint: re-read the kept token"]
    )  # fmt: skip
    lines = [
        f"Taking back {drafts} refused drafts on a Qwen3.5-9B-shaped hybrid (zero weights, Q4_K, 24 Gated DeltaNet "
        f"layers: {model_state_mib(QWEN35_9B):.0f} MiB of recurrent state per snapshot), best of {repeats}, "
        f"{threads} thread(s); a one-token decode takes {single:.2f} s:",
        "",
        "| step | seconds |",
        "| --- | ---: |",
        *[f"| {k} | {v:.3f} |" for k, v in best.items()],
        f"| **snapshots (n_rs_seq={drafts}), check + take back** | **{snap:.3f}** |",
        f"| **checkpoint copy, check + restore + re-read** | **{check:.3f}** |",
    ]
    return lines


def model_state_mib(shape: object) -> float:
    from inference.gguf_facts import ModelFacts
    from inference.planner import recurrent_state_bytes
    from tests.fixtures.tiny_qwen35 import Qwen35Shape

    assert isinstance(shape, Qwen35Shape)
    facts = ModelFacts(
        path="", size_bytes=0, architecture="qwen35", name="", quantization="", context_length=0,
        block_count=shape.n_layer, embedding_length=shape.n_embd, head_count=shape.n_head,
        head_count_kv=shape.n_head_kv, key_length=shape.head_dim, value_length=shape.head_dim, vocab_size=0,
        chat_template=None, full_attention_interval=shape.full_attention_interval,
        params={"ssm.conv_kernel": shape.ssm_d_conv, "ssm.inner_size": shape.ssm_d_inner,
                "ssm.state_size": shape.ssm_d_state, "ssm.group_count": shape.ssm_n_group},
    )  # fmt: skip
    return recurrent_state_bytes(facts) / 1024**2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="eval,starter", help="eval (Qwen2.5-Coder-1.5B) and/or starter")
    parser.add_argument("--threads", type=threads, default=1, help="llama.cpp threads (1 on a shared 2-core machine)")
    parser.add_argument("--draft-tokens", type=int, default=8)
    parser.add_argument(
        "--rounds", type=int, default=2, help="every request this many times (the pace learns in the first)"
    )
    parser.add_argument("--rollback", action="store_true", help="also measure rollback on a 9B-shaped hybrid")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"the contracts corpus is missing ({CORPUS}); nothing to measure", file=sys.stderr)
        return 1
    load_before = os.getloadavg()
    notes: list[str] = []
    results: dict[str, dict[str, tuple[Tally, Tally]]] = {}
    costs: dict[str, dict[int, float]] = {}
    with tempfile.TemporaryDirectory(prefix="folio-bench-speculative-") as tmp:
        work = Path(tmp)
        for name in args.models.split(","):
            if name == "eval":
                from benchmarks.eval_model import EvalModelMissing, eval_label, eval_model_path

                try:
                    model = eval_model_path()
                except EvalModelMissing as exc:
                    notes.append(f"{eval_label()} not measured: {exc}")
                    continue
                label = eval_label()
            else:
                from app.models.registry import assemble_starter

                model, label = assemble_starter(work / "models"), "Gemma 3 270M Q4_K_M (starter)"
            print(f"[{label}]", flush=True)
            costs[label] = batch_costs(model, args.threads)
            print("  batch costs", {n: round(t / costs[label][1], 2) for n, t in costs[label].items()}, flush=True)
            results[label] = bench_model(label, model, args.threads, args.draft_tokens, work, args.rounds, notes)
        rollback = bench_rollback(work, args.threads) if args.rollback else []
    load_after = os.getloadavg()
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} CPUs shared with other "
        f"work: load average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end (with and without "
        f"drafting take turns request by request, so the load falls on both alike; compare ratios, not speeds). "
        f"{args.threads} llama.cpp thread(s), drafts of up to {args.draft_tokens} tokens, Folio's adaptive pace.",
        "",
        f"Contracts: {', '.join(c.rsplit('.', 1)[0] for c in CONTRACTS)}. Quote-heavy: {len(QUOTES)} questions "
        f'("{QUOTES[0]}" ...), chat sampling (temperature 0.7, top-p 0.8, top-k 20, presence penalty 1.5), up to '
        f"{ANSWER_TOKENS} tokens. Extraction: {len(FIELDS)} contract_review fields, one per request, greedy JSON under "
        f"the schema's grammar. Free-form: {len(SUMMARIES)} requests for summaries in the model's own words.",
        "",
        *table(results),
        "",
        *(cost_lines(costs) if costs else []),
        "",
        *[f"Note: {n}." for n in notes],
        *([""] if notes else []),
        *rollback,
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
