"""A question over a whole matter of contracts: which law governs each, asked once over 30 (issue 31).

The contracts of contracts_tune and contracts_pdf (30, where settings may be chosen) are put in one
matter, and the contracts of contracts_check (20, out of sample) in another, each matter in a library
of its own. One question is asked of each matter as a lawyer would ask it, in the planner's own
context (the documents do not fit together, so Folio answers them one by one, each read whole on top
of its kept state, and merges the answers into a table with a short synthesis): `QUESTION` below.

Graded against CUAD's "Governing Law" labels, document by document, from the reply's table row for
each document (what the user reads):
- *named*: the row names a governing law (not "NOT FOUND", not "not stated");
- *right*: the named law is CUAD's (benchmarks/cuad_compare.matches, as the extraction benchmark
  grades the governing law), so precision = right / named and recall = right / documents CUAD gives a
  governing law; the issue's goal: both at least 80% on tune + pdf;
- *cited on an evidence page*: of the documents named right, the share whose row cites (or whose
  grounding finds its sentence on) a page holding CUAD's evidence; goal at least 90%.

Why "which law governs each" rather than "which are governed by New York law": the per-document rows
of the first grade every place at once, and a "which say X" question is the same rows filtered by X.

Every model answer goes through bench_extraction_quality's answer cache (keyed by the model, the whole
prompt, the answer format and the sampling) and each document's snapshot is shared with that
benchmark's home for its set, so a rerun costs no model time and a stopped run goes on from the
documents done. One llama.cpp thread by default (a shared machine).
Run: .venv/bin/python benchmarks/bench_matter.py [--roles tune,check] [--threads N] [--write]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.results import threads, write_section

HEADING = "## Beyond one context: one question over a matter of contracts (benchmarks/bench_matter.py)"
QUESTION = "Which law governs each of these contracts? Cite the page."
CATEGORY = "Governing Law"
# The matters, out of sample first; each is one library (FTS5 ranks within what a library holds).
ROLES = {"check": ("check",), "tune": ("tune", "pdf")}
GOALS = {"precision": 0.8, "recall": 0.8, "evidence": 0.9}
_ROW_RE = re.compile(r"^\| D(\d+) (.*?) \| (.*) \|$")


@dataclass
class Row:
    contract: Any  # bench_extraction_quality.Contract
    cell: str = ""  # the reply's answer for this document, as the table shows it
    named: bool = False
    right: bool = False
    on_evidence: bool = False


@dataclass
class MatterRun:
    role: str
    rows: list[Row] = field(default_factory=list)
    seconds: float = 0.0  # model time, as each answer was first computed
    asked_now: int = 0  # requests the model answered in this run (the rest came from the answer cache)
    requests: int = 0
    synthesis: str = ""


def states_for(role: str) -> Path:
    """The snapshots of this matter's documents: the extraction benchmark's, one folder per role (a
    file in two sets' folders is hard-linked, not copied)."""
    from benchmarks.bench_extraction_quality import cache_dir

    base = cache_dir().parent
    folder = base / f"bench-states-matter-{role}"
    folder.mkdir(parents=True, exist_ok=True)
    for set_name in ROLES[role]:
        source = base / f"bench-states-{set_name}"
        for item in source.glob("*") if source.is_dir() else ():
            target = folder / item.name
            if not target.exists():
                os.link(item, target)
    return folder


def cited_pages(reply: Any, k: int) -> set[int]:
    """Pages the reply cites for document D`k`, or where its grounding found a sentence of D`k`'s row."""
    from app.citations.grounding import FOUND

    pages = {int(p) for c in reply.citations if c.get("doc_index") == k for p in c.get("pages") or ()}
    pages |= {int(c["page"]) for c in reply.claims if c.get("doc_index") == k and c.get("verdict") in FOUND
              and c.get("page") is not None}  # fmt: skip
    return pages


def grade(contract: Any, cell: str, pages: set[int], page_texts: list[str]) -> Row:
    from app.extraction.plain import says_not_stated
    from app.passes.merge import NOT_FOUND_RE
    from benchmarks.bench_extraction_quality import evidence_on_page, short_correct

    named = bool(cell.strip()) and NOT_FOUND_RE.match(cell) is None and not says_not_stated(cell)
    right = named and short_correct(contract, CATEGORY, True, cell, chat=True)
    on = any(evidence_on_page(page_texts, p, contract.clauses.get(CATEGORY, [])) for p in pages)
    return Row(contract, cell, named, right, right and on)


def _say(role: str) -> Any:
    """Progress lines on stderr: each part's status, and reading a document (no snapshot kept) in tenths."""
    seen: set[tuple[int, int]] = set()

    def say(event: object) -> None:
        text, done, total = getattr(event, "text", ""), getattr(event, "done", 0), getattr(event, "total", 0)
        if text:
            print(f"{role}: {text}", file=sys.stderr, flush=True)
        elif total and (total, done * 10 // total) not in seen:
            seen.add((total, done * 10 // total))
            print(f"{role}: reading {done:,} of {total:,} tokens", file=sys.stderr, flush=True)

    return say


def run_matter(role: str, n_threads: int) -> MatterRun:
    from app.chat import ChatService
    from app.engine.session import Session
    from app.passes.service import LongQuestion
    from app.store.matters import Matters
    from benchmarks.bench_extraction_quality import RecordingEngine, cache_dir, read_contracts
    from benchmarks.eval_model import open_eval_app

    contracts = [c for set_name in ROLES[role] for c in read_contracts(set_name)]
    ctx, sha = open_eval_app(
        cache_dir() / f"matter-{role}",
        f"threads = {n_threads}\nthinking = false\nread_ahead = false\nmax_answer_tokens = 200\nstate_cache_gb = 8\n",
        states=states_for(role),
    )
    store = cache_dir() / sha[:16]
    store.mkdir(parents=True, exist_ok=True)
    engine = RecordingEngine(store, sha, False)
    chat = ChatService(ctx, Session.for_context(ctx, engine))
    run = MatterRun(role)
    try:
        name = f"CUAD {role}"
        matters = Matters(ctx.db)
        if matters.find(name) is None:
            matters.create(name)
        ctx.use_matter(name)
        by_id = {}
        for contract in contracts:
            by_id[ctx.library.add(contract.path).document.id] = contract
        ids = [d for d in matters.document_ids(ctx.matter_id) if d in by_id]
        reply = LongQuestion(chat).ask(ids, QUESTION, strategy="passes", on_event=_say(role))
        run.requests, run.asked_now = len(engine.log), sum(1 for _t, a in engine.log if not a.cached)
        order = chat.conversations.get(reply.conversation_id).document_ids  # the reply's D-numbers
        rows = {int(m.group(1)): m for line in reply.text.splitlines() if (m := _ROW_RE.match(line))}
        cells = {k: m.group(3) for k, m in rows.items()}
        for k, doc_id in enumerate(order, start=1):
            title = " ".join(ctx.library.get(doc_id).title.split()).replace("|", "/")
            if k in rows and rows[k].group(2) != title:  # a row graded against another contract's label
                raise SystemExit(f"bench_matter: row D{k} is {rows[k].group(2)!r}, not {title!r}")
            texts = [ctx.library.page_text(doc_id, n) for n in range(1, ctx.library.get(doc_id).page_count + 1)]
            run.rows.append(grade(by_id[doc_id], cells.get(k, ""), cited_pages(reply, k), texts))
        short = reply.text.split("**In short**", 1)
        run.synthesis = short[1].split("\n\n", 1)[0].strip() if len(short) == 2 else ""
    finally:
        chat.session.close()
        engine.close()
        ctx.close()
    return run


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%} ({part}/{whole})" if whole else "-"


def figures(rows: list[Row]) -> dict[str, tuple[int, int]]:
    truth = [r for r in rows if r.contract.answers.get(CATEGORY, "").strip()]
    right = [r for r in rows if r.right]
    return {
        "precision": (len(right), sum(r.named for r in rows)),
        "recall": (sum(r.right for r in truth), len(truth)),
        "evidence": (sum(r.on_evidence for r in right), len(right)),
    }


def report(runs: list[MatterRun], n_threads: int, load: tuple[float, float]) -> list[str]:
    from benchmarks.eval_model import eval_label

    by = {r.role: r for r in runs}
    roles = [r for r in ROLES if r in by]
    sizes = ", ".join(f"{role} {len(by[role].rows)} contracts ({' + '.join(ROLES[role])})" for role in roles)
    lines = [
        HEADING,
        "",
        f'Question asked of each matter: "{QUESTION}" {eval_label()}, {n_threads} llama.cpp thread(s), the '
        f"planner's own context, {time.strftime('%Y-%m-%d')}, load average {load[0]:.1f} before and {load[1]:.1f} "
        f"after. Matters: {sizes}. Graded from each document's row of the reply against CUAD's "
        f"'{CATEGORY}' label: named = the row names a law; right = CUAD's; cited on an evidence page = of the "
        "rows named right, those citing (or grounded on) a page holding CUAD's evidence.",
        "",
        "| | " + " | ".join(roles) + " | goal (tune) |",
        "| --- | " + " | ".join("---:" for _ in roles) + " | ---: |",
    ]
    got = {role: figures(by[role].rows) for role in roles}
    names = {
        "precision": "documents named right / named (precision)",
        "recall": "named right / CUAD gives one (recall)",
        "evidence": "named right and cited on an evidence page",
    }
    for key, label in names.items():
        cells = " | ".join(_share(*got[role][key]) for role in roles)
        lines.append(f"| {label} | {cells} | >= {GOALS[key]:.0%} |")
    cells = " | ".join(f"{by[role].seconds:.0f} ({by[role].asked_now} of {by[role].requests} asked now)"
                       for role in roles)  # fmt: skip
    lines.append(f"| model seconds (requests) | {cells} | |")
    if "tune" in got:
        verdicts = []
        for key in names:
            part, whole = got["tune"][key]
            met = whole and part / whole >= GOALS[key]
            verdicts.append(f"{key} {'met' if met else 'MISSED'}")
        lines.append(f"- Goals on tune + pdf: {', '.join(verdicts)}.")
    for role in roles:
        wrong = [r for r in by[role].rows if r.named and not r.right]
        missed = [r for r in by[role].rows if not r.named and r.contract.answers.get(CATEGORY, "").strip()]
        for r in wrong + missed:
            lines.append(f"- {role}, {r.contract.path.stem[:40]}: CUAD {r.contract.answers[CATEGORY][:40]!r}; "
                         f"row {r.cell[:120]!r}")  # fmt: skip
        if by[role].synthesis:
            lines.append(f"- {role}, the reply's short answer: {by[role].synthesis[:300]!r}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roles", default=",".join(ROLES), help=f"comma-separated: {', '.join(ROLES)}")
    parser.add_argument("--threads", type=threads, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--write", action="store_true", help="write the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    roles = [r for r in args.roles.split(",") if r]
    if unknown := set(roles) - set(ROLES):
        parser.error(f"unknown roles: {', '.join(sorted(unknown))}")
    load = os.getloadavg()[0]
    runs = [run_matter(role, args.threads) for role in roles]
    lines = report(runs, args.threads, (load, os.getloadavg()[0]))
    print("\n".join(lines))
    if args.write:
        write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
