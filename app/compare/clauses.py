"""Numbered clauses: where they start, their number and heading.

A clause starts at a line that opens with a clause number ('12.', '12.3', '6.3.4.1', 'Section 12',
'Article IV') right after the end of a sentence or a short line (a heading, another number). Only
line starts count, and a bare integer needs its dot ('5.'), so '... under Section 5 of' or an amount
at a line start does not split a clause. The text before the first number is a clause of its own.
Lettered items ('(a)', '(iv)') stay inside their clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.compare.words import Word

_NUMBER = re.compile(r"^(?:\d{1,3}\.(?:\d{1,3}\.?){0,4}|\d{1,3}\.\d{1,3}(?:\.\d{1,3}){0,3})$")
_SECTION_WORD = re.compile(r"^(?:section|article|clause)$", re.IGNORECASE)
_SECTION_NUMBER = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3}){0,4}|[IVXLC]{1,7})[.:]?$")
_SENTENCE_END = tuple(".:;)\"'")
SHORT_LINE = 6  # words: a line this short before a number is a heading or a number of its own
HEADING_WORDS = 12
_SMALL = frozenset({"and", "or", "of", "the", "to", "in", "for", "on", "by", "with", "a", "an", "upon", "its"})


@dataclass(frozen=True)
class Clause:
    number: str  # as printed, without its trailing dot ('12.3'); '' for the text before the first number
    heading: str  # 'Governing Law' when the clause opens with one, else ''
    words: tuple[Word, ...]
    number_words: int  # how many of the first words are the number ('12.' = 1, 'Section 12' = 2)
    head_line: int = 0  # words of a heading line of its own ('7. Governing Law' above the text), else 0

    @property
    def body(self) -> tuple[str, ...]:
        """The clause's words without its number: what stays the same when a clause is renumbered."""
        return tuple(w.text for w in self.words[self.number_words :])

    @property
    def texts(self) -> list[str]:
        return [w.text for w in self.words]

    def title(self) -> str:
        if self.number or self.heading:
            return " ".join(p for p in (self.number, self.heading) if p)
        return "(text before the first numbered clause)"


def split_clauses(words: list[Word]) -> list[Clause]:
    starts = [i for i in range(len(words)) if _number_words(words, i)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    clauses: list[Clause] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(words)
        chunk = tuple(words[start:end])
        if not chunk:
            continue
        n = _number_words(words, start)
        number = " ".join(w.text for w in chunk[:n]).rstrip(".:") if n else ""
        heading, taken = _heading(chunk[n:]) if n else ("", 0)
        own_line = taken > 0 and n + taken < len(chunk) and chunk[n + taken].line_start
        clauses.append(Clause(number, heading, chunk, n, n + taken if own_line else 0))
    return clauses


def _number_words(words: list[Word], i: int) -> int:
    """How many words at i make a clause number (0 when no clause starts there)."""
    word = words[i]
    if not word.line_start:
        return 0
    if i > 0 and not word.block_start:
        before = words[i - 1]
        if not (before.text.endswith(_SENTENCE_END) or before.line_length <= SHORT_LINE):
            return 0
    if _NUMBER.match(word.text):
        return 1
    following = words[i + 1] if i + 1 < len(words) else None
    if _SECTION_WORD.match(word.text) and following is not None and _SECTION_NUMBER.match(following.text):
        return 2
    return 0


def _heading(words: tuple[Word, ...]) -> tuple[str, int]:
    """'Term.' / 'Entire Agreement; Amendment and Waiver.' at the start of a clause: title-cased words up
    to a full stop, or up to the end of their line ('Governing Law' printed above the clause's text).
    Returns the heading and how many words it took ('', 0 for none)."""
    taken: list[str] = []
    for k, w in enumerate(words[:HEADING_WORDS]):
        if taken and w.line_start:
            return " ".join(taken), len(taken)
        core = w.text.strip("\"'(),;:")
        if not core or not (core[0].isupper() or core[0].isdigit() or core.lower() in _SMALL):
            return "", 0
        taken.append(w.text)
        if w.text.endswith("."):
            return " ".join(taken).rstrip("."), k + 1
    return "", 0
