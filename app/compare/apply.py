"""Rebuilding the new version from the old one and the list of changes alone.

This is what makes the redline complete by construction: `compare` refuses to return a redline
whose changes, applied to the old clauses, do not give the new clauses word for word, and the tests
check the result against the new file's text read independently.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.compare.changes import WORD_KINDS, Change


@dataclass
class Layout:
    """The changes sorted by what they do to the old clauses, and the new version's order of clauses."""

    edits: dict[int, list[Change]]  # old clause index -> its word changes
    deleted: dict[int, Change]  # old clause index -> its deletion
    order: list[int | Change]  # for each new clause: the old clause it is (edited or not), or the insertion


def layout(old_count: int, changes: Iterable[Change]) -> Layout:
    edits: dict[int, list[Change]] = defaultdict(list)
    deleted: dict[int, Change] = {}
    placed: dict[int, int | Change] = {}
    for change in changes:
        if change.kind in WORD_KINDS:
            edits[_index(change.old_clause)].append(change)
        elif change.kind == "clause deleted":
            deleted[_index(change.old_clause)] = change
        elif change.kind == "moved":
            placed[_index(change.new_clause)] = _index(change.old_clause)
        elif change.kind == "clause inserted":
            placed[_index(change.new_clause)] = change
        else:
            raise ValueError(f"unknown change kind {change.kind!r}")
    moved = {v for v in placed.values() if isinstance(v, int)}
    staying = [i for i in range(old_count) if i not in deleted and i not in moved]
    total = len(staying) + len(placed)
    if any(not 0 <= n < total for n in placed):
        raise ValueError("a change puts a clause outside the new version")
    rest = iter(staying)
    order = [placed[n] if n in placed else next(rest) for n in range(total)]
    return Layout(edits, deleted, order)


def apply_changes(old_clauses: Sequence[Sequence[str]], changes: Iterable[Change]) -> list[list[str]]:
    """The new version's clauses: the old ones edited, deleted, moved and inserted as the changes say."""
    plan = layout(len(old_clauses), changes)
    edits = dict(plan.edits)
    result: list[list[str]] = []
    for source in plan.order:
        if isinstance(source, int):
            result.append(_edited(list(old_clauses[source]), edits.pop(source, [])))
        else:
            result.append(list(source.new_words))
    if edits:
        raise ValueError("a change edits a clause that is not in the new version")
    return result


def _edited(words: list[str], changes: list[Change]) -> list[str]:
    end = len(words) + 1
    for change in sorted(changes, key=lambda c: c.start, reverse=True):
        if not 0 <= change.start <= change.end <= min(end, len(words)):
            raise ValueError("overlapping or out-of-range changes in one clause")
        words[change.start : change.end] = change.new_words
        end = change.start
    return words


def _index(value: int | None) -> int:
    if value is None:
        raise ValueError("a change without the clause it refers to")
    return value
