"""Where on a page is a quoted passage? Rectangles to highlight, from the page's words or text blocks.

A model's quote and a PDF's text layer differ in the ways app.citations.quotes.normalize_for_match folds
(ligatures, curly quotes, case, whitespace), and in words hyphenated at line ends, so both sides
are normalized the same way word by word and matched on the joined text: verbatim first, then the
best fuzzy window (an OCR slip or a dropped comma still lights up the right lines).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.citations.quotes import normalize_for_match

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1 in page units (PDF points, or image pixels)
FUZZY_MIN_SCORE = 0.85
FUZZY_MIN_CHARS = 12


@dataclass(frozen=True)
class Word:
    rect: Rect
    text: str
    line: tuple[int, int]  # (block, line): words on one printed line share it


@dataclass(frozen=True)
class PassageMatch:
    rects: tuple[Rect, ...]  # one per printed line the passage covers
    exact: bool
    score: float


def words_from_pymupdf(raw: Sequence[Sequence[object]]) -> list[Word]:
    """page.get_text('words') rows: (x0, y0, x1, y1, text, block_no, line_no, word_no)."""
    out = []
    for row in raw:
        x0, y0, x1, y1, text, block, line = row[:7]
        box = (float(x0), float(y0), float(x1), float(y1))  # type: ignore[arg-type]
        out.append(Word(box, str(text), (int(block), int(line))))  # type: ignore[call-overload]
    return out


def _joined(words: Sequence[Word]) -> tuple[str, list[int]]:
    """The page's words as one normalized string, and for each character the word it came from."""
    chars: list[str] = []
    owner: list[int] = []
    for i, word in enumerate(words):
        text = normalize_for_match(word.text)
        if not text:
            continue
        if chars:
            previous = words[i - 1] if i > 0 else None
            # A word broken at a line end ('termi-' + 'nation') is one word again.
            new_line = previous is not None and previous.line != word.line
            if new_line and chars[-1] == "-" and text[0].isalnum():
                chars.pop()
                owner.pop()
            else:
                chars.append(" ")
                owner.append(i)
        chars.extend(text)
        owner.extend([i] * len(text))
    return "".join(chars), owner


def find_passage(words: Sequence[Word], quote: str) -> PassageMatch | None:
    """The passage's rectangles (merged per line), or None when it is not on this page."""
    needle = normalize_for_match(quote)
    if len(needle) < 3 or not words:
        return None
    haystack, owner = _joined(words)
    start = haystack.find(needle)
    if start >= 0:
        return PassageMatch(_line_rects(words, owner[start : start + len(needle)]), True, 1.0)
    if len(needle) < FUZZY_MIN_CHARS:
        return None
    from rapidfuzz import fuzz

    found = fuzz.partial_ratio_alignment(needle, haystack)
    if found is None or found.score / 100.0 < FUZZY_MIN_SCORE:
        return None
    span = owner[found.dest_start : found.dest_end]
    return PassageMatch(_line_rects(words, span), False, found.score / 100.0) if span else None


def query_terms(query: str) -> tuple[str, ...]:
    """The words of a search box query to mark on a page; a trailing '*' keeps its prefix meaning."""
    return tuple(re.findall(r"\w+\*?", query))


def find_terms(words: Sequence[Word], terms: Sequence[str]) -> tuple[Rect, ...]:
    """Every word matching one of the search terms (a trailing '*' is a prefix), for search hits."""
    wanted = [normalize_for_match(t.strip('"')) for t in terms if t.strip('"* ')]
    prefixes = [w.rstrip("*") for w in wanted if w.endswith("*")]
    exact = {w for w in wanted if not w.endswith("*")}
    rects = []
    for word in words:
        text = normalize_for_match(word.text).strip(".,;:!?()[]\"'")
        if text in exact or any(text.startswith(p) for p in prefixes if p):
            rects.append(word.rect)
    return tuple(rects)


def _line_rects(words: Sequence[Word], owners: Sequence[int]) -> tuple[Rect, ...]:
    lines: dict[tuple[int, int], list[float]] = {}
    for i in dict.fromkeys(owners):
        x0, y0, x1, y1 = words[i].rect
        box = lines.setdefault(words[i].line, [x0, y0, x1, y1])
        box[0], box[1], box[2], box[3] = min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)
    return tuple((b[0], b[1], b[2], b[3]) for b in lines.values())


def find_in_blocks(blocks: Sequence[tuple[Rect, str]], quote: str) -> PassageMatch | None:
    """Fallback without word positions (scanned pages, a moved original): the text blocks that hold
    the quote, or the blocks wholly inside a quote that runs over several of them."""
    from app.citations.quotes import quote_in

    holding = tuple(rect for rect, text in blocks if quote_in(quote, text))
    if holding:
        return PassageMatch(holding[:1], True, 1.0)
    needle = normalize_for_match(quote)
    inside = tuple(
        rect for rect, text in blocks if len(normalize_for_match(text)) >= 20 and normalize_for_match(text) in needle
    )
    return PassageMatch(inside, False, 0.9) if inside else None
