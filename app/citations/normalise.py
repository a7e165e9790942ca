"""The facts in a stretch of English text, in one canonical form: dates, amounts, durations, percents, numbers.

A model rarely repeats a contract's words: it writes "January 6th, 2016" where the page says
"1/6/16" or "the 6th day of January, 2016", "$1,000,000" for "one million dollars", "two years" for
"twenty-four (24) months". Grounding compares facts, not spellings, so each is read into a value:

- dates: (year, month, day), any part unknown (None) when not written ("March 2011"); an all-number
  date reads both ways when it can ("1/6/16" is 6 January or 1 June 2016; "29/3/18" only 29 March),
  two-digit years are 1950-2049;
- amounts: value and currency (USD, EUR, GBP, ...) when one is named; number words and scale words
  are read ("one million dollars", "$1.5 million");
- durations: in days (days, weeks) or months (months, years), so "one (1) year" = "12 months";
- percents; other numbers (counts, section numbers, years) with their value.

The legal habit of writing a number twice, "thirty (30) days", gives one fact. English only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DateValue = tuple[int | None, int | None, int | None]  # year, month, day

_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
    "thirtieth": 30,
}  # fmt: skip
# Words that state a number: a quote that changes one ("two percent" for "one percent") is not the quote.
NUMBER_WORDS = frozenset([*_UNITS, *_TENS, *_SCALES, *_ORDINALS])
_CURRENCY_SIGNS = {"$": "USD", "us$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
_CURRENCY_CODES = {"usd": "USD", "eur": "EUR", "gbp": "GBP", "cad": "CAD", "aud": "AUD", "jpy": "JPY", "chf": "CHF"}
_CURRENCY_WORDS = {
    "dollar": "USD", "dollars": "USD", "euro": "EUR", "euros": "EUR", "pound": "GBP", "pounds": "GBP",
    "yen": "JPY", "cents": "USD",
}  # fmt: skip
_DURATION_UNITS = {
    "day": ("day", 1), "days": ("day", 1), "week": ("day", 7), "weeks": ("day", 7),
    "month": ("month", 1), "months": ("month", 1), "year": ("month", 12), "years": ("month", 12),
    "hour": ("hour", 1), "hours": ("hour", 1),
}  # fmt: skip

_MONTH_RE = (
    r"(?P<{g}>(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?)"
)
_ORD_WORDS = (
    r"(?:twenty|thirty)[- ]?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|thirtieth|twentieth|"
    + "|".join(sorted((w for w in _ORDINALS if not w.startswith(("twent", "thirt"))), key=len, reverse=True))
)
# '16t h', '1s t': a text layer sometimes splits the ordinal suffix
_DAY_RE = r"(?P<{g}>\d{{1,2}}(?:\s?(?:s\s?t|n\s?d|r\s?d|t\s?h))?|" + _ORD_WORDS + ")"
_YEAR_RE = r"(?P<{g}>\d{{4}}|'\d{{2}})"
_DATE_PATTERNS = [
    # the 14th day of March, 2011 / first day of July 2017
    re.compile(
        r"\b" + _DAY_RE.format(g="d") + r"\s+day\s+of\s+" + _MONTH_RE.format(g="m")
        + r"(?:\s*,?\s*(?:in\s+the\s+year\s+)?" + _YEAR_RE.format(g="y") + r")?(?!\w)",
        re.IGNORECASE,
    ),
    # January 6th, 2016 / Jan. 6 2016 / January 6
    re.compile(
        r"\b" + _MONTH_RE.format(g="m") + r"\s*" + _DAY_RE.format(g="d")
        + r"(?:\s*,?\s*" + _YEAR_RE.format(g="y") + r")?(?!\w)",
        re.IGNORECASE,
    ),
    # 6 January 2016 / 6th of January, 2016
    re.compile(
        r"\b" + _DAY_RE.format(g="d") + r"\s+(?:of\s+)?" + _MONTH_RE.format(g="m")
        + r"(?:\s*,?\s*" + _YEAR_RE.format(g="y") + r")?(?!\w)",
        re.IGNORECASE,
    ),
    # March 2011 / March, 2011
    re.compile(r"\b" + _MONTH_RE.format(g="m") + r"\s*,?\s*" + _YEAR_RE.format(g="y") + r"(?!\w)", re.IGNORECASE),
    # 2016-01-06
    re.compile(r"(?<![\d.])(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?![\d])"),
    # 1/6/16, 01/06/2016, 1-6-16 (one separator used twice); 29.3.2018 (dots only with a full year:
    # '2.2.10' is a section number)
    re.compile(r"(?<![\d/.\-])(?P<a>\d{1,2})(?P<s>[/\-])(?P<b>\d{1,2})(?P=s)(?P<y>\d{4}|\d{2})(?![\d/]|\.\d)"),
    re.compile(r"(?<![\d/.\-])(?P<a>\d{1,2})\.(?P<b>\d{1,2})\.(?P<y>\d{4})(?![\d/]|\.\d)"),
]  # fmt: skip

_NUMBER_WORD = "|".join(sorted([*_UNITS, *_TENS, *_SCALES], key=len, reverse=True))
_WORDS_RE = re.compile(
    rf"\b(?:{_NUMBER_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*\b",
    re.IGNORECASE,
)
_DIGITS_RE = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\d|\.\d)")
_REF_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+){2,}(?![\w]|\.\d)")  # a section number: 2.2.10
_SCALE_AFTER_RE = re.compile(r"\s*(million|billion|thousand|mm|m|bn|k)\b", re.IGNORECASE)
# the "(30)" of "thirty (30) days", the "($500)" of "five hundred dollars ($500)"
_DUP_RE = re.compile(r"\s*\(\s*(us\$|\$|€|£|¥|(?:usd|eur|gbp)\s*)?([\d,]+(?:\.\d+)?)\s*\)", re.IGNORECASE)
_UNIT_AFTER_RE = re.compile(
    r"(?:\s*-\s*|\s+)(?:(?:calendar|business|working|consecutive|full|additional|successive)\s+)?"
    r"(days?|weeks?|months?|years?|hours?)\b",
    re.IGNORECASE,
)
_PERCENT_AFTER_RE = re.compile(r"\s*(?:%|percent\b|per\s+cent\b)", re.IGNORECASE)
_CURRENCY_AFTER_RE = re.compile(r"\s*(?:(?:u\.?s\.?|united states)\s+)?(dollars?|euros?|pounds?|yen|cents)\b", re.I)
_CURRENCY_BEFORE_RE = re.compile(r"(us\$|\$|€|£|¥|\b(?:usd|eur|gbp|cad|aud|jpy|chf)\b)\s*$", re.IGNORECASE)
_RATE_BEFORE_RE = re.compile(r"(?:\d|dollars?|euros?|pounds?|percent|%)\s*$", re.IGNORECASE)
_ARTICLE_UNIT_RE = re.compile(
    r"\b(?:an?|one)\s+(?:(?:additional|further|initial|successive|single|calendar|full)\s+)?"
    r"(day|week|month|year)\b(?!s)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Fact:
    kind: str  # 'date' | 'amount' | 'duration' | 'percent' | 'number' | 'ref'
    readings: frozenset[object]  # DateValue for dates; (value, currency|None); (value, unit); float; '2.2.10'
    start: int
    end: int

    @property
    def numbers(self) -> frozenset[float]:
        """The plain numbers this fact states (a date gives its year only: day and month are too common)."""
        out: set[float] = set()
        for r in self.readings:
            if self.kind == "date":
                year = r[0]  # type: ignore[index]
                if year is not None:
                    out.add(float(year))
            elif self.kind in ("amount", "duration"):
                out.add(float(r[0]))  # type: ignore[index]
                if self.kind == "duration" and r[1] == "month" and r[0] % 12 == 0:  # type: ignore[index]
                    out.add(float(r[0] // 12))  # type: ignore[index]
            elif self.kind != "ref":
                out.add(float(r))  # type: ignore[arg-type]
        return frozenset(out)


def words_value(text: str) -> int | None:
    """'twenty-four' -> 24, 'one million two hundred thousand' -> 1200000, 'one hundred and five' -> 105."""
    total = current = 0
    seen = False
    for word in re.split(r"[\s-]+", text.lower().strip()):
        if not word or word == "and":
            continue
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
        else:
            return None
        seen = True
    return total + current if seen else None


def _digits_value(text: str) -> float:
    value = float(text.replace(",", ""))
    return int(value) if value.is_integer() else value  # 30, not 30.0: readings compare equal either way


def _day(text: str) -> int | None:
    t = re.sub(r"\s+", "", text.lower())
    digits = re.match(r"\d+", t)
    if digits:
        return int(digits.group())
    t = t.replace("-", "")
    if t in _ORDINALS:
        return _ORDINALS[t]
    for tens, base in (("twenty", 20), ("thirty", 30)):
        if t.startswith(tens) and t[len(tens) :] in _ORDINALS:
            return base + _ORDINALS[t[len(tens) :]]
    return None


def _year(text: str | None) -> int | None:
    if not text:
        return None
    digits = text.lstrip("'")
    value = int(digits)
    if len(digits) == 2:
        value += 2000 if value < 50 else 1900
    return value


def _valid(y: int | None, m: int | None, d: int | None) -> bool:
    if m is not None and not 1 <= m <= 12:
        return False
    if d is not None and not 1 <= d <= 31:
        return False
    return y is None or 1000 <= y <= 2999


def _date_readings(match: re.Match[str]) -> set[DateValue]:
    groups = match.groupdict()
    y = _year(groups.get("y"))
    if groups.get("a") is not None:  # all numbers: month/day/year or day/month/year
        a, b = int(groups["a"]), int(groups["b"])
        readings = {(y, a, b), (y, b, a)}
        return {r for r in readings if _valid(*r)}
    raw_month = groups.get("m")
    month = None if not raw_month else int(raw_month) if raw_month.isdigit() else _MONTHS[raw_month.lower().rstrip(".")]
    day = _day(groups["d"]) if groups.get("d") else None
    if groups.get("d") and day is None:
        return set()
    return {(y, month, day)} if _valid(y, month, day) else set()


def find_dates(text: str) -> list[Fact]:
    found: list[Fact] = []
    taken: list[tuple[int, int]] = []
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(s < end and start < e for s, e in taken):
                continue
            readings = _date_readings(match)
            if not readings:
                continue
            month = match.groupdict().get("m") or ""
            if month in ("may", "march", "mar") and all(r[0] is None for r in readings):
                continue  # 'may 5' in a sentence is a verb and a number; 'May 5' is a date
            taken.append((start, end))
            found.append(Fact("date", frozenset(readings), start, end))
    return sorted(found, key=lambda f: f.start)


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(s < end and start < e for s, e in spans)


def find_facts(text: str) -> list[Fact]:
    """Every date, amount, duration, percent and other number in the text, in order."""
    facts = find_dates(text)
    facts += [Fact("ref", frozenset({m.group()}), m.start(), m.end()) for m in _REF_RE.finditer(text)]
    taken = [(f.start, f.end) for f in facts]
    mentions: list[tuple[int, int, float, bool]] = []  # start, end, value, written in words
    for match in _WORDS_RE.finditer(text):
        spelled = words_value(match.group())
        if spelled is not None and not _overlaps(match.start(), match.end(), taken):
            mentions.append((match.start(), match.end(), spelled, True))
    for match in _DIGITS_RE.finditer(text):
        if not _overlaps(match.start(), match.end(), taken) and not _overlaps(
            match.start(), match.end(), [(s, e) for s, e, _, _ in mentions]
        ):
            mentions.append((match.start(), match.end(), _digits_value(match.group()), False))
    mentions.sort()
    consumed = 0  # where the last fact ended: a mention inside it ('million' of '1.5 million') is part of it
    for start, end, number, in_words in mentions:
        if start < consumed:
            continue
        rest = text[end:]
        scale = _SCALE_AFTER_RE.match(rest)
        if scale and not in_words:
            factor = {"thousand": 1_000, "k": 1_000, "million": 1_000_000, "mm": 1_000_000, "m": 1_000_000}.get(
                scale.group(1).lower(), 1_000_000_000
            )
            if scale.group(1).lower() not in ("m", "k") or _CURRENCY_BEFORE_RE.search(text[max(0, start - 5) : start]):
                number = number * factor
                number = int(number) if float(number).is_integer() else number
                end += scale.end()
                rest = text[end:]
        dup = _DUP_RE.match(rest)
        twin_sign = None
        if dup and _digits_value(dup.group(2)) == number:
            end += dup.end()
            rest = text[end:]
            twin_sign = _CURRENCY_BEFORE_RE.search(dup.group(1) or "")
        before = text[max(0, start - 6) : start]
        sign = _CURRENCY_BEFORE_RE.search(before)
        if sign is None and twin_sign is not None:
            sign, before = twin_sign, ""
        unit = _UNIT_AFTER_RE.match(rest)
        percent = _PERCENT_AFTER_RE.match(rest)
        currency_word = _CURRENCY_AFTER_RE.match(rest)
        if sign or currency_word:
            currency = None
            if sign:
                key = sign.group(1).lower().strip()
                currency = _CURRENCY_SIGNS.get(key) or _CURRENCY_CODES.get(key)
                if before:
                    start -= len(before) - sign.start()
            if currency_word:
                currency = _CURRENCY_WORDS[currency_word.group(1).lower()]
                end += currency_word.end()
            facts.append(Fact("amount", frozenset({(number, currency)}), start, end))
        elif percent:
            facts.append(Fact("percent", frozenset({float(number)}), start, end + percent.end()))
        elif unit:
            base, factor = _DURATION_UNITS[unit.group(1).lower()]
            facts.append(Fact("duration", frozenset({(number * factor, base)}), start, end + unit.end()))
        else:
            facts.append(Fact("number", frozenset({float(number)}), start, end))
        consumed = facts[-1].end
    for match in _ARTICLE_UNIT_RE.finditer(text):
        if _RATE_BEFORE_RE.search(text[max(0, match.start() - 30) : match.start()]):
            continue  # '$15,000 a month' is a rate, not a duration of one month
        if not _overlaps(match.start(), match.end(), [(f.start, f.end) for f in facts]):
            base, factor = _DURATION_UNITS[match.group(1).lower()]
            facts.append(Fact("duration", frozenset({(factor, base)}), match.start(), match.end()))
    return sorted(facts, key=lambda f: f.start)


def _date_fits(claimed: DateValue, stated: DateValue) -> bool:
    """A claimed date fits a stated one when every part the claim names agrees (and the claim names a
    month or a year): 'March 2011' fits 14 March 2011; '14 March' fits it too."""
    if claimed[0] is None and claimed[1] is None:
        return False
    return all(c is None or c == s for c, s in zip(claimed, stated, strict=True)) and (
        claimed[0] is not None or stated[0] is not None or claimed[2] is not None
    )


def fact_found(claimed: Fact, stated: list[Fact]) -> bool:
    """Is the claimed fact among the stated ones (in any of their readings)?"""
    for fact in stated:
        if claimed.kind == "date":
            if fact.kind == "date" and any(
                _date_fits(c, s)  # type: ignore[arg-type]
                for c in claimed.readings
                for s in fact.readings
            ):
                return True
        elif claimed.kind == "amount":
            if fact.kind in ("amount", "number") and _amount_values(claimed) & _amount_values(fact):
                currencies = {r[1] for r in claimed.readings} | (  # type: ignore[index]
                    {r[1] for r in fact.readings} if fact.kind == "amount" else set()  # type: ignore[index]
                )
                if len(currencies - {None}) <= 1:
                    return True
        elif claimed.kind == "duration":
            if fact.kind == "duration" and claimed.readings & fact.readings:
                return True
        elif claimed.kind == "ref":
            if fact.kind == "ref" and claimed.readings & fact.readings:
                return True
        elif claimed.kind == "percent":
            if fact.kind == "percent" and claimed.readings & fact.readings:
                return True
        elif claimed.numbers & fact.numbers:
            return True
    return False


def _amount_values(fact: Fact) -> set[float]:
    if fact.kind == "amount":
        return {float(r[0]) for r in fact.readings}  # type: ignore[index]
    return set(fact.numbers)
