"""Key dates: when a contract ends, when it renews, and the last day to give notice of non-renewal.

The inputs are the agreement date, the effective date, the end date or the term, the renewal term
and the notice period. Each comes from the extraction table when one was run on the document (a
reviewer's value first), else from the document's own sentences, read by the date and duration
reader (app.citations.normalise) in the sentences that state it; each input is cited. Code, not a
model, does the arithmetic, and every date says how it was computed ('effective 1 March 1998 + 12
months'). An input that is missing or read two ways is said to be, and nothing is computed from it.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import cast

from app.checks.outline import Outline
from app.checks.text import CheckText, Place
from app.citations.normalise import Fact, find_dates, find_facts

AGREEMENT_DATE = "agreement date"
EFFECTIVE_DATE = "effective date"
END_DATE = "end date"
TERM = "term"
RENEWAL_TERM = "renewal term"
NOTICE_PERIOD = "notice period"
INPUTS = (AGREEMENT_DATE, EFFECTIVE_DATE, END_DATE, TERM, RENEWAL_TERM, NOTICE_PERIOD)

EXPIRY = "expiry"
RENEWAL = "renewal"
NOTICE = "notice deadline"
RENEWALS_SHOWN = 3  # renewal dates listed ahead of the first expiry
OPENING_CHARS = 2500  # the agreement date is stated in the opening words
NOT_STATED = "not stated in words Folio reads"

Duration = tuple[int, str]  # (amount, 'day' | 'month')


@dataclass(frozen=True)
class KeyInput:
    name: str  # one of INPUTS
    shown: str  # the value in words: '1 March 1998', '12 months', or '' when missing
    value: date | Duration | None
    source: str  # 'document', 'extraction run 3', 'extraction run 3 (reviewed)'
    place: Place | None
    quote: str  # the words that state it
    note: str = ""  # why it is missing or not used ('read two ways: 30 days or 60 days')

    @property
    def known(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class KeyDate:
    kind: str  # EXPIRY, RENEWAL or NOTICE
    when: date
    how: str  # 'effective 1 March 1998 + 12 months'
    place: Place | None  # where the input it rests on is stated
    label: str  # 'Expiry of the initial term', 'Last day to give notice of non-renewal', ...


@dataclass
class KeyDates:
    inputs: list[KeyInput]
    dates: list[KeyDate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be computed, and why

    def input(self, name: str) -> KeyInput | None:
        return next((i for i in self.inputs if i.name == name), None)


# -- date arithmetic -------------------------------------------------------------------------------
def add(start: date, duration: Duration, times: int = 1) -> date:
    amount, unit = duration
    if unit == "day":
        return start + timedelta(days=amount * times)
    months = start.month - 1 + amount * times
    year, month = start.year + months // 12, months % 12 + 1
    return date(year, month, min(start.day, calendar.monthrange(year, month)[1]))


def subtract(end: date, duration: Duration) -> date:
    amount, unit = duration
    return add(end, (-amount, unit))


def show_date(when: date) -> str:
    return f"{when.day} {calendar.month_name[when.month]} {when.year}"


def show_duration(duration: Duration) -> str:
    amount, unit = duration
    if unit == "month" and amount % 12 == 0:
        years = amount // 12
        return f"{years} year{'s' if years != 1 else ''}"
    return f"{amount} {unit}{'s' if amount != 1 else ''}"


# -- reading values ----------------------------------------------------------------------------------
def full_date(fact: Fact) -> date | str | None:
    """The date a fact states when it names day, month and year in one reading; 'ambiguous' when an
    all-number date reads two ways ('1/6/16'); None when a part is missing."""
    readings: set[tuple[int, int, int]] = set()
    for reading in fact.readings:
        y, m, d = cast("tuple[int | None, int | None, int | None]", reading)
        if y is not None and m is not None and d is not None:
            readings.add((y, m, d))
    if not readings:
        return None
    if len(readings) > 1:
        return "ambiguous"
    try:
        return date(*next(iter(readings)))
    except ValueError:
        return None


_QUALIFIERS = re.compile(r"(?i)\b(?:full|complete|consecutive)\s+(?=(?:calendar|business)\s)")


def durations(text: str) -> list[tuple[Fact, Duration]]:
    # 'twelve (12) full calendar months': one qualifier is read, two are not; blank the first, keeping offsets.
    text = _QUALIFIERS.sub(lambda m: " " * len(m.group()), text)
    out = []
    for fact in find_facts(text):
        if fact.kind == "duration":
            amount, unit = cast("tuple[float, str]", next(iter(fact.readings)))
            if unit in ("day", "month") and float(amount).is_integer() and 0 < amount <= 1200:
                out.append((fact, (int(amount), unit)))
    return out


def parse_date_value(value: str) -> date | str | None:
    """A table cell's date ('March 14, 2018', '3/14/18'): the date, 'ambiguous', or None."""
    dates = [full_date(f) for f in find_dates(value)]
    found = {d for d in dates if isinstance(d, date)}
    if "ambiguous" in dates and not found:
        return "ambiguous"
    if len(found) == 1:
        return next(iter(found))
    return "ambiguous" if len(found) > 1 else None


def parse_duration_value(value: str) -> Duration | str | None:
    found = {d for _, d in durations(value)}
    if len(found) == 1:
        return next(iter(found))
    return "ambiguous" if found else None


# -- the document's own sentences ------------------------------------------------------------------
_AGREEMENT_CUE = re.compile(
    r"(?i)\b(?:dated(?:\s+as\s+of)?|entered\s+into(?:\s+(?:as\s+of|on|this))?|made(?:\s+and\s+entered\s+into)?"
    r"(?:\s+(?:as\s+of|on|this))?|executed(?:\s+(?:as\s+of|on))?|date:|as\s+of)\s*(?:the\s+)?$"
)
_EFFECTIVE_AFTER = re.compile(r"^\W{0,3}\(?(?:the|this|hereinafter)?\s*[\"']?Effective\s+Date")
_EFFECTIVE_BEFORE = re.compile(
    r"(?i)(?:effective\s+(?:as\s+of|on|from)?|commenc\w*\s+(?:on|as\s+of)?|\"Effective\s+Date\"\s+(?:shall\s+)?means?|"
    r"Effective\s+Date\s*(?:shall\s+be|is|:))\s*(?:the\s+)?$"
)
_EFFECTIVE_CUE = re.compile(r"(?i)effective|commenc")
WINDOW = 120  # characters read for a date on each side of a cue
_SAME_AS_SIGNING = re.compile(
    r"(?i)\"?(?:Effective|Commencement)\s+Date\"?\s*(?:\)|,|:)?\s*(?:shall\s+)?(?:means?|is|shall\s+be)\s+the\s+(?:date\s+"
    r"(?:first\s+)?(?:written|set\s+forth)\s+above|date\s+(?:of\s+this\s+(?:Agreement|Contract)|hereof)|Agreement\s+Date)|"
    r"effective\s+as\s+of\s+the\s+date\s+(?:first\s+)?(?:written|set\s+forth)\s+above"
)
# The document names a start of its own ('the Effective Date', 'the Commencement Date'): counting from
# the agreement date instead would be a guess.
_NAMED_START = re.compile(r"(?:Effective|Commencement)\s+Date\b")
_TERM_SENTENCE = re.compile(
    r"(?i)\b(?:term\s+of\s+(?:this|the)\s+(?:agreement|contract)|initial\s+term|(?:this|the)\s+(?:agreement|contract)\s+"
    r"(?:(?:shall|will)\s+(?:commence|begin|continue|remain|be\s+in\s+(?:full\s+)?(?:force|effect)|expire|terminate|"
    r"become\s+effective|run)|commences|begins|continues|remains|expires|terminates|runs)|agreement\s+term|"
    r"\bterm\.\s|\"term\"|\bthe\s+term\s+(?:of|shall|will|is)\b|\d\s*\)?[ -]"
    r"(?:year|month)s?\s+term)"
)
_END_CUE = re.compile(
    r"(?i)(?:until|through|expire[sd]?\s+(?:on|at\s+\w+\s+on)?|terminate[sd]?\s+(?:automatically\s+)?(?:without\s+notice\s+)?"
    r"(?:on|at\s+\w+\s+on)|ending\s+on|end\s+on|ends\s+on|to\s+and\s+including|expiring\s+on|up\s+to\s+and\s+including|"
    r"termination\s+date\s*:?|expiration\s+date\s*:?|to)\s*(?:the\s+)?$"
)
# 'until the earlier of (i) December 31, 2022, (ii) ...': the latest it can end.
_EARLIER_CUE = re.compile(r"(?i)until\s+the\s+earli\w+\s+(?:to\s+occur\s+)?of\s*:?\s*(?:\((?:i|a|1)\)\s*)?$")
_TERM_CUE = re.compile(
    r"(?i)(?:for\s+(?:a|an)\s+(?:initial\s+)?(?:period|term)\s+of|(?:initial\s+)?term\s+(?:of\s+this\s+agreement\s+)?"
    r"(?:shall\s+be|will\s+be|is|of)|continues?\s+(?:in\s+(?:full\s+force\s+and\s+)?effect\s+)?for(?:\s+a\s+period\s+of)?|"
    r"remains?\s+in\s+(?:full\s+)?(?:force\s+and\s+)?effect\s+for(?:\s+a\s+period\s+of)?|extend\s+for\s+a\s+period\s+of|"
    r"(?:shall|will)\s+be\s+for|(?:shall|will)\s+run\s+for)\s*(?:the\s+)?(?:initial\s+)?$"
)
_TERM_AFTER = re.compile(r"(?i)^\s*(?:initial\s+)?term\b")  # 'the 12 month term'
_NOT_TERM = re.compile(
    r"(?i)^\W{0,3}(?:prior|before|after|notice|following|in\s+advance|from\s+(?:the\s+)?(?:date\s+of\s+)?"
    r"(?:receipt|notice|termination|expiration))"
)
_NOT_TERM_BEFORE = re.compile(r"(?i)\b(?:within|notice|cure|remedy|after|following|thereafter)\b")
_LATER_SIGNATURE = re.compile(
    r"(?i)Effective\s+Date[^.]{0,60}?\b(?:the\s+)?(?:later|last)\s+of\s+the\s+dates?\s+(?:shown\s+by|of|on\s+which)"
    r"[^.]{0,40}?sign"
)
_RENEW_SENTENCE = re.compile(r"(?i)\b(?:renew\w*|extend\w*\s+(?:automatically|for\s+(?:successive|additional)))")
_AUTO = re.compile(
    r"(?i)\b(?:automatic\w*|shall\s+(?:thereafter\s+)?(?:be\s+)?(?:renew|extend)\w*|will\s+(?:be\s+)?(?:renew|extend)\w*|"
    r"unless\s+(?:either|one|a|any)\s+party)"
)
_MUTUAL = re.compile(
    r"(?i)\b(?:mutual(?:ly)?\s+(?:written\s+)?agree\w*|by\s+mutual|upon\s+the\s+agreement\s+of|if\s+the\s+parties\s+agree)"
)
_NOTICE_AFTER = re.compile(
    r"(?i)^\W{0,3}(?:(?:calendar|business)\s+days?\s+)?(?:(?:prior|advance)\s+(?:written\s+)?(?:notice\s+)?)?(?:prior\s+to|before|"
    r"in\s+advance\s+of|preceding)\b"
)
_NOTICE_WORD = re.compile(r"(?i)\bnotice|notif")
_OTHER_TERM = re.compile(r"\b([A-Z][a-z]+)\s+Term\b")  # 'the Services Term', 'each License Term'
# An order, a statement of work or an attachment that renews on its own terms, not the agreement.
_OTHER_PAPER = re.compile(
    r"(?i)\b(?:attachment|purchase\s+order|order\s+form|statement\s+of\s+work|SOW|license\s+term)s?\b"
)
_OWN_TERMS = frozenset({"The", "This", "Such", "Initial", "Renewal", "Extended", "Additional", "Original", "Agreement",
                        "Contract", "Current", "Any", "Each", "Subsequent"})  # fmt: skip


@dataclass(frozen=True)
class _Found:
    value: date | Duration
    start: int
    end: int


def _first_clause_start(outline: Outline) -> int:
    return min((c.start for c in outline.clauses if c.part == 0), default=OPENING_CHARS)


def agreement_date(text: CheckText, outline: Outline) -> list[_Found]:
    """Dates the opening words give the agreement: 'dated as of', 'entered into on', 'made this 14th day of'."""
    limit = max(min(_first_clause_start(outline), OPENING_CHARS * 2), 600)
    opening = text.text[:limit]
    found = []
    for fact in find_dates(opening):
        before = opening[max(0, fact.start - 60) : fact.start]
        if not _AGREEMENT_CUE.search(before) and not re.search(r"(?i)\bthis\s*$", before):
            continue
        if _EFFECTIVE_AFTER.match(opening[fact.end : fact.end + 40]) or re.search(r"(?i)power\s+of\s+attorney", before):
            continue  # 'as of 1 July 2017 (the "Effective Date")': that is the effective date
        value = full_date(fact)
        if isinstance(value, date):
            found.append(_Found(value, fact.start, fact.end))
    return found[:1]


def effective_date(text: CheckText) -> tuple[list[_Found], int | None]:
    """Dates stated as the effective date or the start of the term; and where the text says the
    effective date is the date of signing ('the date first written above'), when it does."""
    found = []
    seen: set[int] = set()
    for cue in _EFFECTIVE_CUE.finditer(text.text):
        # Only the words around each cue are read for dates: reading a 100-page text whole takes long.
        lo = max(0, cue.start() - WINDOW)
        window = text.text[lo : cue.end() + WINDOW]
        for fact in find_dates(window):
            start, end = lo + fact.start, lo + fact.end
            if start in seen:
                continue
            after = text.text[end : end + 40]
            before = text.text[max(0, start - 80) : start]
            if not (_EFFECTIVE_AFTER.match(after) or _EFFECTIVE_BEFORE.search(before)):
                continue
            value = full_date(fact)
            if isinstance(value, date):
                seen.add(start)
                found.append(_Found(value, start, end))
    found.sort(key=lambda f: f.start)
    same = _SAME_AS_SIGNING.search(text.text)
    return found, same.start() if same else None


def later_signature(text: CheckText) -> _Found | None:
    """'The Effective Date shall be the later of the dates shown by the signatures below': that date."""
    if _LATER_SIGNATURE.search(text.text) is None:
        return None
    dates = [f for f in signature_dates(text) if isinstance(f.value, date)]
    return max(dates, key=lambda f: cast(date, f.value)) if dates else None


def _sentences(text: CheckText, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    seen: list[tuple[int, int]] = []
    for match in pattern.finditer(text.text):
        span = text.sentence(match.start(), match.end())
        if span not in seen:
            seen.append(span)
    return seen


def term_and_end(text: CheckText, outline: Outline) -> tuple[list[_Found], list[_Found], bool]:
    """In the sentences about the agreement's term: an end date ('until 31 December 2022') and a
    length ('for a period of three (3) years', 'the 12 month term'); and whether the end date is the
    latest of several ('until the earlier of (i) 31 December 2022, (ii) ...')."""
    ends: list[_Found] = []
    lengths: list[_Found] = []
    outside = False
    for first, last in _sentences(text, _TERM_SENTENCE):
        renew = _RENEW_SENTENCE.search(text.text[first:last])
        # In a sentence that goes on to the renewal, only the words before it state the term.
        sentence = text.text[first : first + renew.start()] if renew else text.text[first:last]
        # 'during the term and for 12 months thereafter': a covenant's own period, not the term
        covenant = re.search(r"(?i)\bduring\s+the\s+term\b", sentence) is not None
        for fact in find_dates(sentence):
            before = sentence[max(0, fact.start - 60) : fact.start]
            earlier = _EARLIER_CUE.search(before)
            if earlier or _END_CUE.search(before[-40:]):
                value = full_date(fact)
                if isinstance(value, date):
                    ends.append(_Found(value, first + fact.start, first + fact.end))
                    outside = outside or bool(earlier)
        for fact, duration in durations(sentence):
            before = sentence[max(0, fact.start - 60) : fact.start]
            after = sentence[fact.end : fact.end + 40]
            if covenant or _NOT_TERM.match(after) or _NOT_TERM_BEFORE.search(before[-30:]):
                continue
            if re.search(r"(?i)\b(?:renew\w*|prolong\w*|extension|extended|automatically)\b", before):
                continue  # 'and be extended automatically for a period of 12 months': the renewal term
            if _TERM_CUE.search(before) or _TERM_AFTER.match(after):
                lengths.append(_Found(duration, first + fact.start, first + fact.end))
    return _body_first(outline, ends), _body_first(outline, lengths), outside


def _body_first(outline: Outline, found: list[_Found]) -> list[_Found]:
    """What the agreement's body says, before what its attachments say (a statement of work has its own term)."""
    body = [f for f in found if outline.part_of(f.start) == 0]
    return body or found


def signature_dates(text: CheckText) -> list[_Found]:
    """Dates in the signature block ('Date: 3-14-18'), after 'IN WITNESS WHEREOF'."""
    at = text.text.find("IN WITNESS")
    if at == -1:
        at = text.text.lower().find("in witness whereof")
    if at == -1:
        return []
    block = text.text[at : at + 1500]
    found = []
    for fact in find_dates(block):
        value = full_date(fact)
        if isinstance(value, date):
            found.append(_Found(value, at + fact.start, at + fact.end))
    return found


def renewal_and_notice(text: CheckText, outline: Outline) -> tuple[list[_Found], list[_Found], bool, bool]:
    """The renewal term and the notice period of non-renewal, from the sentences about renewal;
    whether renewal is automatic, and whether it needs the parties' agreement."""
    renewals: list[_Found] = []
    notices: list[_Found] = []
    automatic = mutual = False
    for first, last in _sentences(text, _RENEW_SENTENCE):
        sentence = text.text[first:last]
        automatic = automatic or bool(_AUTO.search(sentence))
        mutual = mutual or bool(_MUTUAL.search(sentence))
        renew = _RENEW_SENTENCE.search(sentence)
        subject = sentence[: renew.start()] if renew else sentence
        other = _OTHER_TERM.search(subject)
        if (other and other.group(1) not in _OWN_TERMS) or _OTHER_PAPER.search(subject):
            continue  # 'The Services Term ... shall be automatically renewed': another period renews, not the agreement
        for fact, duration in durations(sentence):
            if renew is not None and fact.end <= renew.start() and not _NOTICE_WORD.search(sentence[: fact.start]):
                continue  # the initial term, stated before the renewal in the same sentence
            after = sentence[fact.end : fact.end + 60]
            before = sentence[max(0, fact.start - 60) : fact.start]
            if _NOTICE_AFTER.match(after) or _NOTICE_WORD.search(before[-30:]):
                if _NOTICE_WORD.search(sentence):
                    notices.append(_Found(duration, first + fact.start, first + fact.end))
            elif re.search(
                r"(?i)(?:successive|additional|further|renewal|consecutive|periods?\s+of|terms?\s+of|for)\s*$", before
            ):
                renewals.append(_Found(duration, first + fact.start, first + fact.end))
    return _body_first(outline, renewals), _body_first(outline, notices), automatic, mutual


# -- putting it together ---------------------------------------------------------------------------
def _from_document(text: CheckText, name: str, found: list[_Found]) -> KeyInput:
    values = list(dict.fromkeys(f.value for f in found))
    if not values:
        return KeyInput(name, "", None, "document", None, "", NOT_STATED)
    shown = [show_date(v) if isinstance(v, date) else show_duration(v) for v in values]
    first = found[0]
    place = text.place(first.start)
    quote = text.quote(first.start, first.end)
    if len(values) > 1:
        return KeyInput(name, "", None, "document", place, quote, f"stated more than one way: {' or '.join(shown)}")
    return KeyInput(name, shown[0], values[0], "document", place, quote)


def document_inputs(outline: Outline) -> tuple[list[KeyInput], bool, bool]:
    text = outline.text
    agreed = _from_document(text, AGREEMENT_DATE, agreement_date(text, outline))
    effective_found, same_at = effective_date(text)
    latest = later_signature(text)
    in_body = [f for f in effective_found if outline.part_of(f.start) == 0]
    effective = _from_document(text, EFFECTIVE_DATE, in_body or ([latest] if latest else effective_found))
    if latest is not None and not in_body:
        effective = KeyInput(EFFECTIVE_DATE, effective.shown, effective.value, "document", effective.place,
                             effective.quote, "the later of the signature dates, as the text says")  # fmt: skip
    if not effective.known and not effective.note.startswith("stated") and same_at is not None and agreed.known:
        effective = KeyInput(EFFECTIVE_DATE, agreed.shown, agreed.value, "document", text.place(same_at),
                             text.quote(same_at), "the date of signing, as the text says")  # fmt: skip
    ends, lengths, outside = term_and_end(text, outline)
    renewals, notices, automatic, mutual = renewal_and_notice(text, outline)
    renewal = _from_document(text, RENEWAL_TERM, renewals)
    if renewal.known and mutual and not automatic:
        renewal = KeyInput(RENEWAL_TERM, renewal.shown, None, "document", renewal.place, renewal.quote,
                           "renewal needs the parties' agreement: no automatic renewal date")  # fmt: skip
    end = _from_document(text, END_DATE, ends)
    if outside and end.known:
        end = KeyInput(END_DATE, end.shown, end.value, end.source, end.place, end.quote,
                       "the latest end: the agreement may end earlier on an event it names")  # fmt: skip
    inputs = [
        agreed,
        effective,
        end,
        _from_document(text, TERM, lengths),
        renewal,
        _from_document(text, NOTICE_PERIOD, notices),
    ]
    return inputs, automatic, mutual


def compute(inputs: list[KeyInput], *, automatic: bool = True, named_start: bool = False) -> KeyDates:
    """The key dates the inputs allow, each with how it was computed; notes for what they do not."""
    result = KeyDates(inputs)
    get = {i.name: i for i in inputs}
    start_input = get[EFFECTIVE_DATE] if get[EFFECTIVE_DATE].known else None
    start_word = "effective"
    unclear_start = get[EFFECTIVE_DATE].note not in ("", NOT_STATED)  # stated two ways, or a table value unread
    if start_input is None and get[AGREEMENT_DATE].known and not unclear_start and not named_start:
        start_input, start_word = get[AGREEMENT_DATE], "agreement dated"
    end: date | None = None
    how = ""
    place = None
    stated, term = get[END_DATE], get[TERM]
    if stated.known:
        end, how, place = stated.value, f"the end date the agreement states ({stated.shown})", stated.place  # type: ignore[assignment]
        if stated.note:
            how += f"; {stated.note}"
    elif term.known and start_input is not None:
        end = add(start_input.value, term.value)  # type: ignore[arg-type]
        how = f"{start_word} {start_input.shown} + {term.shown}"
        if start_word != "effective":
            how += " (no effective date stated: counted from the agreement date)"
        place = term.place
    elif term.known:
        start = "the effective date is named but not given as a date" if named_start else "no start date was found"
        result.notes.append(f"The term is {term.shown}, but {start}: nothing to count it from.")
    elif stated.note not in ("", NOT_STATED) or term.note not in ("", NOT_STATED):
        unclear = stated if stated.note not in ("", NOT_STATED) else term
        result.notes.append(f"The {unclear.name}: {unclear.note}; no expiry is computed.")
    else:
        result.notes.append("No end date or length of the term was found; no expiry is computed.")
    if end is None:
        return result
    result.dates.append(KeyDate(EXPIRY, end, how, place, "End of the initial term"))
    renewal, notice = get[RENEWAL_TERM], get[NOTICE_PERIOD]
    periods = [end]
    if renewal.known and automatic:
        for k in range(1, RENEWALS_SHOWN + 1):
            when = add(end, renewal.value, k)  # type: ignore[arg-type]
            periods.append(when)
            result.dates.append(
                KeyDate(
                    RENEWAL,
                    when,
                    f"{show_date(end)} + {k} × {renewal.shown}",
                    renewal.place,
                    f"End of renewal term {k}",
                )
            )
    elif renewal.note not in ("", NOT_STATED):
        result.notes.append(f"Renewal term: {renewal.note}.")
    if notice.known and renewal.known and automatic:
        for k, period_end in enumerate(periods):
            when = subtract(period_end, notice.value)  # type: ignore[arg-type]
            which = "the initial term" if k == 0 else f"renewal term {k}"
            result.dates.append(
                KeyDate(
                    NOTICE,
                    when,
                    f"end of {which} {show_date(period_end)} − {notice.shown} notice",
                    notice.place,
                    f"Last day to give notice of non-renewal before the end of {which}",
                )
            )
    elif renewal.known and automatic and not notice.known:
        result.notes.append("The agreement renews, but no notice period for non-renewal was found.")
    result.dates.sort(key=lambda d: d.when)
    return result


def key_dates(outline: Outline, table: dict[str, KeyInput] | None = None) -> KeyDates:
    """The key dates of a document: its own sentences, with the extraction table's values (already
    read into inputs, reviewed ones first) taking the place of the document's where they have one."""
    inputs, automatic, _mutual = document_inputs(outline)
    if table:
        inputs = [table.get(i.name, i) for i in inputs]
        renewal = table.get(RENEWAL_TERM)
        automatic = automatic or bool(renewal and renewal.known)
    named_start = bool(_NAMED_START.search(outline.text.text))
    return compute(inputs, automatic=automatic, named_start=named_start)
