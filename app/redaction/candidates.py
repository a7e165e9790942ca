"""What could be redacted: every occurrence of a pattern, a user's term, a name, or an area the user
marked, with its page, the words around it and the boxes that take it out.

A candidate is one occurrence. The user accepts or rejects each (or every one of a kind); only the
accepted ones are removed. Found in the pages' text of app/redaction/pagetext.py, so the text layer
and the words OCR read in pictures are searched alike.

Patterns, terms and names are also looked for where the file hides words (app/redaction/hidden.py: a
comment's note, invisible text, a hidden layer, an attached file, an earlier revision...), so the user
sees them too; such a candidate says where (`hidden`) and has no box, because the copy loses every
hidden place whatever is decided. Accepting one makes the proof look for its words in the copy.
Words the page also shows are listed once, where they are shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from app.redaction.hidden import FILE_PAGE, HiddenText
from app.redaction.kinds import (
    ACCOUNT,
    AMOUNT,
    BIRTH_DATE,
    CARD,
    EMAIL,
    IBAN,
    NATIONAL_ID,
    PATTERN_KINDS,
    PHONE,
    SSN,
)
from app.redaction.pagetext import OCR, PageText, Rect, context, normal, overlaps, rects_of, term_pattern
from app.redaction.patterns import find_patterns

PERSON = "person"
ORGANISATION = "organisation"
PARTY = "party"
TERM = "term"
MARKED = "marked"
NAME_KINDS = (PERSON, ORGANISATION, PARTY)
KINDS = (*PATTERN_KINDS, *NAME_KINDS, TERM, MARKED)

# What each kind is called in the candidate list and the log.
KIND_NAMES = {
    EMAIL: "e-mail address",
    PHONE: "phone number",
    IBAN: "IBAN",
    ACCOUNT: "account number",
    CARD: "card number",
    SSN: "social security number",
    NATIONAL_ID: "ID number",
    BIRTH_DATE: "date of birth",
    AMOUNT: "amount",
    PERSON: "person (model)",
    ORGANISATION: "organisation (model)",
    PARTY: "party (extraction table)",
    TERM: "your term",
    MARKED: "marked passage",
}
# The reason a label gives on the black box ("Redacted: personal data").
REASONS = {
    EMAIL: "personal data",
    PHONE: "personal data",
    SSN: "personal data",
    NATIONAL_ID: "personal data",
    BIRTH_DATE: "personal data",
    PERSON: "personal data",
    IBAN: "financial data",
    ACCOUNT: "financial data",
    CARD: "financial data",
    AMOUNT: "amount",
    ORGANISATION: "name",
    PARTY: "name",
}

PATTERN = "pattern"
MODEL = "model"
EXTRACTION = "extraction"
USER = "user"
AREA = "area"  # a candidate's `via` when it is a marked area rather than words
HIDDEN = "hidden"  # a candidate's `via` when its words are in a hidden place of the file, not the page


@dataclass(frozen=True)
class Candidate:
    key: str  # unique within one document's candidates
    kind: str  # one of KINDS
    page: int  # 1-based
    text: str  # the words as printed, line breaks as spaces ('' for a marked area without text)
    context: str  # the line around it, the words themselves in [brackets]
    source: str  # PATTERN, MODEL, EXTRACTION or USER
    via: str  # 'text' (the text layer), 'ocr' (words read in a picture), AREA or HIDDEN
    ink: tuple[Rect, ...]  # what removes text: each character's ink box, or the marked area
    boxes: tuple[Rect, ...]  # what is blacked out, and pictures and drawings under it removed
    span: tuple[int, int] = (-1, -1)  # where its words are in the page's text (a marked area: none)
    # Where nobody sees it: app/redaction/hidden.py's places ('white text', 'in an annotation', ...),
    # 'partly ' before one that hides only some of its characters; '' when it is shown on the page.
    hidden: str = ""

    @property
    def label(self) -> str:
        reason = REASONS.get(self.kind)
        return f"Redacted: {reason}" if reason else "Redacted"

    @property
    def where(self) -> str:
        """The page as the candidate list says it: 'p. 3', or 'the file' for the file's own objects."""
        return "the file" if self.page == FILE_PAGE else f"p. {self.page}"

    @property
    def found_in(self) -> str:
        """How it was read, when that is not plainly the page's text: 'OCR', or its hidden place."""
        if self.hidden:
            return self.hidden
        return "OCR" if self.via == OCR else ""


@dataclass(frozen=True)
class Name:
    """A name to look for: the model's suggestion or a party from the extraction table."""

    text: str
    kind: str  # PERSON, ORGANISATION or PARTY
    source: str  # MODEL or EXTRACTION


@dataclass(frozen=True)
class Mark:
    """An area the user marked on a page, in unrotated page space."""

    page: int
    rect: Rect


@dataclass
class Search:
    """What to look for in a document."""

    patterns: tuple[str, ...] = PATTERN_KINDS
    terms: tuple[str, ...] = ()
    names: tuple[Name, ...] = ()
    marks: tuple[Mark, ...] = ()
    skipped: list[str] = field(default_factory=list)  # terms that hold no letter or digit


def find_candidates(pages: Iterable[PageText], search: Search, hidden: Iterable[HiddenText] = ()) -> list[Candidate]:
    """Every occurrence on every page, in page and reading order, and in every hidden place (the
    file's own first, then each page's after its shown words)."""
    found: list[Candidate] = []
    term_patterns = []
    for term in dict.fromkeys(t.strip() for t in search.terms if t.strip()):
        pattern = term_pattern(term)
        if pattern is None:
            search.skipped.append(term)
        else:
            term_patterns.append(pattern)
    name_patterns = []
    for name in search.names:
        # The model's names as written, or in capitals (a heading, a signature block); a party name
        # from the table in any case, as a user's term.
        exact = term_pattern(name.text, case=name.source == MODEL)
        upper = term_pattern(name.text.upper(), case=True) if name.source == MODEL else None
        for pattern in (exact, upper):
            if pattern is not None:
                name_patterns.append((pattern, name))

    def words(page: PageText, key: str = "") -> list[Candidate]:
        out = [
            _candidate(page, m.start, m.end, m.kind, PATTERN, key) for m in find_patterns(page.text, search.patterns)
        ]
        for pattern in term_patterns:
            out += [_candidate(page, m.start(), m.end(), TERM, USER, key) for m in pattern.finditer(page.text)]
        for pattern, name in name_patterns:
            out += [
                _candidate(page, m.start(), m.end(), name.kind, name.source, key) for m in pattern.finditer(page.text)
            ]
        return out

    for page in pages:
        on_page = words(page)
        for mark in search.marks:
            if mark.page == page.number:
                on_page.append(marked(page, mark.rect, len(on_page)))
        found.extend(_unique(on_page))
    found.extend(_hidden_candidates(hidden, words, found))
    return sorted(found, key=_order)


def _hidden_candidates(
    hidden: Iterable[HiddenText], words: Callable[[PageText, str], list[Candidate]], shown: list[Candidate]
) -> list[Candidate]:
    """The candidates in each hidden place, but for words the same page shows (listed there already,
    and their hidden copy goes with the place) and a second copy of one in the same kind of place."""
    on_pages = {(c.page, c.kind, _same(c.text)) for c in shown}
    in_places: set[tuple[int, str, str, str]] = set()
    out: list[Candidate] = []
    for n, place in enumerate(hidden):
        size = len(place.text)
        page = PageText(place.page, normal(place.text), [None] * size, [None] * size, [HIDDEN] * size)
        for c in words(page, f"h{n}:"):
            same = (c.page, c.kind, _same(c.text))
            if same in on_pages or (*same, place.where) in in_places:
                continue
            in_places.add((*same, place.where))
            out.append(replace(c, hidden=place.where))
    return out


def _same(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).lower()


def _candidate(page: PageText, start: int, end: int, kind: str, source: str, key: str = "") -> Candidate:
    ink, boxes = rects_of(page, start, end)
    via = page.via[start] if start < len(page.via) else "text"
    return Candidate(
        key=f"{page.number}:{kind}:{key}{start}:{end}",
        kind=kind,
        page=page.number,
        text=" ".join(page.text[start:end].replace("-\n", "").split()),
        context=context(page, start, end),
        source=source,
        via=via,
        ink=tuple(ink),
        boxes=tuple(boxes),
        span=(start, end),
        hidden=_hidden_in(page, start, end),
    )


def _hidden_in(page: PageText, start: int, end: int) -> str:
    """Where words of the page are hidden: the place most of their hidden characters share, 'partly'
    when some of them can be seen."""
    places = [page.hidden_at(i) for i in range(start, end) if not page.text[i].isspace()]
    hidden = [p for p in places if p]
    if not hidden:
        return ""
    most = max(set(hidden), key=hidden.count)
    return most if len(hidden) == len(places) else f"partly {most}"


def marked(page: PageText, rect: Rect, n: int) -> Candidate:
    """An area the user marked: everything under it goes, and its words are what the proof looks for."""
    inside = [i for i, box in enumerate(page.boxes) if box is not None and overlaps(box, rect)]
    words = " ".join("".join(page.text[i] for i in inside).split())
    where = f"{rect[0]:.0f},{rect[1]:.0f}"
    if inside:
        shown = context(page, inside[0], inside[-1] + 1, width=0)
    else:
        shown = "(an area with no text: pictures and drawings under it)"
    return Candidate(
        key=f"{page.number}:{MARKED}:{where}:{n}",
        kind=MARKED,
        page=page.number,
        text=words,
        context=shown,
        source=USER,
        via="area",
        ink=(rect,),
        boxes=(rect,),
        span=(-2 - n, -2 - n),  # a place of its own: no other candidate stands for it
    )


def _unique(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per kind and place (a name found as written and in capitals is one)."""
    kept = {c.key: c for c in reversed(candidates)}  # the first found of each key
    return sorted(kept.values(), key=_order)


def _order(c: Candidate) -> tuple[int, int, float, float]:
    box = c.boxes[0] if c.boxes else (0.0, 0.0, 0.0, 0.0)
    return (c.page, {OCR: 1, HIDDEN: 2}.get(c.via, 0), box[1], box[0])
