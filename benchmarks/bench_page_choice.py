"""Which pages an extraction reads when a contract does not fit the model's context, against the pages
where CUAD's experts found each clause (issue 19). No model: the page choice is a word search.

When a document is longer than the context, the extraction reads only some pages, chosen once for the
whole template (app/extraction/prompt.py `choose_pages`). A field whose evidence is on no page read
cannot be answered, whatever the model. So this measures, per design, how many (contract, CUAD
category) pairs with evidence have at least one evidence page among the pages read:

- word search only (design v6): the first page, then each field's best FTS5 pages in turn;
- opening first (design v7, Folio's): the first pages in order up to a share of the budget
  (`OPENING_SHARE`), then the same word search; the share is also measured at 10%, 20% and 25%.

The ten contracts of ../shared/corpus/contracts_pdf with the 41 fields of the built-in
contract_review template. Only GOOSEHEAD (115 pages, ~75K tokens) is longer than the 1.5B's 32K
context; its budget is 27,500 estimated tokens, the budget that gives exactly the pages the runner
chose for it on the 1.5B (audit log of bench_extraction_quality, 2026-11-27, 9 fields). The other
nine are measured as if the context held 25%, 40% or 60% of each contract. Evidence pages: the pages
holding the first or last 120 characters of one of CUAD's evidence texts for the category
(bench_extraction_quality's rule).

Run: .venv/bin/python benchmarks/bench_page_choice.py [--no-write]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_extraction_quality import Contract, read_contracts, set_folder  # noqa: E402
from benchmarks.results import write_section  # noqa: E402

HEADING = "## Page choice for a contract over the context (issue 19)"
GOOSEHEAD_BUDGET = 27_500  # estimated tokens: the 1.5B's 32K context less the request's own (see above)
SHARES = (0.25, 0.40, 0.60)
OPENINGS = (0.10, 0.15, 0.20, 0.25)
Chooser = Callable[[Any, int, Sequence[Any], int], Any]


def word_search_only(ctx: Any, document_id: int, fields: Sequence[Any], budget_tokens: int) -> Any:
    """Design v6's choice, kept to compare with: the first page, then each field's best pages in turn."""
    from app.extraction import prompt

    saved = prompt.OPENING_SHARE
    prompt.OPENING_SHARE = 0.0
    try:
        return prompt.choose_pages(ctx, document_id, fields, budget_tokens)
    finally:
        prompt.OPENING_SHARE = saved


def opening(share: float) -> Chooser:
    def choose(ctx: Any, document_id: int, fields: Sequence[Any], budget_tokens: int) -> Any:
        from app.extraction import prompt

        saved = prompt.OPENING_SHARE
        prompt.OPENING_SHARE = share
        try:
            return prompt.choose_pages(ctx, document_id, fields, budget_tokens)
        finally:
            prompt.OPENING_SHARE = saved

    return choose


def evidence_pages(ctx: Any, document_id: int, page_count: int, contract: Contract, fields: Sequence[Any]) -> dict:
    """Per template field (name -> (pages holding CUAD's evidence, yes/no)), where CUAD marked any."""
    from app.citations.quotes import quote_in

    texts = {p: ctx.library.page_text(document_id, p) for p in range(1, page_count + 1)}
    out = {}
    for f in fields:
        pieces = [x for c in contract.clauses.get(f.name, []) for x in (c[:120], c[-120:]) if len(x) >= 12]
        pages = {p for p, text in texts.items() if any(quote_in(x, text) for x in pieces)}
        if pages:
            out[f.name] = (pages, f.yes_no)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Pages read from a contract over the context, against CUAD.")
    parser.add_argument("--no-write", action="store_true", help="do not update RESULTS.md")
    args = parser.parse_args(argv)
    if not (set_folder("pdf") / "cuad_labels.csv").exists():
        print(f"bench_page_choice: the CUAD contracts are not at {set_folder('pdf')}", file=sys.stderr)
        return 1
    home = Path(tempfile.mkdtemp(prefix="folio-bench-pages-"))
    os.environ["FOLIO_HOME"] = str(home)
    from app.context import open_app
    from app.extraction.prompt import OPENING_SHARE, choose_pages
    from app.extraction.templates import TemplateStore

    designs: dict[str, Chooser] = {"word search only (v6)": word_search_only}
    designs[f"opening {OPENING_SHARE:.0%} first (v7, Folio's)"] = choose_pages
    designs |= {f"opening {s:.0%} first": opening(s) for s in OPENINGS if s != OPENING_SHARE}
    ctx = open_app()
    try:
        template = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
        subset = [f for f in template.fields if not f.yes_no or f.key == "anti_assignment"]
        docs = []
        for contract in read_contracts():
            doc = ctx.library.add(contract.path).document
            docs.append((contract, doc, evidence_pages(ctx, doc.id, doc.page_count, contract, template.fields)))
        rows: dict[str, list[str]] = {}
        for name, choose in designs.items():
            cells = []
            for share in SHARES:
                got = short = have = have_short = 0
                for _contract, doc, evidence in docs:
                    if doc.token_estimate > 32_768:
                        continue
                    read = set(choose(ctx, doc.id, template.fields, int(doc.token_estimate * share)).pages)
                    got += sum(bool(p & read) for p, _y in evidence.values())
                    short += sum(bool(p & read) for p, y in evidence.values() if not y)
                    have += len(evidence)
                    have_short += sum(not y for _p, y in evidence.values())
                cells.append(f"{got}/{have} ({got / have:.0%}) · {short}/{have_short}")
            contract, doc, evidence = next(d for d in docs if d[1].token_estimate > 32_768)
            for fields in (template.fields, subset):
                choice = choose(ctx, doc.id, fields, GOOSEHEAD_BUDGET)
                read = set(choice.pages)
                got = sum(bool(p & read) for p, _y in evidence.values())
                short = sum(bool(p & read) for p, y in evidence.values() if not y)
                have_short = sum(not y for _p, y in evidence.values())
                missed = sorted(n for n, (p, y) in evidence.items() if not y and not p & read)
                cells.append(
                    f"{len(read)} p.: {got}/{len(evidence)} · {short}/{have_short}"
                    + (f" (no {', '.join(missed)})" if missed else "")
                )
            rows[name] = cells
    finally:
        ctx.close()
        import shutil

        shutil.rmtree(home, ignore_errors=True)
    load = os.getloadavg()[0]
    lines = [
        HEADING,
        "",
        "CUAD categories whose expert evidence stands on a page the extraction reads, when a contract does not fit "
        "the model's context (all categories · the 8 short answers). The nine contracts that fit the 1.5B are "
        "measured as if the context held 25%, 40% or 60% of each; GOOSEHEAD (115 pages) at its real budget for "
        "the 1.5B's 32K context, with the whole contract_review template (41 fields, as a user runs it) and "
        "with the 9 fields bench_extraction_quality asks. No model: the choice is a word search, so the figures "
        f"do not depend on the machine's load ({load:.1f}). `benchmarks/bench_page_choice.py`, "
        f"{time.strftime('%Y-%m-%d')}.",
        "",
        "| design | 9 contracts, 25% fits | 40% fits | 60% fits | GOOSEHEAD, 41 fields | GOOSEHEAD, 9 fields |",
        "| --- | ---: | ---: | ---: | --- | --- |",
        *(f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows.items()),
        "",
        f"The opening share was picked on these same contracts ({', '.join(f'{s:.0%}' for s in OPENINGS)} "
        "measured): the figures for it are in-sample.",
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
