"""Playbook review against CUAD's expert labels, with the real Qwen2.5-Coder-1.5B (issue 32).

The built-in `commercial_contract` playbook: each rule reads a CUAD category (the field's name is the
category's column in cuad_labels.csv). The verdict CUAD's labels give is decided by the same code as
Folio's (app.playbook.review.judge) on a cell made from the label: the clause there or not ('Yes' /
'No'), the value CUAD's experts wrote (governing law, renewal term). Measured per rule and overall, per
set (the check set first: out of sample, never tuned on): the share of rule x contract verdicts that
agree with CUAD's; how many Folio left to a person; the share of cited clauses on a page holding CUAD's
evidence for the category; and the time per contract.

Sets as in benchmarks/bench_extraction_quality.py: --set tune|check|pdf (comma-separated, or a folder
laid out like them). Each set is read in a library of its own. One llama.cpp thread by default (a
shared machine). Run: .venv/bin/python benchmarks/bench_playbook.py --set tune [--only A,B] [--write].
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.extraction.cells import Cell
from app.playbook.review import Finding, judge
from benchmarks.bench_extraction_quality import SETS, Contract, read_contracts
from benchmarks.eval_model import eval_label, open_eval_app
from benchmarks.results import threads, write_section

HEADING = "## Playbook review"
PLAYBOOK = "commercial_contract"


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


def on_evidence(page_texts: list[str], finding: Finding, clauses: list[str]) -> bool:
    from app.citations.quotes import quote_in

    page = finding.page
    if page is None or not clauses or not 1 <= page <= len(page_texts):
        return False
    return any(len(p) >= 12 and quote_in(p, page_texts[page - 1]) for c in clauses for p in (c[:120], c[-120:]))


def run_set(name: str, only: list[str], n_threads: int) -> list[tuple[str, str, bool, bool, bool, float]]:
    """(rule, role, agrees, needs a person, cited on evidence, seconds) per rule x contract."""
    from app.playbook.book import PlaybookStore
    from app.playbook.review import PlaybookReviewer

    rows = []
    contracts = [c for c in read_contracts(name) if not only or any(o in c.filename for o in only)]
    with tempfile.TemporaryDirectory(prefix="bench-playbook-") as home:
        ctx, _sha = open_eval_app(Path(home), f"threads = {n_threads}\nread_ahead = false\n")
        book = PlaybookStore.for_config(ctx.paths.config_dir).get(PLAYBOOK)
        reviewer = PlaybookReviewer(ctx)
        try:
            for contract in contracts:
                doc = ctx.library.add(contract.path, limits=ctx.limits).document
                started = time.monotonic()
                review = reviewer.review(doc.id, book)
                seconds = time.monotonic() - started
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
            ctx.close()
    return rows


def table(rows: list[tuple[str, str, bool, bool, bool, float]], n_threads: int) -> list[str]:
    roles = [r for r in ("check", "tune") if any(row[1] == r for row in rows)]
    lines = [HEADING, "", f"`commercial_contract` with {eval_label()}, {n_threads} llama.cpp thread(s).", ""]
    lines += ["| rule | " + " | ".join(f"agrees ({r}) | a person ({r}) | on evidence ({r})" for r in roles) + " |"]
    lines += ["| --- |" + " --- | --- | --- |" * len(roles)]
    keys = [*list(dict.fromkeys(row[0] for row in rows)), "all rules"]
    for key in keys:
        cells = []
        for role in roles:
            mine = [r for r in rows if r[1] == role and (key == "all rules" or r[0] == key)]
            n = len(mine) or 1
            cells += [f"{sum(r[2] for r in mine) / n:.0%}", f"{sum(r[3] for r in mine) / n:.0%}",
                      f"{sum(r[4] for r in mine) / n:.0%}"]  # fmt: skip
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    for role in roles:
        per_rule = [r[5] for r in rows if r[1] == role]
        rules = len({r[0] for r in rows})
        lines.append("")
        lines.append(f"Time per contract ({role}): {sum(per_rule) / max(1, len(per_rule)) * rules:.0f} s.")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="tune", help=f"comma-separated: {', '.join(SETS)} or a folder")
    parser.add_argument("--only", default="", help="parts of contract file names, comma-separated")
    parser.add_argument("--threads", type=threads, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--write", action="store_true", help="write the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    only = [o for o in args.only.split(",") if o]
    rows = [row for name in args.set.split(",") if name for row in run_set(name, only, args.threads)]
    lines = table(rows, args.threads)
    print("\n".join(lines))
    if args.write:
        write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
