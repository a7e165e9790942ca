"""The 33 yes/no clauses of contract_review on one contract: scored decisions against generated ones (issue 29).

Issue 29's speed goal: scoring a yes/no clause costs one short forward pass, not a generated answer, so
the 33 yes/no fields of `contract_review` on a 10-page contract take at most a quarter of the time of
the design before it, whose generated answers decide (the path a model server without probabilities
still takes). Both designs run here in one process, one after the other, on the same engine, with the
real Qwen2.5-Coder-1.5B (benchmarks/eval_model.py; FOLIO_EVAL_GGUF for a model of your own), on a
tuning-set contract (contracts_tune, CORALGOLD: 11 pages, about 7,400 tokens) in a library holding
the whole tuning set (the word search that offers passages ranks over what the library holds).
Nothing is cached between runs: the document is read once first (as `folio read` does), and then
every answer of both designs is computed; the times are wall seconds of each run.
Run: .venv/bin/python benchmarks/bench_scoring_speed.py [--threads N] [--write]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.results import threads, write_section

HEADING = "## Extraction speed: scored against generated yes/no decisions (benchmarks/bench_scoring_speed.py)"
CONTRACT = "CORALGOLD"
GOAL = 0.25  # the scored design's time against the generated design's, at most


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=threads, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--write", action="store_true", help="write the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)

    from benchmarks.bench_extraction_quality import read_contracts
    from benchmarks.eval_model import eval_label, open_eval_app

    contracts = read_contracts("tune")
    mine = next((c for c in contracts if CONTRACT in c.filename), None)
    if mine is None:
        print(f"bench_scoring_speed: no {CONTRACT} contract in the tuning set", file=sys.stderr)
        return 1
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-scoring-speed-") as home:
        ctx, _sha = open_eval_app(
            Path(home), f"threads = {args.threads}\nthinking = false\nread_ahead = false\nstate_cache_gb = 8\n"
        )
        from app.engine.session import Session
        from app.extraction.runner import ExtractionService
        from app.extraction.templates import TemplateStore
        from app.reading import read_document

        session = Session.for_context(ctx)
        try:
            docs = {c.filename: ctx.library.add(c.path).document for c in contracts}
            doc = docs[mine.filename]
            started = time.monotonic()
            read_document(ctx, session, doc.id, lambda _p: None)
            read_s = time.monotonic() - started
            print(f"{doc.title}: read in {read_s:.0f} s", file=sys.stderr, flush=True)
            full = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
            template = replace(full, fields=tuple(f for f in full.fields if f.yes_no))
            rows = []
            for design, scoring in (("generated (the design before issue 29)", False), ("scored", True)):
                service = ExtractionService(ctx, session, scoring=scoring)
                run_id = service.start_run(template, [doc.id], resume=False)
                started = time.monotonic()
                service.run(run_id, [doc.id])
                seconds = time.monotonic() - started
                table = service.table(run_id)
                present = sum(bool(c and c.found) for f in template.fields if (c := table.cell(doc.id, f.key)))
                rows.append((design, seconds, present))
                print(f"{design}: {seconds:.0f} s, {present} present", file=sys.stderr, flush=True)
        finally:
            session.close()
            ctx.close()
    load_after = os.getloadavg()[0]
    generated_s, scored_s = rows[0][1], rows[1][1]
    share = scored_s / generated_s
    lines = [
        HEADING,
        "",
        f"{doc.title} ({doc.page_count} pages, ~{doc.token_estimate:,} tokens, contracts_tune), the "
        f"{len(template.fields)} yes/no clauses of contract_review, {eval_label()}, {args.threads} llama.cpp "
        f"thread(s), {time.strftime('%Y-%m-%d')}, load average {load_before:.1f} before and {load_after:.1f} after. "
        f"The document was read once first ({read_s:.0f} s, not counted); then each design ran in full, no answer "
        "cached.",
        "",
        "| design | wall seconds | per clause | said present | against generated |",
        "| --- | ---: | ---: | ---: | ---: |",
        *(f"| {d} | {s:.0f} | {s / len(template.fields):.1f} | {p} | {s / generated_s:.2f}x |" for d, s, p in rows),
        "",
        f"Goal: the scored design at most {GOAL:.2f}x the generated one's time: {share:.2f}x, "
        f"{'met' if share <= GOAL else 'MISSED'}.",
    ]
    print("\n".join(lines))
    if args.write:
        write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
