"""How an answer is compared with CUAD's expert labels (benchmarks/bench_extraction_quality.py).

The rules, kept honest (each one also applies to the chat's answers, read the same way):

- Document Name: every word of CUAD's answer is in Folio's (case, punctuation and hyphens ignored).
- Parties: CUAD's answer lists the parties separated by ';'. Roles and defined terms in quotes or
  brackets are dropped, and so are entries that define roles ('each a "Party" and collectively the
  "Parties"') or are left with only generic words ('you'). Each remaining party must be named: at
  least 80% of its distinctive words (without company suffixes such as Inc., LLC, Ltd., Corp.) appear
  in Folio's answer.
- Dates: both sides are read as calendar dates by Folio's normaliser (app/citations/normalise.py: 'March 29, 2018',
  '2018-03-29'); the first date in Folio's answer must equal CUAD's. CUAD writes blanks of an unfilled
  form as '[]' ('[]/[]/2016'): only the parts given must agree. An expiration date may be one day off
  ('through May 31, 2021' for CUAD's 6/1/21), or given as a duration from CUAD's effective (or
  agreement) date ('one year from the Effective Date'). 'perpetual' needs perpetual/indefinite/
  'until terminated' in the answer.
- Renewal Term and Notice Period: read as durations by the same normaliser (days, weeks, months, years;
  equal within 3%. 'perpetual' as above.
- Governing Law: every word of CUAD's answer (a state or country) is in Folio's answer.
- CUAD gives no answer: Folio's 'not stated' is correct. Where CUAD's experts marked a clause but gave
  no normalised answer (an expiry tied to another agreement), an answer drawn from that clause is
  correct too: at least 60% of its content words are in the clause.
- A chat answer 'says not stated' when it says the document does not state, specify or mention it.
"""

from __future__ import annotations

import calendar
import contextlib
import re
import unicodedata
from datetime import date, timedelta
from typing import cast

from app.citations import normalise

_MONTH_DAYS = 30.4  # a month in days, to compare '30 days' with 'one month'
_SUFFIXES = {"inc", "llc", "l", "c", "ltd", "limited", "corp", "corporation", "co", "company", "pty", "plc", "lp"}
_GENERIC = {
    "party", "parties", "collectively", "each", "individually", "together", "with", "and", "its", "successors",
    "permitted", "assigns", "hereinafter", "referred", "to", "as", "a", "an", "the", "herein", "may", "also", "be",
    "you", "we", "us", "our", "or", "of", "franchisee", "shall", "is", "in",
}  # fmt: skip
_STOP = {"the", "a", "an", "of", "and", "or", "to", "in", "on", "by", "for", "this", "that", "is", "be", "shall"}
# CUAD's evidence text splits some ordinals ('June 1s t 2020', '16t h day of May') where the PDF has
# '1st' and '16th'; left so, the evidence is never found on its page.
_SPLIT_ORDINAL_RE = re.compile(r"\b(\d{1,2})(s t|n d|r d|t h)\b")
PERPETUAL_RE = re.compile(r"perpetu|indefinite|until (?:it is )?terminated|no (?:fixed )?(?:end|expir)", re.IGNORECASE)


def words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    return re.findall(r"[a-z0-9]+", text)


# -- dates and durations: read by Folio's own normaliser (app/citations/normalise.py) -------------------------
def find_dates(text: str) -> list[list[date]]:
    """The full calendar dates in the text, in order, each with its readings ('1/6/16' reads two ways)."""
    found = []
    for fact in normalise.find_dates(text):
        readings = []
        for reading in fact.readings:
            y, m, d = cast(normalise.DateValue, reading)
            if y is not None and m is not None and d is not None:
                with contextlib.suppress(ValueError):
                    readings.append(date(y, m, d))
        if readings:
            found.append(sorted(readings))
    return found


def _year(text: str) -> int:
    y = int(text)
    return y if y >= 100 else (1900 + y if y >= 50 else 2000 + y)


def repaired(evidence: str) -> str:
    """CUAD's evidence text with its split ordinals joined again ('16t h' -> '16th')."""
    return _SPLIT_ORDINAL_RE.sub(lambda m: m.group(1) + m.group(2).replace(" ", ""), evidence)


def cuad_date(answer: str) -> tuple[int | None, int | None, int | None] | None:
    """CUAD's 'M/D/YY' with '[]' for a blank, as (year, month, day); None when not a date."""
    match = re.fullmatch(r"\s*(\d+|\[\])/(\d+|\[\])/(\d+|\[\])\s*", answer)
    if not match:
        return None
    m, d, y = (None if g == "[]" else int(g) for g in match.groups())
    return (_year(str(y)) if y is not None else None, m, d)


def first_duration(text: str) -> tuple[float, str] | None:
    """The first duration in the text ('twelve (12) months', '90 days', 'one-month'): (value, 'day' |
    'month' | 'hour'), a year read as 12 months."""
    fact = next((f for f in normalise.find_facts(text) if f.kind == "duration"), None)
    if fact is None:
        return None
    value, unit = cast(tuple[float, str], next(iter(fact.readings)))
    return float(value), str(unit)


def duration_days(text: str) -> float | None:
    found = first_duration(text)
    return found[0] * {"day": 1.0, "month": _MONTH_DAYS, "hour": 1 / 24}[found[1]] if found else None


def date_after(start: date, text: str) -> date | None:
    """The date a duration in the text ends, counted from start (months by the calendar)."""
    found = first_duration(text)
    if found is None:
        return None
    value, unit = found
    if unit != "month" or value != int(value):
        return start + timedelta(days=duration_days(text) or 0)
    months = start.month - 1 + int(value)
    year, month = start.year + months // 12, months % 12 + 1
    return date(year, month, min(start.day, calendar.monthrange(year, month)[1]))


# -- the rules -------------------------------------------------------------------------------------
def party_names(answer: str) -> list[list[str]]:
    """CUAD's parties, each as its distinctive words."""
    names = []
    for entry in answer.split(";"):
        cleaned = re.sub(r"\([^)]*\)|[\"“”][^\"“”]*[\"“”]", " ", entry)
        if re.search(r"\b(?:part(?:y|ies)|collectively|referred)\b", cleaned, re.IGNORECASE):
            continue  # a sentence defining roles ('each a "Party"'), not a name
        distinctive = [w for w in words(cleaned) if w not in _SUFFIXES and w not in _GENERIC]
        if distinctive:
            names.append(distinctive)
    return names


def _all_words_in(needle: list[str], hay: str) -> bool:
    have = set(words(hay))
    return bool(needle) and all(w in have for w in needle)


def matches(category: str, truth: str, answer: str, *, effective: date | None = None) -> bool:
    """Does Folio's (or the chat's) answer state CUAD's non-empty answer for this category?"""
    truth = truth.strip()
    if category in ("Document Name", "Governing Law"):
        return _all_words_in(words(truth), answer)
    if category == "Parties":
        have = set(words(answer))
        names = party_names(truth)
        return bool(names) and all(sum(w in have for w in n) >= 0.8 * len(n) for n in names)
    if category in ("Agreement Date", "Effective Date", "Expiration Date"):
        if truth.lower() == "perpetual":
            return bool(PERPETUAL_RE.search(answer))
        want = cuad_date(truth)
        if want is None:
            return False
        got = find_dates(answer)
        slack = 1 if category == "Expiration Date" else 0
        if got and any(_date_agrees(want, reading, slack) for reading in got[0]):
            return True
        if category == "Expiration Date" and effective is not None and (end := date_after(effective, answer)):
            return _date_agrees(want, end, 2)
        return False
    if category in ("Renewal Term", "Notice Period To Terminate Renewal"):
        if truth.lower() == "perpetual":
            return bool(PERPETUAL_RE.search(answer))
        want_days, got_days = duration_days(truth), duration_days(answer)
        return want_days is not None and got_days is not None and abs(want_days - got_days) <= 0.03 * want_days
    raise ValueError(f"no comparison rule for {category!r}")


def _date_agrees(want: tuple[int | None, int | None, int | None], got: date, slack: int) -> bool:
    year, month, day = want
    if year is not None and month is not None and day is not None:
        return abs((date(year, month, day) - got).days) <= slack
    return all(w is None or w == g for w, g in zip(want, (got.year, got.month, got.day), strict=True))


def drawn_from(answer: str, clauses: list[str]) -> bool:
    """At least 60% of the answer's content words are in one of CUAD's clauses."""
    mine = [w for w in words(answer) if w not in _STOP]
    if len(mine) < 2:
        return False
    return any(sum(w in set(words(c)) for w in mine) >= 0.6 * len(mine) for c in clauses)
