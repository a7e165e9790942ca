"""Which pages go into which request when a selection does not fit the model's context: consecutive
windows for reading a document in passes, or the best-ranked pages for one request.

Both plan by an estimate of each page's tokens (calibrated on the exact count of the whole selection)
and then hold every request to the exact count (`measure`), dropping pages from the end of a window,
or the lowest-ranked pages of a choice, until it fits. Pure functions: the session measures."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

Measure = Callable[[tuple[int, ...]], int]  # the exact prompt tokens of a request reading these pages
K = TypeVar("K", bound=Hashable)

OVERLAP = 1  # pages each window shares with the one before: a clause cut at a page break is read whole once


@dataclass(frozen=True)
class Windows:
    """The windows of one document, in order, and the pages that do not fit a request even alone."""

    windows: tuple[tuple[int, ...], ...]
    too_long: tuple[int, ...] = ()
    tokens: tuple[int, ...] = ()  # each window's exact prompt tokens (what reading it costs)


def plan_windows(
    pages: Sequence[int],
    cost: Mapping[int, float],
    budget: float,
    measure: Measure,
    limit: int,
    *,
    overlap: int = OVERLAP,
) -> Windows:
    """Consecutive windows over `pages` (in order): each as long as its estimated `cost` allows within
    `budget` (the tokens left for pages), then cut until `measure` is within `limit`. Each window
    starts on the last `overlap` page(s) of the one before, so every page is read and a page break
    never cuts the only reading of a clause; a page that alone exceeds the limit is named, never
    dropped in silence."""
    windows: list[tuple[int, ...]] = []
    counted: list[int] = []
    too_long: list[int] = []
    covered = -1  # index of the last page read (or found too long)
    start = 0
    n = len(pages)
    while covered < n - 1:
        end = start
        total = 0.0
        while end < n and (end == start or total + cost[pages[end]] <= budget):
            total += cost[pages[end]]
            end += 1
        window = tuple(pages[start:end])
        tokens = measure(window)
        while tokens > limit and len(window) > 1:
            window = window[: -_excess_pages(window, cost, tokens - limit)]
            tokens = measure(window)
        last = start + len(window) - 1
        if last <= covered:  # only the overlap fits beside nothing new: begin after it instead
            start = covered + 1
            continue
        if tokens > limit:  # one page, longer than the context on its own
            too_long.append(window[0])
        else:
            windows.append(window)
            counted.append(tokens)
        covered = last
        start = max(last + 1 - overlap, start + 1) if tokens <= limit else last + 1
    return Windows(tuple(windows), tuple(too_long), tuple(counted))


def _excess_pages(window: tuple[int, ...], cost: Mapping[int, float], excess: int) -> int:
    """How many pages to drop from the end of a window that is `excess` tokens too long (at least one,
    always leaving one)."""
    dropped, freed = 0, 0.0
    for page in reversed(window[1:]):
        dropped += 1
        freed += cost[page]
        if freed >= excess:
            break
    return max(dropped, 1)


def choose_ranked(
    ranked: Sequence[K], cost: Mapping[K, float], budget: float, fits: Callable[[list[K]], bool]
) -> list[K]:
    """The best-ranked places (pages) whose estimated cost fits `budget`, taken in rank order (a page
    too long to fit is passed over for the next), then the lowest-ranked dropped until `fits`."""
    chosen: list[K] = []
    used = 0.0
    for place in ranked:
        if used + cost[place] <= budget:
            chosen.append(place)
            used += cost[place]
    while chosen and not fits(chosen):
        chosen.pop()
    return chosen
