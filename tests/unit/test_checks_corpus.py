"""The checks on the real contracts of ../shared/corpus: the hand-labelled sample still describes what they
report (tests/labels/), its problems are at least 90% right, and every key date says how it was computed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS

pytestmark = pytest.mark.skipif(
    not (CORPUS / "contracts_tune").is_dir(), reason="the real-world corpus (../shared/corpus) is absent"
)


@pytest.fixture(scope="module")
def tune_rows() -> list[dict[str, str]]:
    from benchmarks.bench_checks import finding_rows, run_set

    return finding_rows(run_set("tune", 1))


def test_the_labelled_sample_is_what_the_checks_report(tune_rows: list[dict[str, str]]) -> None:
    from benchmarks.bench_checks import _key, precision, read_labels

    labels = read_labels()
    assert len(labels) == 100
    now = {_key(r) for r in tune_rows}
    gone = [(r["contract"], r["kind"], r["status"], r["text"]) for r in labels if _key(r) not in now]
    assert gone == [], "the rules changed: run benchmarks/bench_checks.py --sample and label the new findings"
    result = precision(labels, tune_rows)
    assert result.unlabelled == 0 and result.new_problems == 0
    assert result.problems >= 40 and result.problems_right / result.problems >= 0.9


def test_every_key_date_says_how_it_was_computed(tune_rows: list[dict[str, str]]) -> None:
    dates = [r for r in tune_rows if r["kind"] in ("expiry", "renewal", "notice deadline")]
    assert len(dates) >= 20
    assert all(":" in r["note"] and r["note"].split(":", 1)[1].strip() for r in dates)


def test_a_real_broken_reference_and_a_real_double_definition_are_found() -> None:
    from app.checks.report import run_checks
    from app.checks.text import check_text
    from app.compare.versions import version_from_document
    from ingest.load import load

    path = next(Path(CORPUS, "contracts_tune").glob("XYBERNAUT*.PDF"))
    report = run_checks(check_text(version_from_document(load(path))))
    problems = {(f.status, f.text, f.cited) for f in report.problems}
    # Clause 11 (Indemnification) refers to 'Section 12(c)', its own (c); clause 12 has no items.
    assert ("item_missing", "Section 12(c)", "p. 7") in problems
    # Clauses 10 and 11 both define "AJR Event of Default"; the second lists XC's defaults.
    assert ("defined_twice", "AJR Event of Default", "p. 6") in problems
