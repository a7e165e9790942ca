"""What a reference can point to: the document's numbered clauses and its attachments, each with its heading.

Numbered clauses are found by the comparison's own rules (app.compare.clauses: '12.', '12.3', 'Section
12', 'Article IV' opening a line after a sentence end or a short line); a Word document adds the
number Word draws on each paragraph ('4(a)', ingest.word), read from its anchor. Attachments are
lines that open with Exhibit, Schedule, Annex, Appendix or Attachment and a number or letter. The
document is cut into parts at its attachments, so the '1.' of an exhibit is not the '1.' of the
agreement: a reference resolves in its own part first, then in the agreement's body.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property

from app.checks.text import CheckText, Place
from app.compare.clauses import HEADING_WORDS, split_clauses
from app.compare.words import Word

ATTACHMENT_WORDS = ("exhibit", "schedule", "annex", "appendix", "attachment")
_ATTACHMENT_LINE = re.compile(
    r"^(?P<word>(?i:exhibits?|schedules?|annex(?:es)?|appendix|appendices|attachments?))\s+[\"']?"
    r"(?P<id>[A-Z]{1,2}(?:-\d{1,2})?|\d{1,3}(?:\.\d{1,3})?(?:-[A-Z0-9]{1,2})?)[\"']?"
    r"(?=$|[\s.:,;)\-])(?P<rest>.*)$"
)
_NOT_IDS = frozenset({"OF", "TO", "IN", "ON", "AN", "OR", "AS", "AT", "BY", "IS", "IT"})
# 'Exhibit 10.2' atop the first page is the number the contract was filed under (SEC EDGAR), not an attachment.
_FILING_LABEL = re.compile(r"^\d{1,3}\.\d{1,3}$")
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
_NUMBER_WORDS = re.compile(r"^(?:section|article|clause|paragraph|part)\s+", re.IGNORECASE)
_LINE_NUMBER = re.compile(
    r"(?im)^[ \t]*(?:(?:section|article|clause|paragraph)\s+)?(?:(?P<number>\d{1,3}(?:\.\d{1,3})*\.?)(?![\d])|§)"
)
_SUB_ITEM = re.compile(r"\(([a-zA-Z]{1,4}|\d{1,2})\)")


def roman_value(text: str) -> int | None:
    text = text.upper()
    if not text or any(ch not in _ROMAN for ch in text):
        return None
    total = 0
    for k, ch in enumerate(text):
        value = _ROMAN[ch]
        total += -value if k + 1 < len(text) and _ROMAN[text[k + 1]] > value else value
    return total


def clause_key(number: str) -> str:
    """'Section 12.3.' -> '12.3'; 'Article IV' -> '4'; '4(a)' -> '4(a)' (how numbers are compared)."""
    bare = _NUMBER_WORDS.sub("", number.strip()).strip().rstrip(".:")
    head, paren, rest = bare.partition("(")
    value = roman_value(head)
    if value is not None and head.isupper() and len(head) <= 6 and "C" not in head:
        head = str(value)
    pieces = [str(int(p)) if p.isdigit() else p for p in head.split(".")]
    while len(pieces) > 1 and pieces[-1] == "0":  # '5.0 Warranties' is clause 5
        pieces.pop()
    return ".".join(pieces) + paren + rest.lower()


def attachment_key(word: str, ident: str) -> str:
    """('Exhibits', 'a') -> 'exhibit A'."""
    singular = {"annexes": "annex", "appendices": "appendix"}.get(word.lower(), word.lower().rstrip("s"))
    if singular == "appendice":
        singular = "appendix"
    return f"{singular} {ident.upper()}"


@dataclass(frozen=True)
class Target:
    """A numbered clause ('12.3') or an attachment ('exhibit A'), where it starts and ends in the text."""

    key: str  # clause_key() or attachment_key()
    printed: str  # as printed: '12.3', 'Article IV', 'EXHIBIT A'
    heading: str
    start: int
    end: int
    place: Place
    part: int  # 0 = the agreement's body, k = its k-th attachment
    word: str = ""  # 'article', 'section', ... when the number is printed with one

    @property
    def attachment(self) -> bool:
        return self.key.split(" ", 1)[0] in ATTACHMENT_WORDS


@dataclass
class Outline:
    text: CheckText
    clauses: list[Target] = field(default_factory=list)
    attachments: list[Target] = field(default_factory=list)
    part_starts: list[int] = field(default_factory=lambda: [0])

    def part_of(self, offset: int) -> int:
        return bisect.bisect_right(self.part_starts, offset) - 1

    def clause_at(self, offset: int) -> Target | None:
        """The innermost numbered clause holding this offset."""
        holding = [c for c in self.clauses if c.start <= offset < c.end]
        return max(holding, key=lambda c: c.start) if holding else None

    def find(self, key: str, part: int) -> list[Target]:
        """Clauses with this key, those of `part` first, then the body's; the longest (not a contents
        line) first among equals."""
        found = [c for c in self.clauses if c.key == key and c.part in (part, 0)]
        found.sort(key=lambda c: (c.part != part, c.part != 0, -(c.end - c.start)))
        return found

    def children(self, key: str, part: int) -> list[Target]:
        """'15.1', '15(a)': the clauses under '15', whose own number may be printed without its dot."""
        found = [c for c in self.clauses if c.key.startswith((key + ".", key + "(")) and c.part in (part, 0)]
        return sorted(found, key=lambda c: (c.part != part, c.start))

    def printed_at_line_start(self, number: str) -> int | None:
        """Where a line opens with this number ('15 INSURANCE', 'Section 15', '15.'), whatever came
        before it: the leniency that keeps a clause the strict rules missed from being called missing."""
        return self._line_numbers.get(number)

    @cached_property
    def _line_numbers(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for match in _LINE_NUMBER.finditer(self.text.text):
            number = match.group("number") or "§"
            found.setdefault(number.rstrip("."), match.start())
            if number.endswith(".0"):
                found.setdefault(number[:-2], match.start())
        return found

    def attachment(self, key: str) -> Target | None:
        found = [a for a in self.attachments if a.key == key]
        return max(found, key=lambda a: a.end - a.start) if found else None

    def has_sub_item(self, target: Target, item: str) -> bool:
        """'(a)' printed inside the clause as an item's mark (a lettered item stays inside its clause); the
        '(c)' of a reference ('Section 3(c)', '(b)(c)') is not one."""
        span = self.text.text[target.start : target.end].lower()
        mark = f"({item.lower()})"
        at = span.find(mark)
        while at != -1:
            if at == 0 or not (span[at - 1].isalnum() or span[at - 1] == ")"):
                return True
            at = span.find(mark, at + 1)
        return False

    @property
    def numbered(self) -> bool:
        """The document numbers its clauses (so a number it lacks is missing, not unread)."""
        return sum(1 for c in self.clauses if c.part == 0) >= 3


def outline(text: CheckText) -> Outline:
    out = Outline(text)
    out.attachments = _attachments(text)
    out.part_starts = [0, *sorted(a.start for a in out.attachments)]
    words, offsets = _words(text)
    found = split_clauses(words)
    at = 0
    starts: list[tuple[int, str, str]] = []
    for clause in found:
        first = at
        at += len(clause.words)
        if not clause.number:
            continue
        heading = clause.heading
        if (
            not heading
            and len(clause.words) - clause.number_words <= 2
            and clause.words[-1].line_length <= HEADING_WORDS
        ):
            heading = " ".join(clause.texts[clause.number_words :])  # a heading line with nothing after it
        starts.append((offsets[first], clause.number, heading))
    if text.unit == "paragraph":  # Word's own numbers, sub-clauses included: '4(a)'
        known = {s for s, _, _ in starts}
        for k, block in enumerate(text.blocks):
            if block.label and text.starts[k] not in known:
                starts.append((text.starts[k], block.label, ""))
        starts.sort()
    out.clauses = _clauses(text, out, starts)
    return out


def _clauses(text: CheckText, out: Outline, starts: list[tuple[int, str, str]]) -> list[Target]:
    """Each clause runs to the next clause of the same or a higher level (its sub-clauses inside it)."""
    targets: list[Target] = []
    keys = [clause_key(number) for _, number, _ in starts]
    for k, (start, number, heading) in enumerate(starts):
        depth = _depth(keys[k])
        end = len(text.text)
        part = out.part_of(start)
        for j in range(k + 1, len(starts)):
            if out.part_of(starts[j][0]) != part:
                end = starts[j][0]
                break
            if _depth(keys[j]) <= depth:
                end = starts[j][0]
                break
        if part + 1 < len(out.part_starts):
            end = min(end, out.part_starts[part + 1])
        word = number.split()[0].lower() if " " in number else ""
        targets.append(Target(keys[k], number, heading.strip(" .:"), start, end, text.place(start), part, word))
    return targets


def _depth(key: str) -> int:
    return key.count(".") + key.count("(")


_LINE_WORDS_KEPT = HEADING_WORDS + 2


def _words(text: CheckText) -> tuple[list[Word], list[int]]:
    """The text as the comparison's words (with line starts and line lengths), and each word's offset.
    Only what the clause rules look at is kept: a line's first words (its number and heading) and its
    last (does it end a sentence?), so a 100-page document is cut in a fraction of the time."""
    words: list[Word] = []
    offsets: list[int] = []
    for k, block in enumerate(text.blocks):
        at = text.starts[k]
        for line_no, line in enumerate(block.text.split("\n")):
            tokens = line.split(" ")  # check_text leaves single spaces between words
            count = len(tokens)
            kept = tokens if count <= _LINE_WORDS_KEPT else tokens[: _LINE_WORDS_KEPT - 1]
            offset = at
            for i, token in enumerate(kept):
                start = i == 0
                words.append(Word(token, block.page, block.label, start, start and not line_no, count))
                offsets.append(offset)
                offset += len(token) + 1
            if count > _LINE_WORDS_KEPT:
                words.append(Word(tokens[-1], block.page, block.label, False, False, count))
                offsets.append(at + len(line) - len(tokens[-1]))
            at += len(line) + 1
    return words, offsets


def _attachments(text: CheckText) -> list[Target]:
    """Lines that open with 'Exhibit A', 'SCHEDULE 1', 'Annex B - Prices': where an attachment starts.
    A line that goes on as a sentence ('Exhibit A sets out the fees.') is a reference, not a heading."""
    found: list[Target] = []
    for match in re.finditer(r"(?m)^.*$", text.text):
        line = match.group()
        head = _ATTACHMENT_LINE.match(line)
        if head is None:
            continue
        ident = head.group("id")
        if ident in _NOT_IDS or (_FILING_LABEL.match(ident) and text.place(match.start()).page <= 2):
            continue
        rest = head.group("rest").strip(" .:-\u2013")
        if _sentence(rest) or (rest[:1] in "(,;" and rest) or not _heads_page(text, match.start()):
            continue
        if not rest:  # the title on the next line: 'EXHIBIT A' / 'Services'
            following = text.text[match.end() + 1 :].split("\n", 1)[0]
            rest = following.strip() if len(following.split()) <= HEADING_WORDS else ""
        key = attachment_key(head.group("word"), ident)
        found.append(
            Target(
                key, line[: head.end("id")].strip(), rest, match.start(), match.start(), text.place(match.start()), 0
            )
        )
    found.sort(key=lambda t: t.start)
    # An attachment runs to the next one; the 'parts' are numbered in order.
    return [
        Target(a.key, a.printed, a.heading, a.start, found[k + 1].start if k + 1 < len(found) else len(text.text),
               a.place, k + 1)
        for k, a in enumerate(found)
    ]  # fmt: skip


def _heads_page(text: CheckText, at: int) -> bool:
    """An attachment's title opens a block of its own (a Word paragraph, a PDF text block) after the
    agreement's first page, where the number the contract was filed under stands."""
    k = text.block_at(at)
    return text.starts[k] == at and (text.unit == "paragraph" or text.blocks[k].page > 1)


def _sentence(rest: str) -> bool:
    """Words after 'Exhibit A' that read as a sentence (a lower-case verb among the first words), not a title."""
    words = rest.split()
    if len(words) > 14:
        return True
    lowered = [
        w for w in words[:6] if w[:1].islower() and w not in ("and", "of", "the", "to", "for", "a", "an", "in", "on")
    ]
    return bool(lowered) and not rest[:1].isupper()


def sub_items(reference_tail: str) -> list[str]:
    """'(a)(ii)' -> ['a', 'ii']."""
    return _SUB_ITEM.findall(reference_tail)
