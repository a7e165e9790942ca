"""The words compared, each with the page it was read on.

What is not a change is taken out here, the same way in both versions:
- running headers and footers: short blocks among the first or last of their page that repeat, digits
  masked, on at least half the pages (ingest already keeps only the first of the ones it recognises,
  with role 'header'/'footer', and those are not read at all);
- page numbers: blocks that are only a page number ('7', '- 7 -', 'iv', 'Page 7 of 80');
- line breaks and line-end hyphenation: 'termi-' + 'nation' is one word; a hyphen that is part of the
  word ('non-' + 'competition') is kept when either version writes the word with it inside a line;
- typography: quotes, dashes, ligatures and invisible characters are folded (NFKC), so a curly quote
  and a straight one are the same word.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, replace

from app.compare.versions import Block, Version

RUNNING_MIN_PAGES = 3
RUNNING_MAX_WORDS = 15  # a running header or footer is short; a repeated paragraph is body text
EDGE_BLOCKS = 2  # running text is among the first or last blocks of a page in reading order

_FOLD = str.maketrans(
    {
        "“": '"',
        "”": '"',
        "„": '"',
        "«": '"',
        "»": '"',
        "‘": "'",
        "’": "'",
        "‚": "'",
        "–": "-",
        "—": "-",
        "‐": "-",
        "‑": "-",
        "−": "-",
        "\u00ad": None,
        "\u200b": None,
        "\u200c": None,
        "\u200d": None,
        "\ufeff": None,
    }
)
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?[-(\[]?\s*(?:(?P<number>\d{1,4})|[ivxlc]{1,7})\s*[-)\]]?(?:\s*(?:of|/)\s*\d{1,4})?$",
    re.IGNORECASE,
)
PAGE_NUMBER_DRIFT = 10  # a printed page number this far from the page's place still counts (cover pages)
_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(r"\b[ivxlcdm]+\b")


@dataclass(frozen=True)
class Word:
    text: str
    page: int
    label: str | None
    line_start: bool = False  # first word of a line as read (clause numbers start lines)
    block_start: bool = False
    line_length: int = 0  # words on its line (a short line before a number is a heading)
    # A word joined across a line-end hyphen: the form with the hyphen kept ('non-competition');
    # text holds the form without it until settle_hyphens chooses.
    hyphenated: str | None = None


def fold(text: str) -> str:
    """Typography folded: the form words are compared in."""
    return unicodedata.normalize("NFKC", text).translate(_FOLD)


def body_blocks(version: Version) -> list[Block]:
    """The blocks left once page numbers and running headers/footers are taken out."""
    if version.unit != "page":  # Word, text, e-mail: no printed pages, no running text in the body
        return list(version.blocks)
    blocks = [b for b in version.blocks if not _is_page_number(b)]
    pages = {b.page for b in blocks}
    if len(pages) < RUNNING_MIN_PAGES:
        return blocks
    needed = max(RUNNING_MIN_PAGES, math.ceil(len(pages) / 2))
    edges = _page_edges(blocks)
    pages_with: dict[str, set[int]] = defaultdict(set)
    for k in edges:
        if len(blocks[k].text.split()) <= RUNNING_MAX_WORDS:
            pages_with[_masked(blocks[k].text)].add(blocks[k].page)
    running = {key for key, on in pages_with.items() if len(on) >= needed}
    return [b for k, b in enumerate(blocks) if k not in edges or _masked(b.text) not in running]


def _page_edges(blocks: list[Block]) -> set[int]:
    """Indexes of the first and last EDGE_BLOCKS blocks of each page: where running text sits."""
    by_page: dict[int, list[int]] = defaultdict(list)
    for k, b in enumerate(blocks):
        by_page[b.page].append(k)
    return {k for on_page in by_page.values() for k in on_page[:EDGE_BLOCKS] + on_page[-EDGE_BLOCKS:]}


def _is_page_number(block: Block) -> bool:
    """'7', '- 7 -', 'iv', 'Page 7 of 80' alone in a block, near the page's own number (so '30' on page 2
    is text, not a page number)."""
    match = _PAGE_NUMBER.match(" ".join(block.text.split()))
    if match is None:
        return False
    number = match.group("number")
    return number is None or abs(int(number) - block.page) <= PAGE_NUMBER_DRIFT


def _masked(text: str) -> str:
    lowered = " ".join(fold(text).lower().split())
    return _ROMAN.sub("#", _DIGITS.sub("#", lowered))


def read_words(version: Version) -> list[Word]:
    """The version's words in reading order, line-end hyphens joined (see settle_hyphens)."""
    words: list[Word] = []
    pending_hyphen = False  # the last word ended a line with a hyphen that may join the next word
    for block in body_blocks(version):
        for line_no, line in enumerate(block.text.splitlines()):
            tokens = [t for t in (fold(raw) for raw in line.split()) if t]
            for i, token in enumerate(tokens):
                if i == 0 and pending_hyphen and token[:1].isalpha():
                    head = words[-1]
                    plain = head.text[:-1] + token
                    joined = head.text + token
                    words[-1] = replace(head, text=joined if token[0].isupper() else plain, hyphenated=joined)
                    pending_hyphen = False
                    continue
                pending_hyphen = False
                start = i == 0
                words.append(Word(token, block.page, block.label, start, start and not line_no, len(tokens)))
            if tokens:
                last = tokens[-1]
                pending_hyphen = len(last) > 2 and last.endswith("-") and last[-2].isalpha()
    return words


def settle_hyphens(*versions: list[Word]) -> list[list[Word]]:
    """Choose, for each word joined across a line-end hyphen, the form with or without the hyphen: with
    it when some version writes that word with the hyphen inside a line, else without."""
    written = {_core(w.text) for words in versions for w in words if w.hyphenated is None and "-" in w.text}
    settled: list[list[Word]] = []
    for words in versions:
        settled.append(
            [
                replace(w, text=w.hyphenated, hyphenated=None)
                if w.hyphenated is not None and _core(w.hyphenated) in written
                else replace(w, hyphenated=None)
                if w.hyphenated is not None
                else w
                for w in words
            ]
        )
    return settled


def _core(word: str) -> str:
    return word.strip(_EDGE_PUNCTUATION)


_EDGE_PUNCTUATION = "\"'.,;:!?()[]{}"
