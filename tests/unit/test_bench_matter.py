"""benchmarks/bench_matter.py's grading of one document's row: named, right against CUAD's governing
law, and cited on a page holding CUAD's evidence; the figures made of the rows."""

from __future__ import annotations

from pathlib import Path

from benchmarks.bench_extraction_quality import Contract
from benchmarks.bench_matter import figures, grade

CLAUSE = "This Agreement shall be governed by and construed in accordance with the laws of the State of New York."
PAGES = ["1. Services. The Supplier shall provide the Services.", f"12. Governing Law. {CLAUSE} 13. Notices."]


def _contract(law: str = "New York", clauses: tuple[str, ...] = (CLAUSE,)) -> Contract:
    return Contract("x.pdf", {"Governing Law": law}, {"Governing Law": list(clauses)}, Path("x.pdf"))


def test_a_row_naming_the_law_on_the_clause_page_is_right_and_on_evidence() -> None:
    row = grade(_contract(), "This contract is governed by the laws of the State of New York [p. 2].", {2}, PAGES)
    assert (row.named, row.right, row.on_evidence) == (True, True, True)
    elsewhere = grade(_contract(), "This contract is governed by New York law [p. 1].", {1}, PAGES)
    assert (elsewhere.named, elsewhere.right, elsewhere.on_evidence) == (True, True, False)


def test_a_wrong_law_and_an_abstention_are_told_apart() -> None:
    wrong = grade(_contract(), "Delaware law governs this contract [p. 2].", {2}, PAGES)
    assert (wrong.named, wrong.right, wrong.on_evidence) == (True, False, False)
    for said in ("NOT FOUND", "The document does not specify the governing law.", ""):
        row = grade(_contract(), said, set(), PAGES)
        assert not row.named and not row.right, said


def test_figures_count_recall_over_the_contracts_cuad_gives_a_law() -> None:
    rows = [
        grade(_contract(), "New York law governs [p. 2].", {2}, PAGES),
        grade(_contract(), "Delaware law governs [p. 2].", {2}, PAGES),
        grade(_contract(), "NOT FOUND", set(), PAGES),
        grade(_contract("", ()), "Texas law governs.", set(), PAGES),  # CUAD gives none: named, not right
    ]
    got = figures(rows)
    assert got["precision"] == (1, 3) and got["recall"] == (1, 3) and got["evidence"] == (1, 1)
