"""Page selections written the way people write them: '1-20,45' read into page numbers, and page
numbers written back as ranges ('1-20, 45'). Used by `folio ask --pages`, the footers that say which
pages the model read, and extraction's note on a document read by chosen pages."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_PIECE_RE = re.compile(r"^(\d{1,6})(?:\s*-\s*(\d{1,6}))?$")


def parse_pages(spec: str) -> tuple[int, ...]:
    """'1-20,45' -> (1, ..., 20, 45), sorted, each page once. A bad range raises ValueError with one
    line a user can act on (no silent repair: '20-1' or '0' is refused, not guessed at)."""
    pages: set[int] = set()
    pieces = [p.strip() for p in spec.split(",")]
    if not spec.strip() or not all(pieces):
        raise ValueError(f"'{spec}' is not a page list: write pages and ranges like 1-20,45")
    for piece in pieces:
        match = _PIECE_RE.match(piece)
        if match is None:
            raise ValueError(f"'{piece}' is not a page or a range of pages: write pages and ranges like 1-20,45")
        first = int(match.group(1))
        last = int(match.group(2) or first)
        if first < 1:
            raise ValueError(f"'{piece}': pages are numbered from 1")
        if last < first:
            raise ValueError(f"'{piece}' runs backwards: write the lower page first ({last}-{first})")
        pages.update(range(first, last + 1))
    return tuple(sorted(pages))


def page_ranges(pages: Iterable[int]) -> str:
    """(1, 2, 3, 7, 9, 10) -> '1-3, 7, 9-10'; 'none' for no page at all."""
    ordered: Sequence[int] = sorted(set(pages))
    if not ordered:
        return "none"
    out: list[str] = []
    start = prev = ordered[0]
    for p in [*ordered[1:], None]:
        if p is not None and p == prev + 1:
            prev = p
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if p is not None:
            start = prev = p
    return ", ".join(out)
