"""How an answer is compared with CUAD's expert labels (benchmarks/bench_extraction_quality.py).

The rules, kept honest (each one also applies to the chat's answers, read the same way):

- Document Name: every word of CUAD's answer is in Folio's (case, punctuation and hyphens ignored).
- Parties: CUAD's answer lists the parties separated by ';'. Roles and defined terms in quotes or
  brackets are dropped, and so are entries that define roles ('each a "Party" and collectively the
  "Parties"') or are left with only generic words ('you'). Each remaining party must be named: at
  least 80% of its distinctive words (without company suffixes such as Inc., LLC, Ltd., Corp.) appear
  in Folio's answer.
- Dates: both sides are read as calendar dates ('March 29, 2018', '29th day of March, 2018', '3/29/18',
  '2018-03-29'); the first date in Folio's answer must equal CUAD's. CUAD writes blanks of an unfilled
  form as '[]' ('[]/[]/2016'): only the parts given must agree. An expiration date may be one day off
  ('through May 31, 2021' for CUAD's 6/1/21), or given as a duration from CUAD's effective (or
  agreement) date ('one year from the Effective Date'). 'perpetual' needs perpetual/indefinite/
  'until terminated' in the answer.
- Renewal Term and Notice Period: read as durations (days, weeks, months, years; in digits or words);
  equal within 3%. 'perpetual' as above.
- Governing Law: every word of CUAD's answer (a state or country) is in Folio's answer.
- CUAD gives no answer: Folio's 'not stated' is correct. Where CUAD's experts marked a clause but gave
  no normalised answer (an expiry tied to another agreement), an answer drawn from that clause is
  correct too: at least 60% of its content words are in the clause.
- A chat answer 'says not stated' when it says the document does not state, specify or mention it.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from datetime import date, timedelta

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS |= {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
_MONTHS["sept"] = 9
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "  # noqa: SIM905
        "seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS |= {"thirty": 30, "forty": 40, "forty-five": 45, "sixty": 60, "ninety": 90, "a": 1, "an": 1}
_UNIT_DAYS = {"day": 1.0, "business day": 1.4, "week": 7.0, "month": 30.4, "year": 365.25}
_SUFFIXES = {"inc", "llc", "l", "c", "ltd", "limited", "corp", "corporation", "co", "company", "pty", "plc", "lp"}
_GENERIC = {
    "party", "parties", "collectively", "each", "individually", "together", "with", "and", "its", "successors",
    "permitted", "assigns", "hereinafter", "referred", "to", "as", "a", "an", "the", "herein", "may", "also", "be",
    "you", "we", "us", "our", "or", "of", "franchisee", "shall", "is", "in",
}  # fmt: skip
_STOP = {"the", "a", "an", "of", "and", "or", "to", "in", "on", "by", "for", "this", "that", "is", "be", "shall"}
NOT_STATED_RE = re.compile(
    r"\b(?:not (?:explicitly |specifically |clearly )?(?:stated|specified|mentioned|provided|given|included|"
    r"defined|set out|indicated|found)|does not (?:explicitly |specifically )?(?:state|specify|mention|say|"
    r"provide|include|contain|set out|indicate|define)|doesn't (?:state|specify|mention|say)|"
    r"no (?:specific |explicit )?(?:mention|information|renewal|notice period|expiration|effective date|date|term)\b|"
    r"cannot be determined|"
    r"there is no)",
    re.IGNORECASE,
)
PERPETUAL_RE = re.compile(r"perpetu|indefinite|until (?:it is )?terminated|no (?:fixed )?(?:end|expir)", re.IGNORECASE)


def words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    return re.findall(r"[a-z0-9]+", text)


def says_not_stated(text: str) -> bool:
    return bool(NOT_STATED_RE.search(text)) or text.strip().lower() in ("", "not stated", "none", "n/a")


# -- dates -----------------------------------------------------------------------------------------
_DATE_RES = [
    # March 29, 2018 / March 29th 2018 / Mar. 29, 2018
    (re.compile(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2})\s*(?:st|nd|rd|th)?,?\s+(\d{4})\b"), ("m", "d", "y")),
    # 29 March 2018 / 29th day of March, 2018 / first day of July, 2017
    (
        re.compile(r"\b(\d{1,2}|first)\s*(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?([A-Za-z]{3,9}),?\s+(\d{4})\b", re.I),
        ("d", "m", "y"),
    ),
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), ("y", "mn", "d")),
    (re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{2,4})\b"), ("mn", "d", "y")),
]  # fmt: skip


def _year(text: str) -> int:
    y = int(text)
    return y if y >= 100 else (1900 + y if y >= 50 else 2000 + y)


def find_dates(text: str) -> list[date]:
    """Calendar dates in the order they appear."""
    found: list[tuple[int, date]] = []
    for pattern, order in _DATE_RES:
        for match in pattern.finditer(text):
            parts = dict(zip(order, match.groups(), strict=True))
            try:
                if "m" in parts:
                    month = _MONTHS.get(parts["m"].lower().rstrip("."))
                    if month is None:
                        continue
                else:
                    month = int(parts["mn"])
                day = 1 if parts["d"].lower() == "first" else int(parts["d"])
                found.append((match.start(), date(_year(parts["y"]), month, day)))
            except ValueError:
                continue
    return [d for _, d in sorted(found, key=lambda x: x[0])]


def cuad_date(answer: str) -> tuple[int | None, int | None, int | None] | None:
    """CUAD's 'M/D/YY' with '[]' for a blank, as (year, month, day); None when not a date."""
    match = re.fullmatch(r"\s*(\d+|\[\])/(\d+|\[\])/(\d+|\[\])\s*", answer)
    if not match:
        return None
    m, d, y = (None if g == "[]" else int(g) for g in match.groups())
    return (_year(str(y)) if y is not None else None, m, d)


def duration_days(text: str) -> float | None:
    """The first duration in the text ('twelve (12) months', '90 days', 'one-month'), in days."""
    units = "|".join(sorted((re.escape(u) for u in _UNIT_DAYS), key=len, reverse=True))
    numbers = r"\d+(?:\.\d+)?|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
    pattern = re.compile(rf"\b({numbers})(?:\s*\(\d+\))?[\s-]+(?:calendar\s+)?({units})s?\b", re.IGNORECASE)
    match = pattern.search(text)
    if not match:
        return None
    raw = match.group(1).lower()
    amount = float(raw) if raw[0].isdigit() else float(_NUMBER_WORDS[raw])
    return amount * _UNIT_DAYS[match.group(2).lower()]


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
        if got and _date_agrees(want, got[0], slack):
            return True
        if category == "Expiration Date" and effective is not None and (days := duration_days(answer)):
            return _date_agrees(want, effective + timedelta(days=days), 2)
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
