"""A value rule decided by code: the value the model read, against the playbook's positions.

The model reads the value ("twelve (12) months", "USD 1,000,000", "the laws of the State of New York");
Folio reads its facts with the same code that grounds every chat sentence (app.citations.normalise) and
compares them here. The model never does the arithmetic: a small model says "24 months is less than 12"
as readily as anything else, and a comparison is the one thing code gets right every time.

What a person must decide is said so, never guessed: a value with no duration or amount in it, two
different values, an amount in another currency than the position's (Folio converts no currencies), an
amount without a currency, a duration a few days from the line in another unit (30 days against one
month), a place Folio cannot read, or two places the positions rank differently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.citations.normalise import Fact, find_facts

MET = "met"
FALLBACK = "fallback"
NOT_MET = "not_met"
MISSING = "missing"
NEEDS_PERSON = "needs_person"
VERDICTS = (MET, FALLBACK, NOT_MET, MISSING, NEEDS_PERSON)
VERDICT_TEXT = {
    MET: "met",
    FALLBACK: "fallback",
    NOT_MET: "not met",
    MISSING: "missing",
    NEEDS_PERSON: "needs a person",
}
# The verdicts that fall short of the playbook: each gets the standard wording proposed as an edit.
SHORT = (NOT_MET, MISSING)

DURATION = "duration"
AMOUNT = "amount"
PLACE = "place"
TEXT = "text"

_DAYS = {"day": 1.0, "month": 365 / 12, "hour": 1 / 24}
# Across units ("30 days" against "one month") the conversion is approximate: this close to the line,
# a person reads the clause.
_UNIT_MARGIN = 0.03


@dataclass(frozen=True)
class Outcome:
    verdict: str
    reason: str  # one sentence a lawyer reads
    read: str = ""  # the value as code read it: '12 months', 'USD 1,000,000', 'New York'


@dataclass(frozen=True)
class Quantity:
    """A duration (in its unit: day, month or hour) or an amount (with its currency, None if unnamed)."""

    value: float
    unit: str | None

    def text(self, kind: str) -> str:
        number = f"{self.value:,.0f}" if float(self.value).is_integer() else f"{self.value:,}"
        if kind == AMOUNT:
            return f"{self.unit} {number}" if self.unit else number
        plural = "" if self.value == 1 else "s"
        return f"{number} {self.unit}{plural}"

    def days(self) -> float:
        return self.value * _DAYS.get(self.unit or "day", 1.0)


def quantities(text: str, kind: str) -> list[Quantity]:
    """The distinct durations or amounts a text states ('twelve (12) months' is one, 12 months)."""
    found: list[Quantity] = []
    for fact in find_facts(text):
        for reading in _readings(fact, kind):
            if reading not in found:
                found.append(reading)
    return found


def _readings(fact: Fact, kind: str) -> list[Quantity]:
    if kind == DURATION and fact.kind == "duration":
        return [Quantity(float(r[0]), str(r[1])) for r in fact.readings]  # type: ignore[index]
    if kind == AMOUNT and fact.kind == "amount":
        return [Quantity(float(r[0]), r[1]) for r in fact.readings]  # type: ignore[index]
    if kind == AMOUNT and fact.kind == "number" and any(float(r) >= 1000 for r in fact.readings):  # type: ignore[arg-type]
        return [Quantity(float(r), None) for r in fact.readings]  # type: ignore[arg-type]  # '1 million': no currency
    return []


def threshold(text: str, kind: str) -> Quantity | None:
    """A playbook's line ('12 months', 'USD 1,000,000'): exactly one quantity, an amount with its currency."""
    found = quantities(text, kind)
    if len(found) != 1 or (kind == AMOUNT and found[0].unit is None):
        return None
    return found[0]


def compare_value(
    value: str, kind: str, *, at_least: bool, acceptable: str, fallback: str = "", unacceptable: str = ""
) -> Outcome:
    """At least / at most: met within the acceptable line, fallback within the fallback line, not met
    beyond it (or beyond the unacceptable line, when the playbook names one: between the fallback and
    that line a person decides)."""
    read = quantities(value, kind)
    word = "duration" if kind == DURATION else "amount"
    if not read:
        article = "a" if kind == DURATION else "an"
        return Outcome(NEEDS_PERSON, f"Folio cannot read {article} {word} in {_short(value)!r}.")
    if len(read) > 1:
        shown = " and ".join(q.text(kind) for q in read[:3])
        return Outcome(NEEDS_PERSON, f"The contract states more than one {word} here ({shown}).")
    got = read[0]
    lines = [(verdict, threshold(line, kind)) for verdict, line in ((MET, acceptable), (FALLBACK, fallback)) if line]
    worst = threshold(unacceptable, kind) if unacceptable else None
    sign = "at least" if at_least else "at most"
    for verdict, line in lines:
        if line is None:
            continue
        if kind == AMOUNT and got.unit != line.unit:
            why = "states no currency" if got.unit is None else f"is in {got.unit}"
            return Outcome(
                NEEDS_PERSON, f"The amount {why}; the position is in {line.unit} and Folio converts no currencies.",
                got.text(kind),
            )  # fmt: skip
        near = _too_near(got, line) if kind == DURATION else False
        if near:
            return Outcome(
                NEEDS_PERSON, f"{got.text(kind)} against {line.text(kind)}: too close to call across units.",
                got.text(kind),
            )  # fmt: skip
        if _within(got, line, kind, at_least):
            what = "the position" if verdict == MET else "the fallback"
            return Outcome(verdict, f"{got.text(kind)} is {sign} {line.text(kind)} ({what}).", got.text(kind))
    last = next((line for _v, line in reversed(lines) if line is not None), None)
    if worst is not None and last is not None and not _within(got, worst, kind, not at_least):
        return Outcome(
            NEEDS_PERSON,
            f"{got.text(kind)} falls between the fallback ({last.text(kind)}) and the unacceptable line "
            f"({worst.text(kind)}).",
            got.text(kind),
        )
    limit = f" {last.text(kind)}" if last is not None else ""
    return Outcome(NOT_MET, f"{got.text(kind)} is not {sign}{limit}.", got.text(kind))


def _comparable(got: Quantity, line: Quantity, kind: str) -> tuple[float, float]:
    if kind == DURATION and got.unit != line.unit:
        return got.days(), line.days()
    return got.value, line.value


def _within(got: Quantity, line: Quantity, kind: str, at_least: bool) -> bool:
    a, b = _comparable(got, line, kind)
    return a >= b if at_least else a <= b


def _too_near(got: Quantity, line: Quantity) -> bool:
    if got.unit == line.unit:
        return False
    a, b = got.days(), line.days()
    return a != b and abs(a - b) <= _UNIT_MARGIN * b


# -- places and words ------------------------------------------------------------------------------
_STATES = {
    "alabama": "al", "alaska": "ak", "arizona": "az", "arkansas": "ar", "california": "ca", "colorado": "co",
    "connecticut": "ct", "delaware": "de", "florida": "fl", "georgia": "ga", "hawaii": "hi", "idaho": "id",
    "illinois": "il", "indiana": "in", "iowa": "ia", "kansas": "ks", "kentucky": "ky", "louisiana": "la",
    "maine": "me", "maryland": "md", "massachusetts": "ma", "michigan": "mi", "minnesota": "mn",
    "mississippi": "ms", "missouri": "mo", "montana": "mt", "nebraska": "ne", "nevada": "nv",
    "new hampshire": "nh", "new jersey": "nj", "new mexico": "nm", "new york": "ny", "north carolina": "nc",
    "north dakota": "nd", "ohio": "oh", "oklahoma": "ok", "oregon": "or", "pennsylvania": "pa",
    "rhode island": "ri", "south carolina": "sc", "south dakota": "sd", "tennessee": "tn", "texas": "tx",
    "utah": "ut", "vermont": "vt", "virginia": "va", "washington": "wa", "west virginia": "wv",
    "wisconsin": "wi", "wyoming": "wy", "district of columbia": "dc",
}  # fmt: skip
# Other spellings a contract or a model uses for a place; the first name is how Folio writes it.
_ALIASES: dict[str, tuple[str, ...]] = {
    # England and Wales are one legal system: a contract under either is under English law.
    "england": ("england and wales", "english", "laws of england", "wales", "welsh"),
    "district of columbia": ("washington d c", "washington dc"),
    "new york": ("n y", "new york state", "state of new york"),
    "california": ("calif",),
    "scotland": ("scottish",),
    "united kingdom": ("uk", "u k"),
    "northern ireland": (),
    "ireland": ("irish",),
}


_COUNTRIES = {"united kingdom"}  # named beside one of its parts, it adds nothing


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _names(place: str, places: bool) -> tuple[str, ...]:
    base = _norm(place)
    if not places:
        return (base,)
    for canon, others in _ALIASES.items():
        if base == canon or base in others:
            return (canon, *others)
    return (base,)


def _mentions(value: str, entries: dict[str, tuple[str, ...]], code: bool) -> list[str]:
    """The entries a value names, longest wording first, a shorter one inside a longer not counted
    ('Wales' inside 'England and Wales')."""
    text = f" {_norm(value)} "
    hits: list[tuple[int, int, str]] = []
    for entry, names in entries.items():
        for name in names:
            for match in re.finditer(re.escape(f" {name} "), text):
                hits.append((match.start(), match.end(), entry))
    if code:  # 'NY' alone: a model's whole answer is the postal code (never 'in', 'or', 'me' in a sentence)
        bare = value.strip().rstrip(".")
        for entry in entries:
            if bare.isupper() and _STATES.get(_norm(entry)) == bare.lower():
                hits.append((0, len(text), entry))
    hits.sort(key=lambda h: (h[0], -(h[1] - h[0])))
    kept: list[tuple[int, int, str]] = []
    for start, end, entry in hits:
        if not any(s <= start and end <= e for s, e, _ in kept):
            kept.append((start, end, entry))
    return list(dict.fromkeys(entry for _s, _e, entry in kept))


def choose_value(
    value: str,
    kind: str,
    *,
    acceptable: tuple[str, ...],
    fallback: tuple[str, ...] = (),
    unacceptable: tuple[str, ...] = (),
) -> Outcome:
    """One of: met when the value names an acceptable entry, fallback a fallback one; a value naming an
    entry of no list is not met, unless the playbook lists the unacceptable ones: then a person decides
    what it did not foresee. Places match by their usual spellings ('N.Y.', 'State of New York',
    'English law'); text entries as written, case and punctuation aside."""
    places = kind == PLACE
    ranked = {MET: acceptable, FALLBACK: fallback, NOT_MET: unacceptable}
    entries = {e: _names(e, places) for group in ranked.values() for e in group}
    if places:  # every place Folio knows, to tell 'Texas' (another place) from words it cannot read
        for canon in (*_STATES, *_ALIASES):
            entries.setdefault(_title(canon), _names(canon, True))
    named = _mentions(value, entries, places)
    if places and len(named) > 1:  # 'England, United Kingdom': the country of a part named is not another place
        named = [n for n in named if _norm(n) not in _COUNTRIES] or named
    if not named:
        what = "a place" if places else "any of the playbook's values"
        return Outcome(NEEDS_PERSON, f"Folio cannot read {what} in {_short(value)!r}.")
    verdicts = {_rank(name, ranked) for name in named}
    shown = " and ".join(named[:3])
    if len(verdicts) > 1:
        return Outcome(NEEDS_PERSON, f"The contract names {shown}, which the playbook ranks differently.", shown)
    verdict = verdicts.pop()
    if verdict is None:
        if unacceptable:
            return Outcome(NEEDS_PERSON, f"{shown} is in none of the playbook's lists.", shown)
        return Outcome(NOT_MET, f"{shown} is not among {_listed(acceptable + fallback)}.", shown)
    reason = {
        MET: f"{shown} is among the positions ({_listed(acceptable)}).",
        FALLBACK: f"{shown} is a fallback ({_listed(fallback)}).",
        NOT_MET: f"{shown} is unacceptable.",
    }[verdict]
    return Outcome(verdict, reason, shown)


def _title(name: str) -> str:
    """'district of columbia' -> 'District of Columbia'."""
    return " ".join(w if w in ("of", "and") else w.capitalize() for w in name.split())


def _rank(name: str, ranked: dict[str, tuple[str, ...]]) -> str | None:
    for verdict, group in ranked.items():
        if name in group:
            return verdict
    return None


def _listed(names: tuple[str, ...]) -> str:
    return ", ".join(names) if names else "none"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
