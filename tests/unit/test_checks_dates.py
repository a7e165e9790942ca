"""Key dates: inputs read from a contract's sentences, the arithmetic, and saying so instead of guessing."""

from __future__ import annotations

from datetime import date

import pytest

from app.checks.dates import (
    AGREEMENT_DATE,
    EFFECTIVE_DATE,
    END_DATE,
    EXPIRY,
    NOTICE,
    NOTICE_PERIOD,
    RENEWAL,
    RENEWAL_TERM,
    TERM,
    KeyInput,
    add,
    key_dates,
    parse_date_value,
    parse_duration_value,
    subtract,
)
from app.checks.outline import outline
from app.checks.text import check_text
from app.compare.versions import Block, Version


def _dates(*paragraphs: str, table: dict[str, KeyInput] | None = None):  # type: ignore[no-untyped-def]
    blocks = tuple(Block(1 + k // 3, str(1 + k // 3), p) for k, p in enumerate(paragraphs))
    return key_dates(outline(check_text(Version("t", "t", "page", blocks[-1].page, blocks))), table)


def _shown(result) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {i.name: i.shown for i in result.inputs}


@pytest.mark.parametrize(
    ("start", "duration", "times", "end"),
    [
        (date(2024, 1, 31), (1, "month"), 1, date(2024, 2, 29)),  # a month from 31 January: the month's last day
        (date(2023, 1, 31), (1, "month"), 1, date(2023, 2, 28)),
        (date(2024, 2, 29), (12, "month"), 1, date(2025, 2, 28)),
        (date(1998, 3, 1), (12, "month"), 2, date(2000, 3, 1)),
        (date(2024, 3, 1), (30, "day"), 1, date(2024, 3, 31)),
    ],
)
def test_adding_months_and_days(start: date, duration: tuple[int, str], times: int, end: date) -> None:
    assert add(start, duration, times) == end


def test_subtracting_a_notice_period() -> None:
    assert subtract(date(2025, 3, 1), (90, "day")) == date(2024, 12, 1)
    assert subtract(date(2025, 3, 31), (1, "month")) == date(2025, 2, 28)


def test_a_term_renewals_and_notice_deadlines_each_say_how() -> None:
    result = _dates(
        'THIS AGREEMENT is made and entered into as of March 1, 1998 (the "Effective Date") by Acme Inc. and Beta LLC.',
        "1. Term. This Agreement shall commence on the Effective Date and continue for a period of twelve (12) months.",
        "2. Renewal. This Agreement shall automatically renew for successive one (1) year terms unless either party "
        "gives written notice of non-renewal at least thirty (30) days prior to the expiration of the then-current "
        "term.",
    )
    assert _shown(result) == {AGREEMENT_DATE: "", EFFECTIVE_DATE: "1 March 1998", END_DATE: "", TERM: "1 year",
                              RENEWAL_TERM: "1 year", NOTICE_PERIOD: "30 days"}  # fmt: skip
    by_kind: dict[str, list[tuple[date, str]]] = {}
    for d in result.dates:
        by_kind.setdefault(d.kind, []).append((d.when, d.how))
    assert by_kind[EXPIRY] == [(date(1999, 3, 1), "effective 1 March 1998 + 1 year")]
    assert [w for w, _ in by_kind[RENEWAL]] == [date(2000, 3, 1), date(2001, 3, 1), date(2002, 3, 1)]
    assert by_kind[NOTICE][0] == (date(1999, 1, 30), "end of the initial term 1 March 1999 − 30 days notice")
    assert all(d.place is not None for d in result.dates)  # each rests on a cited sentence
    assert result.input(TERM).place.cited() == "p. 1"  # type: ignore[union-attr]


def test_a_stated_end_date_wins_and_renewal_by_agreement_computes_no_renewal() -> None:
    result = _dates(
        "This Agreement is dated as of 1 July 2017 between Heritage Ltd and Premier Inc.",
        "The term of this Agreement will commence on July 1, 2017 and will continue through December 31, 2022. "
        "The term may be renewed for one (1) year by mutual written agreement of the parties.",
    )
    assert [(d.kind, d.when) for d in result.dates] == [(EXPIRY, date(2022, 12, 31))]
    assert "31 December 2022" in result.dates[0].how
    assert any("agreement" in n for n in result.notes)


def test_a_missing_or_twice_stated_input_is_said_and_nothing_is_guessed() -> None:
    named = _dates(
        "THIS AGREEMENT is dated 2 February 2020 and is effective on the Effective Date.",
        "1. The term of this Agreement is two (2) years from the Effective Date.",
    )
    assert named.dates == []  # the effective date is named, never given: not counted from the agreement date
    assert "effective date is named" in named.notes[0]
    twice = _dates(
        "THIS AGREEMENT is made as of 2 February 2020.",
        "1. The initial term of this Agreement shall be one (1) year.",
        "2. The initial term of this Agreement shall be two (2) years.",
    )
    assert twice.dates == []
    assert twice.input(TERM).note == "stated more than one way: 1 year or 2 years"  # type: ignore[union-attr]
    assert "no expiry is computed" in twice.notes[0]
    nothing = _dates("This Letter records a meeting held on 3 May 2021.")
    assert nothing.dates == [] and nothing.notes


def test_the_agreement_date_counts_when_no_other_start_is_named() -> None:
    result = _dates(
        "This Strategic Alliance Agreement is made and entered into this 9th day of September 2005 by UTEK Corp.",
        "TERM AND TERMINATION. The term of the Agreement will be for 12 months unless terminated sooner.",
    )
    [expiry] = result.dates
    assert expiry.when == date(2006, 9, 9)
    assert expiry.how.startswith("agreement dated 9 September 2005 + 1 year (no effective date stated")


def test_table_values_take_the_place_of_the_documents_own() -> None:
    table = {
        EFFECTIVE_DATE: KeyInput(EFFECTIVE_DATE, "1 June 2020", date(2020, 6, 1), "extraction run 1", None, ""),
        END_DATE: KeyInput(
            END_DATE, "", None, "extraction run 1", None, "", "the table's value “perpetual” is no date"
        ),
    }
    result = _dates("This Agreement is effective as of 1 March 2019.", "It shall continue for a period of 2 years.",
                    table=table)  # fmt: skip
    assert result.input(EFFECTIVE_DATE).source == "extraction run 1"  # type: ignore[union-attr]
    assert result.dates == []  # the table says the end is 'perpetual': no expiry from the document's words
    assert "perpetual" in result.notes[0]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("March 14, 2018", date(2018, 3, 14)), ("3/14/18", date(2018, 3, 14)), ("1/6/16", "ambiguous"),
     ("perpetual", None)],
)  # fmt: skip
def test_table_cells_read_as_dates(value: str, expected: object) -> None:
    assert parse_date_value(value) == expected


def test_table_cells_read_as_durations() -> None:
    assert parse_duration_value("successive 1 year") == (12, "month")
    assert parse_duration_value("ninety (90) days") == (90, "day")
    assert parse_duration_value("30 days or 60 days") == "ambiguous"
    assert parse_duration_value("perpetual") is None
