"""How many of the 20 edits the model's summary mentions, with the real Qwen2.5-Coder-1.5B (make eval).

The same two versions as benchmarks/bench_compare.py (GOOSEHEAD's 115-page franchise agreement and a
copy with 20 one-word edits, made with PyMuPDF) are added to a throw-away library; `summarise`
(app/compare/summary.py) writes the summary as `folio compare --summary` does. The two versions
(about 60K tokens each) do not fit the model's 32K context, so this measures the clause-by-clause
path: one request per change group, from the pages its changes are on.

Counted for the 20 edits, side by side:
- mentioned by Folio's rule (app/compare/mentions.py): a sentence cites the edit's page in either
  version and names its changed word;
- baseline: the edit's changed word appears anywhere in the summary (no page, no sentence).
Also the verdicts of the summary's sentences, and the time taken.

Run: make eval (or .venv/bin/python benchmarks/bench_compare_summary.py after it)
"""

from __future__ import annotations

import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_compare import CONTRACT, CORPUS, EDITS, make_edits  # noqa: E402
from benchmarks.eval_model import open_eval_app  # noqa: E402
from benchmarks.results import write_section  # noqa: E402
from tests.fixtures.contract_versions import pdf_blocks, rewrite_blocks  # noqa: E402

HEADING = "## Compare: the model's summary of 20 edits (benchmarks/bench_compare_summary.py)"
ANSWER_TOKENS = 256


def main() -> int:
    if not CONTRACT.exists():
        print(f"skipped: the CUAD corpus is not at {CORPUS}")
        return 0
    from app.compare.mentions import change_terms, terms_of
    from app.compare.redline import compare
    from app.compare.summary import summarise
    from app.compare.versions import version_from_library
    from app.engine.progress import Progress
    from app.engine.session import Session
    from ingest.load import load

    folder = Path(tempfile.mkdtemp(prefix="folio-bench-compare-summary-"))
    ctx, _sha = open_eval_app(folder / "home", f"max_answer_tokens = {ANSWER_TOKENS}\nthinking = false\nthreads = 1\n")
    original = load(CONTRACT)
    table_pages = {s.anchor.page for s in original.segments if s.role == "table" and s.anchor.page}
    new_text, expected = make_edits(pdf_blocks(CONTRACT), table_pages)
    edited = folder / "goosehead-v2.pdf"
    rewrite_blocks(CONTRACT, edited, new_text)
    old_id, new_id = (ctx.library.add(p).document.id for p in (CONTRACT, edited))
    redline = compare(version_from_library(ctx, old_id), version_from_library(ctx, new_id))
    edits = [k for k, c in enumerate(redline.changes) if (c.old_words, c.new_words) in expected]
    session = Session.for_context(ctx)

    def show(p: Progress) -> None:
        if not p.reading:
            print(f"... {p.text}", file=sys.stderr, flush=True)

    start = time.perf_counter()
    try:
        written = summarise(ctx, session, redline, old_id, new_id, on_progress=show)
    finally:
        session.close()
    seconds = time.perf_counter() - start
    text = "\n".join(p.text for p in written.parts)
    anywhere = {k for k in edits if change_terms(redline.changes[k]) & terms_of(text)}
    ruled = {k for k in edits if k in written.mentioned}
    verdicts = Counter(str(c["verdict"]) for p in written.parts for c in p.claims)
    ctx.close()
    lines = [
        f"GOOSEHEAD franchise agreement (CUAD, 115 pages) against a copy with {EDITS} one-word edits (as in "
        f"*Compare: redline* above); Qwen2.5-Coder-1.5B-Instruct Q4_K_M, at most {ANSWER_TOKENS} tokens an answer, "
        f"{platform.machine()} shared machine, {time.strftime('%Y-%m-%d')}. {written.note or 'Read at once.'}",
        "",
        "| what counts as mentioned | edits mentioned | share |",
        "| --- | ---: | ---: |",
        f"| Folio's rule: a sentence cites the edit's page (either version) and names its word "
        f"| {len(ruled)}/{len(edits)} "
        f"| {len(ruled) / max(len(edits), 1):.0%} |",
        f"| baseline: the edit's word anywhere in the summary | {len(anywhere)}/{len(edits)} "
        f"| {len(anywhere) / max(len(edits), 1):.0%} |",
        "",
        f"The redline found {len(edits)}/{EDITS} edits ({len(redline.changes)} changes in all); the rest of the "
        f"changes are listed under Other changes, so none is hidden. Summary: {len(written.parts)} answers, "
        f"{seconds / 60:.1f} min; its sentences' verdicts: "
        + (", ".join(f"{n} {v}" for v, n in verdicts.most_common()) or "none")
        + ".",
    ]
    print("\n".join(lines))
    write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
