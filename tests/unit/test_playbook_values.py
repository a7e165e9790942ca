"""Value rules are decided by code on the value the model read: durations in words and figures, amounts
with their currencies, places by their usual spellings. Never by the model's arithmetic."""

from __future__ import annotations

import pytest

from app.playbook.values import (
    AMOUNT,
    DURATION,
    FALLBACK,
    MET,
    NEEDS_PERSON,
    NOT_MET,
    PLACE,
    TEXT,
    choose_value,
    compare_value,
    threshold,
)


@pytest.mark.parametrize(
    ("value", "verdict"),
    [
        ("twelve (12) months", MET),
        ("one (1) year", MET),
        ("successive one-year terms", MET),
        ("an additional year", MET),
        ("365 days", MET),  # a year in days is a year
        ("six (6) months", MET),
        ("eighteen months", FALLBACK),
        ("two (2) years", FALLBACK),
        ("twenty-four (24) months", FALLBACK),
        ("three years", NOT_MET),
        ("thirty-six months", NOT_MET),
    ],
)
def test_durations_at_most_in_words_and_figures(value: str, verdict: str) -> None:
    outcome = compare_value(value, DURATION, at_least=False, acceptable="12 months", fallback="2 years")
    assert outcome.verdict == verdict, outcome


def test_a_duration_at_least_counts_the_line_itself() -> None:
    assert compare_value("twelve (12) months", DURATION, at_least=True, acceptable="12 months").verdict == MET
    low = compare_value("eleven (11) months", DURATION, at_least=True, acceptable="one year")
    assert low.verdict == NOT_MET and low.read == "11 months" and "not at least 12 months" in low.reason


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("30 days", "too close"),  # one month in days: within a few days of the line, another unit
        ("the term of the Agreement", "cannot read"),
        ("one year, then two years", "more than one"),
    ],
)
def test_durations_a_person_decides(value: str, why: str) -> None:
    outcome = compare_value(value, DURATION, at_least=True, acceptable="1 month")
    assert outcome.verdict == NEEDS_PERSON and why in outcome.reason


@pytest.mark.parametrize(
    ("value", "verdict"),
    [
        ("USD 1,000,000", MET),
        ("$1,000,000", MET),
        ("one million dollars", MET),
        ("US$ 2.5 million", MET),
        ("$750,000", FALLBACK),
        ("five hundred thousand dollars ($500,000)", FALLBACK),
        ("$100,000", NOT_MET),
    ],
)
def test_amounts_with_currencies(value: str, verdict: str) -> None:
    outcome = compare_value(value, AMOUNT, at_least=True, acceptable="USD 1,000,000", fallback="$500,000")
    assert outcome.verdict == verdict, outcome


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("EUR 2,000,000", "is in EUR"),  # no currency conversion: a person decides
        ("1,000,000", "states no currency"),
        ("the fees paid in the twelve months before the claim", "cannot read"),
    ],
)
def test_amounts_a_person_decides(value: str, why: str) -> None:
    outcome = compare_value(value, AMOUNT, at_least=True, acceptable="USD 1,000,000")
    assert outcome.verdict == NEEDS_PERSON and why in outcome.reason


def test_between_the_fallback_and_the_unacceptable_line_a_person_decides() -> None:
    def verdict(value: str) -> str:
        return compare_value(
            value, DURATION, at_least=False, acceptable="12 months", fallback="24 months", unacceptable="36 months"
        ).verdict

    assert [verdict(v) for v in ("1 year", "2 years", "30 months", "3 years", "5 years")] == [
        MET, FALLBACK, NEEDS_PERSON, NOT_MET, NOT_MET,
    ]  # fmt: skip


def test_thresholds_read_one_quantity_and_amounts_need_a_currency() -> None:
    assert threshold("twelve (12) months", DURATION) is not None
    assert threshold("12 months or 24 months", DURATION) is None
    assert threshold("1,000,000", AMOUNT) is None
    assert threshold("GBP 2m", AMOUNT) is not None


PLACES = {"acceptable": ("New York", "Delaware", "England"), "fallback": ("California",)}


@pytest.mark.parametrize(
    ("value", "verdict", "read"),
    [
        ("the laws of the State of New York", MET, "New York"),
        ("New York State", MET, "New York"),
        ("N.Y.", MET, "New York"),
        ("NY", MET, "New York"),
        ("DELAWARE", MET, "Delaware"),
        ("England and Wales", MET, "England"),
        ("English law", MET, "England"),
        ("England, United Kingdom; Wales, United Kingdom", MET, "England"),  # CUAD's wording: one legal system
        ("the laws of California, without regard to conflicts of law", FALLBACK, "California"),
        ("Texas", NOT_MET, "Texas"),
        ("New Jersey", NOT_MET, "New Jersey"),  # not 'New York' by half a name
        ("West Virginia", NOT_MET, "West Virginia"),
    ],
)
def test_places_one_of_in_their_spellings(value: str, verdict: str, read: str) -> None:
    outcome = choose_value(value, PLACE, **PLACES)
    assert (outcome.verdict, outcome.read) == (verdict, read), outcome


@pytest.mark.parametrize("value", ["Delaware or Texas", "Delaware, Illinois", "the law of the land", "Ontario"])
def test_places_a_person_decides(value: str) -> None:
    assert choose_value(value, PLACE, **PLACES).verdict == NEEDS_PERSON


def test_words_are_matched_as_written_and_an_unacceptable_list_leaves_the_rest_to_a_person() -> None:
    assert choose_value("Arbitration (ICC)", TEXT, acceptable=("arbitration",)).verdict == MET
    assert choose_value("the courts", TEXT, acceptable=("arbitration",)).verdict == NEEDS_PERSON
    listed = {"acceptable": ("Delaware",), "unacceptable": ("Texas",)}
    assert choose_value("Texas", PLACE, **listed).verdict == NOT_MET
    assert choose_value("Ohio", PLACE, **listed).verdict == NEEDS_PERSON
