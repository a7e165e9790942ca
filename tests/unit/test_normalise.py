"""The fact normaliser (dates, amounts, durations) and the claim splitter, with property tests: every
way a contract or a model writes the same fact reads as the same value, and a changed fact does not."""

from __future__ import annotations

import datetime

from hypothesis import given
from hypothesis import strategies as st

from app.citations.claims import ABSENCE, COURTESY, HEADING, exemption, split_claims
from app.citations.normalise import fact_found, find_facts, words_value

ONES = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]  # fmt: skip
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
ORDINALS = {1: "first", 2: "second", 3: "third", 5: "fifth", 8: "eighth", 9: "ninth", 12: "twelfth", 20: "twentieth"}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip


def spell(n: int) -> str:
    """English words for 1 <= n < 10**12 (the test's own writer, independent of the reader under test)."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("-" + ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return ONES[n // 100] + " hundred" + (" and " + spell(n % 100) if n % 100 else "")
    for size, word in ((10**9, "billion"), (10**6, "million"), (1000, "thousand")):
        if n >= size:
            return spell(n // size) + " " + word + (" " + spell(n % size) if n % size else "")
    raise ValueError(n)


def suffix(day: int) -> str:
    return "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def renderings(date: datetime.date) -> list[str]:
    y, m, d = date.year, date.month, date.day
    month = MONTHS[m - 1]
    out = [
        f"{month} {d}, {y}",
        f"{month} {d}{suffix(d)}, {y}",
        f"{month[:3]}. {d} {y}",
        f"{d} {month} {y}",
        f"{d}{suffix(d)} of {month}, {y}",
        f"the {d}{suffix(d)} day of {month}, {y}",
        f"{m}/{d}/{y % 100:02d}",
        f"{m:02d}/{d:02d}/{y}",
        f"{y}-{m:02d}-{d:02d}",
    ]
    if d in ORDINALS:
        out.append(f"the {ORDINALS[d]} day of {month}, {y}")
    return out


DATES = st.dates(datetime.date(1950, 1, 1), datetime.date(2049, 12, 31))


@given(DATES, st.data())
def test_every_way_of_writing_a_date_reads_the_same(date: datetime.date, data: st.DataObject) -> None:
    forms = renderings(date)
    a, b = data.draw(st.sampled_from(forms)), data.draw(st.sampled_from(forms))
    claimed = find_facts(f"The agreement is dated {a}.")
    stated = find_facts(f"This Agreement is made {b} between the parties.")
    assert len(claimed) == 1 and claimed[0].kind == "date", (a, claimed)
    assert fact_found(claimed[0], stated), (a, b)
    other = date + datetime.timedelta(days=data.draw(st.integers(1, 400)))
    moved = find_facts(f"It is dated {data.draw(st.sampled_from(renderings(other)))}.")[0]
    ambiguous = {(date.month, date.day), (date.day, date.month)} == {(other.month, other.day), (other.day, other.month)}
    if not (ambiguous and date.year == other.year):  # '1/6/16' honestly reads as 6 January or 1 June
        assert not fact_found(moved, [f for f in stated if f.kind == "date" and "/" not in b])


@given(st.integers(1, 999_999_999_999))
def test_number_words_read_back(n: int) -> None:
    assert words_value(spell(n)) == n


AMOUNT = st.integers(1, 999_999_999)


@given(AMOUNT, st.data())
def test_every_way_of_writing_an_amount_reads_the_same(n: int, data: st.DataObject) -> None:
    forms = [f"${n:,}", f"{n:,} dollars", f"USD {n:,}", f"{spell(n)} dollars", f"{spell(n)} (${n:,})", f"US${n}"]
    if n % 1_000_000 == 0:
        forms.append(f"${n // 1_000_000} million")
    a, b = data.draw(st.sampled_from(forms)), data.draw(st.sampled_from(forms))
    claimed = find_facts(f"The fee is {a}.")
    assert [f.kind for f in claimed] == ["amount"], (a, claimed)
    assert fact_found(claimed[0], find_facts(f"Client shall pay {b} per year.")), (a, b)
    assert not fact_found(claimed[0], find_facts(f"Client shall pay ${n + data.draw(st.integers(1, 10**6)):,}."))


@given(st.integers(1, 99), st.sampled_from(["day", "week", "month", "year"]), st.data())
def test_durations_with_the_number_written_twice_or_in_other_units(n: int, unit: str, data: st.DataObject) -> None:
    plural = unit + ("s" if n != 1 else "")
    stated = find_facts(f"upon {spell(n)} ({n}) {plural} written notice")
    assert [f.kind for f in stated] == ["duration"]
    forms = [f"{n} {plural}", f"{spell(n)} {plural}", f"{n}-{unit}"]
    if unit == "year":
        forms.append(f"{12 * n} months")
    if unit == "week":
        forms.append(f"{7 * n} days")
    claimed = find_facts(f"Notice of {data.draw(st.sampled_from(forms))} is required.")
    assert len(claimed) == 1 and fact_found(claimed[0], stated)
    assert not fact_found(find_facts(f"Notice of {n + 1} {unit}s is required.")[0], stated)


@given(st.text(max_size=400))
def test_the_readers_never_crash_and_stay_inside_the_text(text: str) -> None:
    for fact in find_facts(text):
        assert 0 <= fact.start < fact.end <= len(text)
    previous = 0
    for claim in split_claims(text):
        assert text[claim.start : claim.end] == claim.text and claim.start >= previous
        previous = claim.end


def test_claims_follow_markdown() -> None:
    answer = (
        "## Governing law\n\n"
        "The agreement is governed by Texas law. [p. 5] It was signed by GAINSCO, Inc. on January 1, 2010 [p. 1].\n"
        'The term is "from January 1, 2010. Through December 31, 2010." [p. 2]\n\n'
        "- The Sponsor pays $1,000,000 per year [p. 3].\n"
        "- Section 15.7 covers notices. It requires writing.\n\n"
        "| Field | Value |\n|---|---|\n| Governing law | Texas [p. 5] |\n\n"
        "```\nnot = a claim\n```\n"
        "I could not find a renewal term. I hope this helps!"
    )
    claims = split_claims(answer)
    assert [(c.kind, c.text) for c in claims] == [
        ("heading", "## Governing law"),
        ("sentence", "The agreement is governed by Texas law. [p. 5]"),
        ("sentence", "It was signed by GAINSCO, Inc. on January 1, 2010 [p. 1]."),
        ("sentence", 'The term is "from January 1, 2010. Through December 31, 2010." [p. 2]'),
        ("item", "The Sponsor pays $1,000,000 per year [p. 3]."),
        ("item", "Section 15.7 covers notices."),
        ("item", "It requires writing."),
        ("heading", "Field"),
        ("heading", "Value"),
        ("cell", "Governing law"),
        ("cell", "Texas [p. 5]"),
        ("sentence", "I could not find a renewal term."),
        ("sentence", "I hope this helps!"),
    ]
    assert claims[10].context == "Value Governing law"
    assert [exemption(c) for c in claims] == [HEADING, *[None] * 6, HEADING, HEADING, None, None, ABSENCE, COURTESY]
