"""Playbook review against CUAD's expert labels, with the real Qwen2.5-Coder-1.5B (issue 32).

The built-in `commercial_contract` playbook: each rule reads a CUAD category (the field's name is the
category's column in cuad_labels.csv). The verdict CUAD's labels give is decided by the same code as
Folio's (app.playbook.review.judge) on a cell made from the label: the clause there or not ('Yes' /
'No'), the value CUAD's experts wrote (governing law, renewal term). Measured per rule and overall, per
set (the check set first: out of sample, never tuned on): the share of rule x contract verdicts that
agree with CUAD's; how many Folio left to a person; the share of cited clauses on a page holding CUAD's
evidence for the category; and the time per contract.

Sets as in benchmarks/bench_extraction_quality.py: --set tune|check|pdf (comma-separated, or a folder
laid out like them). Each set is read in a new library of its own holding all of the set's contracts,
as bench_extraction_quality's is, and every model answer goes through the same answer cache (keyed by
the model, the whole prompt, the answer format and the sampling): a playbook field is a field of
`contract_review`, asked in the same words over the same library, so a contract that benchmark has
read costs no model time here, and the answers graded are the ones it measured. --cached-only grades
only contracts whose every answer is cached. The time per contract is the model's time when each
answer was first computed (recorded with it), plus the review's own work. One llama.cpp thread by
default (a shared machine). Run: .venv/bin/python benchmarks/bench_playbook.py --set check [--only A,B]
[--cached-only] [--write].
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.extraction.cells import Cell
from app.playbook.review import Finding, judge
from benchmarks.bench_extraction_quality import SETS, Contract, read_contracts
from benchmarks.eval_model import eval_label
from benchmarks.results import threads, write_section

HEADING = "## Playbook review"
PLAYBOOK = "commercial_contract"
# rule, role, agrees with CUAD, left to a person, cited on CUAD's evidence (None: nothing to judge), seconds
Row = tuple[str, str, bool, bool, bool | None, float]


def expected(contract: Contract, rule: object) -> Finding:
    """The verdict CUAD's label gives the rule, decided by Folio's own code on the label."""
    field = rule.field  # type: ignore[attr-defined]
    answer = contract.answers.get(field.name, "")
    if field.yes_no:
        found = answer.lower() == "yes"
        cell = Cell(0, field.key, found, "yes" if found else "no", verdict="quoted" if found else "", yes_no=True)
    else:
        cell = Cell(0, field.key, bool(answer), answer or "not stated", verdict="quoted" if answer else "")
    return judge(rule, cell)  # type: ignore[arg-type]


def on_evidence(page_texts: list[str], finding: Finding, clauses: list[str]) -> bool | None:
    """Whether the finding's cited page holds CUAD's evidence; None when there is nothing to judge (no
    page cited, or CUAD's experts marked no evidence for the category)."""
    from app.citations.quotes import quote_in

    page = finding.page
    if page is None or not clauses:
        return None
    if not 1 <= page <= len(page_texts):
        return False
    return any(len(p) >= 12 and quote_in(p, page_texts[page - 1]) for c in clauses for p in (c[:120], c[-120:]))


def run_set(name: str, only: list[str], n_threads: int, *, cached_only: bool = False) -> tuple[list[Row], list[str]]:
    """(rule, role, agrees, needs a person, cited on evidence, seconds) per rule x contract, and the
    contracts left out (--cached-only: an answer not cached)."""
    from app.engine.session import Session
    from app.playbook.book import PlaybookStore
    from app.playbook.review import PlaybookReviewer
    from benchmarks.bench_extraction_quality import NotCached, RecordingEngine, cache_dir, setup_home

    rows = []
    left_out: list[str] = []
    every = read_contracts(name)
    contracts = [c for c in every if not only or any(o in c.filename for o in only)]
    # A new home each run: a kept one would resume its finished reviews and measure nothing.
    ctx, sha = setup_home(True, name, n_threads)
    home = Path(os.environ["FOLIO_HOME"])
    store = cache_dir() / sha[:16]
    store.mkdir(parents=True, exist_ok=True)
    engine = RecordingEngine(store, sha, False, cached_only=cached_only)
    # Every contract of the set in the library before any is asked, as in bench_extraction_quality: the
    # word search that offers passages ranks over what the library holds.
    docs = {c.filename: ctx.library.add(c.path).document for c in every}
    book = PlaybookStore.for_config(ctx.paths.config_dir).get(PLAYBOOK)
    reviewer = PlaybookReviewer(ctx, Session.for_context(ctx, engine))
    try:
        for contract in contracts:
            doc = docs[contract.filename]
            started, asked = time.monotonic(), len(engine.log)
            try:
                review = reviewer.review(doc.id, book)
            except NotCached:
                print(f"{contract.filename}: skipped, not all of its answers are cached", file=sys.stderr)
                left_out.append(contract.filename)
                continue
            own = time.monotonic() - started - sum(a.seconds for _t, a in engine.log[asked:] if not a.cached)
            seconds = own + sum(a.seconds for _t, a in engine.log[asked:])
            pages: dict[int, list[str]] = defaultdict(list)
            for s in ctx.library.segments(doc.id):
                if s.page is not None:
                    pages[s.page].append(s.text)
            texts = [" ".join(pages[p]) for p in range(1, max(pages, default=0) + 1)]
            for f in review.findings:
                rule = book.rule(f.rule_key)
                want = expected(contract, rule)
                cited = on_evidence(texts, f, contract.clauses.get(rule.field.name, []))
                rows.append((f.rule_key, contract.role, f.verdict == want.verdict, f.verdict == "needs_person",
                             cited, seconds / len(review.findings)))  # fmt: skip
            print(f"{contract.filename}: {seconds:.0f} s", file=sys.stderr)
    finally:
        reviewer.close()
        engine.close()
        ctx.close()
        shutil.rmtree(home, ignore_errors=True)
    return rows, left_out


GOAL = 0.75  # issue 32: verdicts agree with CUAD on at least 75% of rule x contract pairs (check set)


def table(rows: list[Row], n_threads: int, left_out: list[str], cached_only: bool) -> list[str]:
    roles = [r for r in ("check", "tune") if any(row[1] == r for row in rows)]
    rules = list(dict.fromkeys(row[0] for row in rows))
    counts = ", ".join(f"{role} {sum(r[1] == role for r in rows) // max(1, len(rules))}" for role in roles)
    lines = [HEADING, "", f"`commercial_contract` ({len(rules)} rules) with {eval_label()}, {n_threads} llama.cpp "
             f"thread(s), {time.strftime('%Y-%m-%d')}, load average {os.getloadavg()[0]:.1f}. Contracts: {counts}. "
             "A verdict agrees when it is the one Folio's own rule code gives on CUAD's label; 'a person' counts "
             "verdicts left to a person; 'on evidence': of the findings that cite a page where CUAD's experts "
             "marked evidence for the category, those whose page holds it."]  # fmt: skip
    if left_out:
        why = "not all of their answers were cached" if cached_only else "not reviewed"
        lines.append(f"PARTIAL: left out ({why}): {', '.join(left_out)}.")
    lines += ["", "| rule | " + " | ".join(f"agrees ({r}) | a person ({r}) | on evidence ({r})" for r in roles) + " |"]
    lines += ["| --- |" + " ---: | ---: | ---: |" * len(roles)]
    for key in [*rules, "all rules"]:
        cells = []
        for role in roles:
            mine = [r for r in rows if r[1] == role and (key == "all rules" or r[0] == key)]
            n = len(mine) or 1
            agree = f"{sum(r[2] for r in mine) / n:.0%}" + (
                f" ({sum(r[2] for r in mine)}/{len(mine)})" if key == "all rules" else ""
            )
            judged = [r[4] for r in mine if r[4] is not None]
            on = f"{sum(judged)}/{len(judged)}" if judged else "-"
            cells += [agree, f"{sum(r[3] for r in mine) / n:.0%}", on]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    lines.append("")
    for role in roles:
        per_rule = [r[5] for r in rows if r[1] == role]
        lines.append(f"Time per contract ({role}): {sum(per_rule) / max(1, len(per_rule)) * len(rules):.0f} s "
                     "(the model's time when each answer was first computed, plus the review's own).")  # fmt: skip
    check = [r for r in rows if r[1] == "check"]
    if check:
        share = sum(r[2] for r in check) / len(check)
        lines.append(f"Goal (check set, out of sample): agreement >= {GOAL:.0%}: {share:.0%}, "
                     f"{'met' if share >= GOAL else 'MISSED'}{' on a partial set' if left_out else ''}.")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="check,tune", help=f"comma-separated: {', '.join(SETS)} or a folder")
    parser.add_argument("--only", default="", help="parts of contract file names, comma-separated")
    parser.add_argument("--threads", type=threads, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--cached-only", action="store_true", help="grade only contracts whose answers are cached")
    parser.add_argument("--write", action="store_true", help="write the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    only = [o for o in args.only.split(",") if o]
    rows: list[Row] = []
    left_out: list[str] = []
    for name in (n for n in args.set.split(",") if n):
        got, missed = run_set(name, only, args.threads, cached_only=args.cached_only)
        rows += got
        left_out += missed
    lines = table(rows, args.threads, left_out, args.cached_only)
    print("\n".join(lines))
    if args.write:
        write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
