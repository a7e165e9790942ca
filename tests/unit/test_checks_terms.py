"""Defined terms: where each is defined, its uses, and each problem said only when it is one."""

from __future__ import annotations

from pathlib import Path

from app.checks.outline import outline
from app.checks.terms import (
    CLOSE_MATCH,
    DEFINED_TWICE,
    NEVER_USED,
    NOT_DEFINED,
    OTHER_CASE,
    check_terms,
    find_definitions,
)
from app.checks.text import check_text
from app.compare.versions import Block, Version, version_from_document
from ingest.load import load
from tests.fixtures.check_docs import numbered_contract_docx

OPENING = (
    'This Supply Agreement (this "Agreement") is made between Northwind Traders Ltd (the "Supplier") and Contoso '
    'Retail plc (the "Buyer"). The Supplier and the Buyer sign this Agreement.'
)


def _terms(*paragraphs: str):  # type: ignore[no-untyped-def]
    blocks = tuple(Block(k, None, p) for k, p in enumerate((OPENING, *paragraphs), start=1))
    return check_terms(outline(check_text(Version("t", "t", "paragraph", len(blocks), blocks))))


def _problems(report) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    out: dict[str, set[str]] = {}
    for p in report.problems:
        out.setdefault(p.kind, set()).add(p.term)
    return out


def test_definitions_in_brackets_means_lists_and_the_uses_of_each() -> None:
    report = _terms(
        '0. The Supplier and the Buyer (each a "Party" and together the "Parties") agree as follows.',
        '1. "Confidential Information" means any information marked confidential.',
        "2. Territory: means the United Kingdom.",
        '3. The Supplier shall deliver the goods (the "Goods") to the Buyer within the Territory. Each Party keeps '
        "the other's Confidential Information secret, and the Goods stay the Supplier's until paid.",
        "4. The Parties agree that this Agreement binds each Party and the Buyer's Goods.",
    )
    found = {t.term: t for t in report.terms}
    assert set(found) == {"Agreement", "Supplier", "Buyer", "Party", "Parties", "Confidential Information",
                          "Territory", "Goods"}  # fmt: skip
    assert found["Goods"].uses == 2  # 'the Buyer's Goods' too; its definition is not a use
    assert found["Confidential Information"].uses == 1
    assert found["Party"].uses == found["Parties"].uses == 3  # the plural is a use of the singular and back
    assert found["Territory"].first.place.cited() == "¶ 4"
    assert report.problems == []


def test_a_term_defined_and_never_used() -> None:
    report = _terms('1. "Affiliate" means a company controlled by a Party.', "2. The Supplier sells to the Buyer.")
    assert _problems(report) == {NEVER_USED: {"Affiliate"}}
    [problem] = report.problems
    assert problem.place.cited() == "¶ 2" and "never used" in problem.note


def test_a_term_defined_twice_differently_but_not_a_pointer_or_an_addition() -> None:
    report = _terms(
        '1. "Term" means the period of two years from the date of this Agreement.',
        '2. "Products" has the meaning given in clause 5. "Confidential Information" means trade secrets.',
        '3. The Term may be extended by one year (together with the initial period, the "Term"). Without '
        'limitation, "Confidential Information" includes customer lists.',
        '4. The Supplier supplies the goods listed in the schedule (the "Products") during the Term and keeps '
        "Confidential Information safe. The Products are insured.",
    )
    assert _problems(report) == {DEFINED_TWICE: {"Term"}}
    [problem] = report.problems
    assert problem.place.cited() == "¶ 4" and problem.others[0].cited() == "¶ 2"


def test_a_term_in_the_same_words_twice_is_not_defined_twice() -> None:
    text = '"Goods" means the goods in the schedule.'
    report = _terms(f"1. {text}", f"2. {text}", "3. The Goods are delivered.")
    assert report.problems == []


def test_other_capitalisation_is_reported_and_ordinary_english_is_not() -> None:
    report = _terms(
        '1. "Confidential Information" means information marked confidential.',
        "2. The Buyer keeps Confidential information secret and protects its own confidential information, as it "
        "does all Confidential Information. "
        "Confidential information received from third parties is excluded. CONFIDENTIAL INFORMATION STAYS SECRET.",
    )
    assert _problems(report) == {OTHER_CASE: {"Confidential Information"}}
    [problem] = report.problems
    assert "“Confidential information”" in problem.note


def test_a_slip_in_a_defined_term_is_close_to_it() -> None:
    report = _terms(
        '1. "Acceptance Criteria" means the tests in the schedule.',
        "2. The goods must meet the Acceptance Criteria and the Buyer shall apply the Acceptence Criteria fairly.",
    )
    assert _problems(report) == {CLOSE_MATCH: {"Acceptence Criteria"}}


def test_a_capitalised_phrase_used_as_a_term_that_nothing_defines() -> None:
    report = _terms(
        "1. The Supplier shall meet the Service Levels. Any failure to meet the Service Levels is a breach, and "
        "such Service Levels are reviewed yearly by the Board of Directors in New York.",
        "2. The Buyer shall pay the Service Fee within thirty days.",
    )
    assert _problems(report) == {NOT_DEFINED: {"Service Levels"}}  # Board of Directors, New York: names


def test_mentions_and_headings_are_not_definitions() -> None:
    text = check_text(
        Version("t", "t", "paragraph", 3, (
            Block(1, None, OPENING),
            Block(2, None, 'Electronic Means:\nThe term "Affiliate" shall not include the Buyer. Goods marked '
                           '"confidential" and "AS IS, WITHOUT WARRANTY OF ANY KIND" are excluded.'),
            Block(3, None, 'For this Agreement, the term "Force Majeure Event" shall mean a flood.'),
        ))
    )  # fmt: skip
    terms = {d.term for d in find_definitions(outline(text))}
    assert terms == {"Agreement", "Supplier", "Buyer", "Force Majeure Event"}


def test_the_word_fixture_finds_its_definitions_with_their_clauses(tmp_path: Path) -> None:
    text = check_text(version_from_document(load(numbered_contract_docx(tmp_path / "supply.docx"))))
    report = check_terms(outline(text))
    where = {t.term: t.first.place.cited() for t in report.terms}
    assert where["Products"] == "§ 1.1"
    assert where["Delivery Point"] == "§ 1.2"
    assert where["Effective Date"] == "§ 2.1"
    assert _problems(report) == {NEVER_USED: {"Effective Date"}}
