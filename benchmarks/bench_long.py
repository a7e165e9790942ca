"""Questions beyond one context: needles found when a contract is read in passes (issue 31).

A real CUAD contract of the tuning set (contracts_tune, FTENETWORKS: 15 pages, about 9,500 tokens) gets
eight planted facts ("needles"), one sentence each, spread over its pages. Each needle is asked as a
lawyer would ask it, with the real Qwen2.5-Coder-1.5B (benchmarks/eval_model.py; FOLIO_EVAL_GGUF for a
model of your own), three ways, each in a library of its own:

- whole: the contract in one context (the planner's own context; it fits);
- passes: the user's context limit set to CONTEXT_CAP tokens, so it does not fit, and the question is
  read in passes of consecutive pages (`folio ask --strategy passes`, the window's "every page");
- search: the same limit, the pages SQLite's word search ranks highest for the question.

A needle is *found on its page* when a sentence of the answer names it (its key word) and Folio's
grounding marks that sentence found on the page the needle was planted on. The goal (issue 31): with
passes, at least 95% of the needles the whole reading finds on their page are found on their page;
the search reading is reported beside it.

`--set check` plants the same needles in the contract of contracts_check nearest in length (chosen by its
page count alone) and reports it in a section of its own: out of sample, never tuned on.

Every model answer goes through bench_extraction_quality's answer cache (keyed by the model, the whole
prompt, the answer format and the sampling), so a rerun costs no model time and reports the time each
answer first took. One llama.cpp thread by default (a shared machine).
Run: .venv/bin/python benchmarks/bench_long.py [--set tune|check] [--threads N] [--readings whole,passes,search]
[--write]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.results import threads, write_section

HEADING = "## Beyond one context: needles read in passes (benchmarks/bench_long.py)"
CHECK_HEADING = "## Beyond one context: needles in a check contract (benchmarks/bench_long.py --set check)"
CONTRACT = "FTENETWORKS"  # the tuning contract the needles and the passes' wording were tried on
CONTEXT_CAP = 4096  # tokens: a quarter of a window or so of the contract per pass
READINGS = ("whole", "passes", "search")
GOAL = 0.95


@dataclass(frozen=True)
class Needle:
    sentence: str
    question: str
    key: str  # the word an answer that found it names (case does not matter)
    at: float  # where in the contract: the page at this share of its pages


# Facts no CUAD contract holds (made-up names and numbers), each asked in a lawyer's words.
NEEDLES = (
    Needle(
        "The Parties appoint Halvorsen Escrow Services of Bergen, Norway, as escrow agent for the Source Materials.",
        "Who is appointed as escrow agent for the Source Materials?",
        "Halvorsen",
        0.05,
    ),
    Needle(
        "Every notice to either Party shall also be copied to Ms. Priyanka Ostrowski-Vale, outside counsel.",
        "To whom must every notice to a party also be copied?",
        "Ostrowski",
        0.18,
    ),
    Needle(
        "The service credit for each full hour of unplanned downtime is four hundred seventeen dollars ($417).",
        "What is the service credit for each hour of unplanned downtime?",
        "417",
        0.3,
    ),
    Needle(
        "The Parties shall hold their annual compliance meeting in Tallinn, Estonia, each March.",
        "Where do the parties hold their annual compliance meeting?",
        "Tallinn",
        0.42,
    ),
    Needle(
        "Any shipment to the Falkland Islands requires the prior written approval of the Logistics Committee.",
        "Which shipments require the prior written approval of the Logistics Committee?",
        "Falkland",
        0.55,
    ),
    Needle(
        "The project code name for the work under this Agreement is BLUE HERON.",
        "What is the project code name for the work under this agreement?",
        "Heron",
        0.67,
    ),
    Needle(
        "The quarterly rebate rate is 3.75 percent of the net purchases of the quarter.",
        "What is the quarterly rebate rate?",
        "3.75",
        0.8,
    ),
    Needle(
        "The data protection officer responsible for this Agreement is Dr. Emeka Vanterpool.",
        "Who is the data protection officer responsible for this agreement?",
        "Vanterpool",
        0.95,
    ),
)


@dataclass
class Outcome:
    reading: str
    answered: dict[str, bool] = field(default_factory=dict)  # needle key -> the answer names it
    on_page: dict[str, bool] = field(default_factory=dict)  # needle key -> found on its page
    seconds: float = 0.0  # model time, as each answer was first computed
    notes: list[str] = field(default_factory=list)


def planted(source: Path, out: Path) -> tuple[Path, dict[str, int]]:
    """The contract with each needle written in the bottom margin of its page: (file, key -> page; '' ->
    the page count)."""
    import pymupdf

    doc = pymupdf.open(source)
    pages: dict[str, int] = {}
    for needle in NEEDLES:
        index = min(doc.page_count - 1, int(needle.at * doc.page_count))
        page = doc[index]
        box = pymupdf.Rect(54, page.rect.height - 64, page.rect.width - 54, page.rect.height - 14)
        if page.insert_textbox(box, needle.sentence, fontsize=9, fontname="helv") < 0:
            raise SystemExit(f"bench_long: the needle does not fit page {index + 1}'s margin")
        pages[needle.key] = index + 1
    pages[""] = doc.page_count  # the contract's length, for the report
    doc.save(out)
    doc.close()
    return out, pages


def on_its_page(claims: list[dict[str, Any]], key: str, page: int) -> tuple[bool, bool]:
    """(a sentence names the needle, one such sentence is found on its page)."""
    from app.citations.grounding import FOUND

    naming = [c for c in claims if key.lower() in str(c.get("text", "")).lower()]
    return bool(naming), any(c.get("verdict") in FOUND and c.get("page") == page for c in naming)


def run_reading(reading: str, pdf: Path, pages: dict[str, int], n_threads: int, work: Path) -> Outcome:
    from app.chat import ChatService
    from app.engine.session import Session
    from app.passes.service import LongQuestion
    from benchmarks.bench_extraction_quality import RecordingEngine, cache_dir
    from benchmarks.eval_model import open_eval_app

    cap = 0 if reading == "whole" else CONTEXT_CAP
    home = work / f"home-{reading}"
    ctx, sha = open_eval_app(
        home,
        f"threads = {n_threads}\nthinking = false\nread_ahead = false\nmax_answer_tokens = 200\ncontext_cap = {cap}\n",
        states=cache_dir().parent / "bench-states-long",
    )
    store = cache_dir() / sha[:16]
    store.mkdir(parents=True, exist_ok=True)
    engine = RecordingEngine(store, sha, False)
    chat = ChatService(ctx, Session.for_context(ctx, engine))
    outcome = Outcome(reading)
    try:
        doc = ctx.library.add(pdf).document
        for needle in NEEDLES:
            asked = len(engine.log)
            row = LongQuestion(chat).ask([doc.id], needle.question, strategy=None if reading == "whole" else reading)
            outcome.seconds += sum(a.seconds for _t, a in engine.log[asked:])
            named, found = on_its_page(row.claims, needle.key, pages[needle.key])
            outcome.answered[needle.key], outcome.on_page[needle.key] = named, found
            mark = "found on its page" if found else "named, not on its page" if named else "not named"
            print(f"{reading}: {needle.key} (p. {pages[needle.key]}): {mark}", file=sys.stderr, flush=True)
            if not found:
                outcome.notes.append(f"{needle.key}: {row.text[:160]!r}")
    finally:
        chat.session.close()
        engine.close()
        ctx.close()
    return outcome


def check_contract(folder: Path, like: Path) -> Path:
    """The check contract for the out-of-sample run, chosen by length alone (nothing else is looked at):
    the one whose page count is nearest that of `like` (the tuning contract), the first by name on a tie."""
    import pymupdf

    def count(path: Path) -> int:
        with pymupdf.open(path) as doc:
            return int(doc.page_count)

    pages = count(like)
    pdfs = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".pdf")
    return min(pdfs, key=lambda p: (abs(count(p) - pages), p.name))


def report(
    outcomes: list[Outcome],
    pages: dict[str, int],
    n_threads: int,
    load: tuple[float, float],
    source: tuple[str, str] = (CONTRACT, "contracts_tune"),
) -> list[str]:
    from benchmarks.eval_model import eval_label

    name, folder = source
    lines = [
        HEADING if folder == "contracts_tune" else CHECK_HEADING,
        "",
        f"{name} ({folder}, {pages['']} pages) with {len(NEEDLES)} planted facts on pages "
        f"{', '.join(str(pages[n.key]) for n in NEEDLES)}; {eval_label()}, {n_threads} llama.cpp thread(s), "
        f"{time.strftime('%Y-%m-%d')}, load average {load[0]:.1f} before and {load[1]:.1f} after. 'passes' and "
        f"'search' ran with the context limit at {CONTEXT_CAP:,} tokens (the contract does not fit); 'whole' in the "
        "planner's own context. Found on its page: a sentence of the answer names the fact and Folio's grounding "
        "marks it found on the page the fact was planted on.",
        "",
        "| reading | needles named | found on its page | model seconds |",
        "| --- | ---: | ---: | ---: |",
    ]
    for o in outcomes:
        n = len(o.answered)
        lines.append(
            f"| {o.reading} | {sum(o.answered.values())}/{n} | {sum(o.on_page.values())}/{n} | {o.seconds:.0f} |"
        )
    by = {o.reading: o for o in outcomes}
    if "whole" in by:
        found_whole = [k for k, v in by["whole"].on_page.items() if v]
        for reading in ("passes", "search"):
            if reading in by and found_whole:
                kept = sum(by[reading].on_page.get(k, False) for k in found_whole)
                share = kept / len(found_whole)
                goal = f" (goal >= {GOAL:.0%}: {'met' if share >= GOAL else 'MISSED'})" if reading == "passes" else ""
                lines.append(
                    f"- {reading}: {kept}/{len(found_whole)} ({share:.0%}) of the needles the whole reading "
                    f"found on their page{goal}."
                )
    for o in outcomes:
        for note in o.notes:
            lines.append(f"- {o.reading}, not found on its page: {note}")
    return lines


def main(argv: list[str] | None = None) -> int:
    from benchmarks.bench_extraction_quality import set_folder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=threads, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--readings", default=",".join(READINGS), help=f"comma-separated: {', '.join(READINGS)}")
    parser.add_argument("--set", choices=("tune", "check"), default="tune", help="check: needles in a check contract")
    parser.add_argument("--write", action="store_true", help="write the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    readings = [r for r in args.readings.split(",") if r]
    if unknown := set(readings) - set(READINGS):
        parser.error(f"unknown readings: {', '.join(sorted(unknown))}")
    folder = set_folder("tune")
    source = next((p for p in sorted(folder.glob("*")) if CONTRACT in p.name and p.suffix.lower() == ".pdf"), None)
    if source is None:
        print(f"bench_long: no {CONTRACT} contract in {folder}", file=sys.stderr)
        return 1
    if args.set == "check":  # out of sample: reported, never tuned on
        folder = set_folder("check")
        source = check_contract(folder, source)
    # The same file name every run: the document's title is part of the prompt, so of the cache key.
    name = CONTRACT if args.set == "tune" else re.split(r"[ _,]", source.stem)[0]
    load = os.getloadavg()[0]
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-long-{os.getpid()}"
    work.mkdir(parents=True)
    try:
        pdf, pages = planted(source, work / f"{name} - with planted facts.pdf")
        outcomes = [run_reading(r, pdf, pages, args.threads, work) for r in readings]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = report(outcomes, pages, args.threads, (load, os.getloadavg()[0]), (name, folder.name))
    print("\n".join(lines))
    if args.write:
        write_section(lines[0], lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
