"""Pairing old clauses with new ones, and finding the ones that moved.

In order of trust: the same words (number aside, so a renumbered clause still pairs), then the same
number and heading, then the most similar text (rapidfuzz, at least SIMILAR percent alike; ties go to
the same number, then the nearer place). Pairs are found without regard to order; the clauses that
keep their order are the longest run of pairs in the same order in both versions, and every other
pair is a move.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass

from app.compare.clauses import Clause

SIMILAR = 60.0  # percent (rapidfuzz ratio); below this an edited clause is a deletion plus an insertion


@dataclass(frozen=True)
class Alignment:
    pairs: dict[int, int]  # old clause index -> new clause index
    moved: frozenset[int]  # old clause indices whose clause is somewhere else in the new version


def align(old: list[Clause], new: list[Clause]) -> Alignment:
    pairs: dict[int, int] = {}
    _same_words(old, new, pairs)
    _same_heading(old, new, pairs)
    _similar(old, new, pairs)
    return Alignment(pairs, frozenset(_moved(pairs)))


def _same_words(old: list[Clause], new: list[Clause], pairs: dict[int, int]) -> None:
    """Equal bodies pair in order, where both versions hold the same number of them."""
    olds: dict[tuple[str, ...], list[int]] = defaultdict(list)
    news: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, c in enumerate(old):
        olds[c.body].append(i)
    for j, c in enumerate(new):
        news[c.body].append(j)
    for body, at_old in olds.items():
        at_new = news.get(body, [])
        if len(at_new) == len(at_old):
            pairs.update(zip(at_old, at_new, strict=True))


def _same_heading(old: list[Clause], new: list[Clause], pairs: dict[int, int]) -> None:
    taken = set(pairs.values())
    olds: dict[tuple[str, str], list[int]] = defaultdict(list)
    news: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, c in enumerate(old):
        if i not in pairs and c.heading:
            olds[(c.number, c.heading.lower())].append(i)
    for j, c in enumerate(new):
        if j not in taken and c.heading:
            news[(c.number, c.heading.lower())].append(j)
    for key, at_old in olds.items():
        at_new = news.get(key, [])
        if len(at_old) == 1 and len(at_new) == 1:
            pairs[at_old[0]] = at_new[0]


def _similar(old: list[Clause], new: list[Clause], pairs: dict[int, int]) -> None:
    from rapidfuzz import fuzz, process

    taken = set(pairs.values())
    left = [i for i in range(len(old)) if i not in pairs]
    right = [j for j in range(len(new)) if j not in taken]
    if not left or not right:
        return
    scores = process.cdist(
        [" ".join(old[i].texts) for i in left],
        [" ".join(new[j].texts) for j in right],
        scorer=fuzz.ratio,
        score_cutoff=SIMILAR,
        workers=1,
    )
    candidates: list[tuple[float, int, float, int, int]] = []
    for a, b in zip(*scores.nonzero(), strict=True):  # cdist leaves 0 below the cutoff
        i, j = left[int(a)], right[int(b)]
        place = abs(i / len(old) - j / len(new))
        candidates.append((-float(scores[a, b]), int(old[i].number != new[j].number), place, i, j))
    candidates.sort()
    used_new: set[int] = set()
    for _score, _number, _place, i, j in candidates:
        if i not in pairs and j not in used_new:
            pairs[i] = j
            used_new.add(j)


def _moved(pairs: dict[int, int]) -> set[int]:
    """Old indices outside one longest run of pairs in the same order in both versions."""
    order = sorted(pairs)
    tails: list[int] = []  # tails[k]: the smallest new index ending an increasing run of length k+1
    tail_at: list[int] = []  # position in `order` of that tail
    previous: list[int] = [-1] * len(order)
    for position, i in enumerate(order):
        j = pairs[i]
        k = bisect.bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(position)
        else:
            tails[k] = j
            tail_at[k] = position
        previous[position] = tail_at[k - 1] if k else -1
    kept: set[int] = set()
    position = tail_at[-1] if tail_at else -1
    while position >= 0:
        kept.add(order[position])
        position = previous[position]
    return set(pairs) - kept
