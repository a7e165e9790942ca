"""Cross-references: every 'Section 12.3', 'clause 4(a)', 'Article IV', 'Schedule B', 'Exhibit 2' and
'paragraph 7 above' in a document, resolved to the clause or attachment it names.

A reference is reported broken only when Folio is sure it points inside this document and it can
see the document's numbering: a reference to another instrument ('Section 409A of the Code', 'Rule
144', 'Section 5 of the Lease', 'Exhibit 10.1 to the Company's Form 8-K') is left alone, and in a
document whose clauses Folio finds no numbers for, nothing is called missing. Problems:

- missing: no clause with that number (numbers compare by value: 'Article 4' is 'ARTICLE IV');
- item missing: the clause is there, the lettered item ('(d)') is not printed in it;
- not attached: no exhibit or schedule of that name in the document (often filed apart: said so);
- heading differs: the reference calls the clause by a name ('Section 9 (Confidentiality)') that
  shares no word with the heading printed on it;
- wrong direction: 'Section 8.7 below' pointing to a clause above it, or 'above' to one below.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.checks.outline import Outline, Target, attachment_key, clause_key
from app.checks.text import CheckText, Place, word_set

RESOLVED = "resolved"
UNCHECKED = "unchecked"  # external, or nothing to compare it with: not a problem
MISSING = "missing"
ITEM_MISSING = "item_missing"
NOT_ATTACHED = "not_attached"
HEADING_DIFFERS = "heading_differs"
WRONG_DIRECTION = "wrong_direction"
PROBLEMS = (MISSING, ITEM_MISSING, NOT_ATTACHED, HEADING_DIFFERS, WRONG_DIRECTION)

_CLAUSE_WORD = r"(?:sections?|sec\.|§§?|clauses?|articles?|paragraphs?|subsections?|sub-sections?|subparagraphs?)"
_ATTACH_WORD = r"(?:exhibits?|schedules?|annex(?:es)?|appendix|appendices|attachments?)"
# A statute's numbers ('§ 80C.14', 'Section 51-19-09', 'Section 1281') are not read as clause numbers.
_NUM = r"\d{1,3}(?:\.\d{1,3}){0,4}(?![\w])(?!\.\d)(?!-\d+-)(?:\s?\([A-Za-z0-9]{1,4}\))*"
_ROMAN = r"[IVXL]{1,7}(?![\w])(?:\([A-Za-z0-9]{1,4}\))*"
_PAREN = r"\([a-z0-9]{1,4}\)(?:\([a-z0-9]{1,4}\))*"
_ATTACH_ID = r"(?:[A-Z](?:-\d{1,2})?|\d{1,2}(?:-[A-Z0-9])?)(?![\w])(?!\.\d)"
_ID = rf"(?:{_NUM}|{_ROMAN}|{_PAREN}|{_ATTACH_ID})"
_JOIN = r"\s*(?:,\s*(?:and|or)?|;|\band/or\b|\band\b|\bor\b|\bthrough\b|\bto\b|&|-|–)\s*"
_REFERENCE = re.compile(
    rf"(?<![\w-])(?P<word>(?i:{_CLAUSE_WORD}|{_ATTACH_WORD}))\s*(?P<ids>{_ID}(?:{_JOIN}(?:(?i:{_CLAUSE_WORD}|{_ATTACH_WORD})\s*)?{_ID})*)"
)
_ONE_ID = re.compile(rf"(?P<word>(?i:{_CLAUSE_WORD}|{_ATTACH_WORD}))?\s*(?P<id>{_ID})")
# What another instrument's section looks like: 'of the Securities Act', 'of the Code', 'to the Company's
# Form 8-K', 'of Regulation S-K'. 'Of this Agreement', 'hereof' and 'above' keep it here.
_OWN = re.compile(
    r"^(?:of\s+this\b|to\s+this\b|in\s+this\b|under\s+this\b|hereof|herein|hereto|hereunder|above|below|"
    r"of\s+(?:the|this)\s+(?:Agreement|Contract)\b(?!\s+(?:dated|between|by)))",
    re.IGNORECASE,
)
_OTHER = re.compile(
    r"^(?i:of|under|to|in|pursuant\s+to)\s+(?i:the\s+|such\s+|any\s+|that\s+|each\s+|an?\s+)?"
    r"(?:[A-Z0-9$][\w.'&-]*|U\.S\.|Title|Form|Regulation|Rule)|^et\.?\s+seq",
)
_OTHER_BEFORE = re.compile(
    r"(?:\b(?:Act|Code|Regulations?|Rules?|U\.S\.C|C\.F\.R|Stat|Statutes?|Law|Treaty|Convention|IRC|ERISA|Form|"
    r"Item|Chapter|Title)|\d+\s+U\.S\.C\.?)\.?\s*[,.]?\s*$",
)
# 'the Master Framework Agreement', 'the Lease': another instrument named in the same sentence.
_OTHER_INSTRUMENT = re.compile(
    r"\b(?:of|under|in|to)\s+the\s+(?!Agreement\b)(?:[A-Z][\w&'-]*\s+){0,5}(?:Agreement|Contract|Lease|Plan|Note|"
    r"Indenture|Policy|Act|Code|Regulations|Rules|Charter|Bylaws)\b"
)
_THIS = re.compile(r"\b(?:this\s+Agreement|hereof|hereunder|herein|hereto)\b", re.IGNORECASE)
_LIST_REST = re.compile(rf"^(?:{_JOIN}(?:(?i:{_CLAUSE_WORD}|{_ATTACH_WORD})\s*)?{_ID})*")
LABEL_WORDS = 5  # a block this short that names a reference is a label ('FDD Exhibit H-1'), not a sentence
_NAMED = re.compile(r"^\s*\((?P<name>[A-Z][^()]{2,80})\)")
_DIRECTION = re.compile(r"^[\s,]*(?:\([^)]{0,80}\)\s*)?(?P<way>above|below|hereinabove|hereinbelow)\b", re.IGNORECASE)
_STOP = word_set(
    """the of and or to in for on by with a an this that its any all such as under from other party parties
    agreement section clause article"""
)
_UNIT_AFTER = re.compile(r"^\s*(?:days?|months?|years?|hours?|weeks?|percent|%|business|calendar)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Reference:
    written: str  # the reference as printed ('Section 12.3(a)'; one of 'Sections 2.2 and 2.3')
    key: str  # what it asks for: '12.3(a)', 'exhibit A', '(b)' for a relative one
    start: int
    end: int
    place: Place
    status: str  # RESOLVED, UNCHECKED or one of PROBLEMS
    note: str  # plain words: what it points to, or what is wrong
    target: Target | None = None
    named: str = ""  # the name the reference gives its target ('Confidentiality'), when it gives one
    quote: str = ""  # the sentence it stands in

    @property
    def problem(self) -> bool:
        return self.status in PROBLEMS


def find_references(outline: Outline) -> list[Reference]:
    text = outline.text
    heading_spans = {(a.start, a.start + len(a.printed)) for a in outline.attachments}
    clause_starts = {c.start for c in outline.clauses}
    found: list[Reference] = []
    for match in _REFERENCE.finditer(text.text):
        if (match.start(), match.start() + len(match.group(0))) in heading_spans or match.start() in clause_starts:
            continue  # a heading ('EXHIBIT A', 'Section 12. Notices'), not a reference to one
        line_start = text.text.rfind("\n", 0, match.start()) + 1
        line_end = text.text.find("\n", match.end())
        line = text.text[line_start : line_end if line_end != -1 else len(text.text)]
        if len(line.split()) <= LABEL_WORDS and not line.rstrip().endswith((".", ";", ":", ",")):
            continue  # a label or a running footer ('FDD Exhibit H-1'), not a sentence
        external = _external(text, match)
        word_now = match.group("word")
        shape = ""
        for piece in _ONE_ID.finditer(match.group("ids")):
            ident = piece.group("id")
            if piece.group("word"):
                word_now, shape = piece.group("word"), ""
            elif shape and _shape(ident) != shape:
                break  # 'Schedule C, 3(d)': the list went on with something else
            shape = shape or _shape(ident)
            start = match.start("ids") + piece.start("id")
            end = match.start("ids") + piece.end("id")
            if _UNIT_AFTER.match(text.text[end : end + 12]):
                break  # 'Section 5 and 30 days': the list ended before the number
            written = f"{word_now} {ident}" if piece.start() else match.group(0)[: end - match.start()]
            last = end == match.end()
            tail = text.text[end : end + 120] if last else ""
            direction = _DIRECTION.match(text.text[match.end() : match.end() + 120])
            found.append(_resolve(outline, " ".join(written.split()), word_now, re.sub(r"\s", "", ident), start, end,
                                  external, tail, direction.group("way").lower() if direction else ""))  # fmt: skip
    return found


def _shape(ident: str) -> str:
    if ident.startswith("("):
        return "item"
    if ident[:1].isdigit():
        return "number"
    return "roman" if re.fullmatch(r"[IVXL]+(?:\(.*)?", ident) else "letter"


def _external(text: CheckText, match: re.Match[str]) -> bool:
    """The reference names a part of another instrument or a law: what follows it says so ('of the
    Code'), what comes before it does ('Securities Act Section 12'), or its sentence names another
    agreement and not this one."""
    after = text.text[match.end() : match.end() + 200]
    after = _LIST_REST.sub("", re.sub(r"\([^()]{0,80}\)", "", after)).lstrip(" ,\n")
    if _OWN.match(after):
        return False
    if _OTHER.match(after) or _OTHER_BEFORE.search(text.text[max(0, match.start() - 40) : match.start()]):
        return True
    first, last = text.sentence(match.start(), match.end())
    sentence = text.text[first:last]
    return bool(_OTHER_INSTRUMENT.search(sentence)) and not _THIS.search(sentence)


@dataclass(frozen=True)
class _Spot:
    """One reference as printed, before it is resolved."""

    written: str
    start: int
    end: int
    place: Place
    quote: str

    def ref(self, key: str, status: str, note: str, target: Target | None = None, named: str = "") -> Reference:
        return Reference(self.written, key, self.start, self.end, self.place, status, note, target, named, self.quote)


def _resolve(
    outline: Outline, written: str, word: str, ident: str, start: int, end: int, external: bool, after: str,
    direction: str,
) -> Reference:  # fmt: skip
    spot = _Spot(written, start, end, outline.text.place(start), outline.text.quote(start, end))
    attachment_word = re.match(_ATTACH_WORD, word, re.IGNORECASE) is not None
    if attachment_word:
        if ident.startswith("(") or re.fullmatch(r"\d+\.\d+.*", ident):  # 'Exhibit 10.1': a filing's number
            return spot.ref(ident, UNCHECKED, "not an attachment of this document")
        key = attachment_key(word, ident)
        if external:
            return spot.ref(key, UNCHECKED, "another document's attachment")
        return _attachment(outline, spot, key)
    if ident.startswith("("):
        return _relative(outline, spot, ident)
    key = clause_key(ident)
    if external:
        return spot.ref(key, UNCHECKED, "a section of another document or law")
    if not key[:1].isdigit():  # 'Section D', 'Paragraphs A through C': lettered paragraphs (recitals)
        return _lettered(outline, spot, key)
    return _clause(outline, spot, key, after, direction)


def _lettered(outline: Outline, spot: _Spot, key: str) -> Reference:
    at = re.search(rf"(?m)^\s*\(?{re.escape(key)}[.)]\s", outline.text.text)
    if at is None:
        return spot.ref(key, UNCHECKED, "no paragraph lettered so that Folio could find")
    return spot.ref(key, RESOLVED, f"paragraph {key} on {outline.text.place(at.start()).cited()}")


def _attachment(outline: Outline, spot: _Spot, key: str) -> Reference:
    target = outline.attachment(key) or _titled_somewhere(outline, key, titles_only=True)
    if target is not None:
        return spot.ref(key, RESOLVED, f"{target.printed} on {target.place.cited()}", target)
    mention = _titled_somewhere(outline, key, titles_only=False)
    if mention is not None:  # named where a title could stand, yet not as one: neither found nor missing
        note = f"named at a line's start on {mention.place.cited()}, but not as a title: it may be filed apart"
        return spot.ref(key, UNCHECKED, note)
    kind = key.split(" ", 1)[0]
    note = f"no {kind} of that name is in this document (it may have been filed or kept apart)"
    return spot.ref(key, NOT_ATTACHED, note)


def _titled_somewhere(outline: Outline, key: str, *, titles_only: bool) -> Target | None:
    """An attachment's title not laid out as a heading: 'EXHIBIT A' in capitals or opening a table cell
    (a title page in a table, a title run into other text); unless `titles_only`, also any line that
    opens with the name, which keeps a wrapped reference from being taken for a missing attachment."""
    word, ident = key.split(" ", 1)
    text = outline.text.text
    lines = "" if titles_only else rf"(?:^|\n)\s*(?i:{word})|"
    pattern = re.compile(rf"(?:{lines}\|\s*(?i:{word})|{word.upper()})S?\s+[\"']?{re.escape(ident)}(?![\w])")
    match = pattern.search(text)
    if match is None:
        return None
    start = match.start() + len(match.group()) - len(match.group().lstrip("|\n "))
    return Target(key, text[start : match.end()].strip(), "", start, start, outline.text.place(start), 0)


def _relative(outline: Outline, spot: _Spot, ident: str) -> Reference:
    """'paragraph (b)', 'clause (ii)': a lettered item of the clause the reference sits in (or its parents)."""
    items = re.findall(r"\(([a-z0-9]{1,4})\)", ident)
    clause = outline.clause_at(spot.start)
    while clause is not None:
        if all(outline.has_sub_item(clause, item) for item in items):
            return spot.ref(ident, RESOLVED, f"in {clause.printed} on {clause.place.cited()}", clause)
        clause = outline.clause_at(clause.start - 1) if clause.start else None
        if clause is not None and clause.end <= spot.start:
            break
    return spot.ref(ident, UNCHECKED, "a lettered item Folio could not place")


def _clause(outline: Outline, spot: _Spot, key: str, after: str, direction: str) -> Reference:
    head, _, _ = key.partition("(")
    items = re.findall(r"\(([A-Za-z0-9]{1,4})\)", key)
    part = outline.part_of(spot.start)
    exact = outline.find(key, part) if items else []
    candidates = exact or outline.find(head, part)
    named = _named(after)
    if not candidates:
        return _not_found(outline, spot, key, head, part, named)
    target = candidates[0]
    if items and not exact and not all(_has_item(outline, target, item) for item in items):
        missing = next(item for item in items if not _has_item(outline, target, item))
        if _redacted(outline, target):
            return spot.ref(key, UNCHECKED, f"{target.printed} is redacted in this copy", target, named)
        return spot.ref(key, ITEM_MISSING, f"{target.printed} has no item ({missing})", target, named)
    where = f"{target.printed}{' ' + target.heading if target.heading else ''} on {target.place.cited()}"
    if named and target.heading and not same_heading(named, target.heading):
        note = f"it calls it “{named}”; {target.printed} is headed “{target.heading}”"
        return spot.ref(key, HEADING_DIFFERS, note, target, named)
    inside = target.start <= spot.start < target.end
    if direction and len(candidates) == 1 and part == target.part == 0 and not inside:
        says_above = direction in ("above", "hereinabove")
        if says_above != (target.start < spot.start):
            shown = "below" if says_above else "above"
            note = f"it says {direction}, but {target.printed} is {shown} it, on {target.place.cited()}"
            return spot.ref(key, WRONG_DIRECTION, note, target, named)
    return spot.ref(key, RESOLVED, where, target, named)


def _not_found(outline: Outline, spot: _Spot, key: str, head: str, part: int, named: str) -> Reference:
    """No clause with that number by the strict rules: its sub-clauses ('15.1' for '15'), or a line
    that opens with the number, still resolve it; a redacted parent or an unnumbered document leave
    it unchecked; only then is it missing."""
    children = outline.children(head, part)
    if children:
        first = children[0]
        return spot.ref(
            key, RESOLVED, f"{head} (its first clause {first.printed} on {first.place.cited()})", first, named
        )
    at = outline.printed_at_line_start(head)
    if at is not None:
        return spot.ref(key, RESOLVED, f"{head} on {outline.text.place(at).cited()}", named=named)
    if spot.written.startswith("§") and outline.printed_at_line_start("§") is None:
        return spot.ref(key, UNCHECKED, "a section of a law (the document numbers no clause with §)", named=named)
    if not outline.numbered:
        return spot.ref(key, UNCHECKED, "Folio found no numbered clauses to match it with", named=named)
    parent = head.rsplit(".", 1)[0] if "." in head else ""
    holder = next(iter(outline.find(parent, part)), None) if parent else None
    if holder is not None and _redacted(outline, holder):
        return spot.ref(key, UNCHECKED, f"{holder.printed} is redacted in this copy", named=named)
    return spot.ref(key, MISSING, f"there is no clause {head} in this document", named=named)


def _redacted(outline: Outline, target: Target) -> bool:
    """'[***]' in the clause: text taken out before filing, so what is missing may be under it."""
    return "***" in outline.text.text[target.start : target.end]


def _has_item(outline: Outline, target: Target, item: str) -> bool:
    span = outline.text.text[target.start : target.end]
    # '(a)', or 'A.' / 'a)' opening a line of the clause
    return outline.has_sub_item(target, item) or re.search(rf"(?im)^\s*{re.escape(item)}[.)]\s", span) is not None


def _named(after: str) -> str:
    """The name a reference gives in brackets: 'Section 9 (Confidentiality)'. Lower-case asides ('(as
    amended)'), lettered items and sentences are not names."""
    match = _NAMED.match(after)
    if match is None:
        return ""
    name = " ".join(match.group("name").split())
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", name) if w.lower() not in _STOP]
    if not words or len(name.split()) > 8 or not all(w[0].isupper() for w in words):
        return ""
    if re.match(r"(?i)(?:as|including|each|if|which|other|or|and|the|see|e\.g|i\.e)\b", name):
        return ""
    return name


def _stems(text: str) -> set[str]:
    words = re.findall(r"[a-z]{3,}", text.lower())
    return {w[:6] for w in words if w not in _STOP}


def same_heading(named: str, heading: str) -> bool:
    """A name fits a heading when they share a word (by its first six letters: 'Indemnity' and
    'Indemnification'), or one is mostly the other (rapidfuzz)."""
    from rapidfuzz import fuzz

    if _stems(named) & _stems(heading):
        return True
    return fuzz.partial_ratio(named.lower(), heading.lower()) >= 80
