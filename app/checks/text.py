"""The text the checks read: a document's body as one string, every offset mapped back to where it is printed.

It is made from the same blocks a comparison reads (app.compare.versions: stored segments or a file
read through ingest), with what is not the document's body taken out the same way (running headers
and footers, page numbers: app.compare.words.body_blocks) and typography folded (curly quotes and
dashes, ligatures), so a regular expression sees one kind of quote. A Word paragraph's tracked
changes are read accepted: the checks look at the text as it will read once they are.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property

from app.compare.versions import Block, Version
from app.compare.words import body_blocks, fold
from ingest.document import Anchor

BLOCK_GAP = "\n\n"  # between blocks: a paragraph break a sentence never crosses
QUOTE_CHARS = 300  # the longest passage quoted as a finding's context
# A paragraph break ends a sentence unless a page break cut the sentence ('a period of 12' / 'months, ...').
_SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+(?=[\"'(]?[A-Z0-9(])|(?<=[.;:!?)\"'])\n\s*\n|\n\s*\n(?=[\"'(]?[A-Z0-9(•·])")


@dataclass(frozen=True)
class Place:
    """Where an offset is printed: a page (its label) or, in a flowing document, a paragraph (its clause)."""

    page: int
    label: str | None
    unit: str  # 'page' | 'paragraph'

    def cited(self) -> str:
        """'p. 4', '§ 12.3' or '¶ 41': the form citations take everywhere (ingest.document.Anchor)."""
        return Anchor(page=self.page, label=self.label, unit=self.unit).cited()  # type: ignore[arg-type]


@dataclass(frozen=True)
class CheckText:
    title: str
    unit: str
    page_count: int
    text: str
    blocks: tuple[Block, ...]
    starts: tuple[int, ...]  # offset of each block in text

    def block_at(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self.starts, offset) - 1)

    def place(self, offset: int) -> Place:
        block = self.blocks[self.block_at(offset)] if self.blocks else Block(1, None, "")
        return Place(block.page, block.label, self.unit)

    @cached_property
    def _sentence_starts(self) -> list[int]:
        return [0, *(m.end() for m in _SENTENCE_END.finditer(self.text))]

    def sentence(self, start: int, end: int | None = None) -> tuple[int, int]:
        """The span of the sentence (or the paragraph's line, for a heading) holding start..end."""
        end = start if end is None else end
        starts = self._sentence_starts
        k = bisect.bisect_right(starts, start) - 1
        first = starts[max(0, k)]
        j = bisect.bisect_left(starts, max(end, start + 1))
        last = starts[j] if j < len(starts) else len(self.text)
        while last > first and self.text[last - 1].isspace():
            last -= 1
        return first, last

    def quote(self, start: int, end: int | None = None, limit: int = QUOTE_CHARS) -> str:
        """The sentence around a span, on one line, cut to about `limit` characters around the span."""
        first, last = self.sentence(start, end)
        end = start if end is None else end
        if last - first > limit:
            half = max(0, (limit - (end - start)) // 2)
            lo, hi = max(first, start - half), min(last, end + half)
            lo = self.text.rfind(" ", first, lo) + 1 if lo > first else first
            hi_space = self.text.find(" ", hi, last)
            hi = hi_space if hi < last and hi_space != -1 else last
            shown = ("… " if lo > first else "") + self.text[lo:hi] + (" …" if hi < last else "")
        else:
            shown = self.text[first:last]
        return " ".join(shown.split())


def word_set(words: str) -> frozenset[str]:
    """A word list written as words (lower case, separated by white space)."""
    return frozenset(words.split())


def check_text(version: Version) -> CheckText:
    from ingest.word import accepted_text

    kept: list[Block] = []
    parts: list[str] = []
    starts: list[int] = []
    at = 0
    for block in body_blocks(version):
        text = fold(block.text)
        if version.unit == "paragraph":
            text = accepted_text(text)
        text = "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
        text = _repair(text)
        if not text:
            continue
        kept.append(Block(block.page, block.label, text))
        starts.append(at)
        parts.append(text)
        at += len(text) + len(BLOCK_GAP)
    return CheckText(version.title, version.unit, version.page_count, BLOCK_GAP.join(parts), tuple(kept), tuple(starts))


_OCR_ONE = re.compile(r"(?<=\bone \()[Il](?=\))")  # 'one (I) year': a text layer's 1 read as a letter


def _repair(text: str) -> str:
    """Blanks of a form ('_Dec. 8, 2005') and 'one (I)' for 'one (1)', each character for one, so every
    offset still points where it did."""
    return _OCR_ONE.sub("1", text.replace("_", " "))
