"""The redline: every difference between two versions, each with its place in both.

Changes are listed in the new version's order. Within a paired clause, words are compared with
difflib (word_diff.py; a run of inserted, deleted or replaced words is one change); a clause without a partner is
inserted or deleted as a whole; a paired clause out of order is also a move. `compare` checks its own
work before returning: the old clauses with these changes applied must give the new clauses word for
word (apply.py), so a change cannot be dropped without the comparison failing.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.compare.align import align
from app.compare.apply import apply_changes
from app.compare.changes import Change, ChangeKind, Place
from app.compare.clauses import Clause, split_clauses
from app.compare.versions import Version
from app.compare.word_diff import word_opcodes
from app.compare.words import Word, read_words, settle_hyphens
from app.errors import FolioError

CONTEXT_WORDS = 6


@dataclass(frozen=True)
class Side:
    title: str
    reference: str
    page_count: int
    unit: str


@dataclass(frozen=True)
class Redline:
    old: Side
    new: Side
    old_clauses: tuple[tuple[str, ...], ...]  # the words compared, clause by clause
    new_clauses: tuple[tuple[str, ...], ...]
    changes: tuple[Change, ...]
    # Per clause, the words of a heading printed on a line of its own ('7. Governing Law'), else 0:
    # the redline shows that line above the clause's text, as the document does.
    old_heads: tuple[int, ...] = ()
    new_heads: tuple[int, ...] = ()

    def count(self, *kinds: ChangeKind) -> int:
        return sum(1 for c in self.changes if c.kind in kinds)


def compare(old: Version, new: Version) -> Redline:
    old_words, new_words = settle_hyphens(read_words(old), read_words(new))
    old_clauses, new_clauses = split_clauses(old_words), split_clauses(new_words)
    alignment = align(old_clauses, new_clauses)
    builder = _Builder(old.unit, new.unit, old_clauses, new_clauses)
    by_new = {j: i for i, j in alignment.pairs.items()}
    ordered: list[tuple[float, int, Change]] = []
    for j in range(len(new_clauses)):
        i = by_new.get(j)
        if i is None:
            ordered.append((j, 0, builder.clause_inserted(j, by_new, alignment.moved)))
            continue
        if i in alignment.moved:
            ordered.append((j, 0, builder.moved(i, j)))
        for n, change in enumerate(builder.word_changes(i, j), start=1):
            ordered.append((j, n, change))
    for i in range(len(old_clauses)):
        if i not in alignment.pairs:
            change, after_new = builder.clause_deleted(i, alignment.pairs, alignment.moved)
            ordered.append((after_new + 0.5, i, change))
    ordered.sort(key=lambda item: (item[0], item[1]))
    redline = Redline(
        old=Side(old.title, old.reference, old.page_count, old.unit),
        new=Side(new.title, new.reference, new.page_count, new.unit),
        old_clauses=tuple(tuple(c.texts) for c in old_clauses),
        new_clauses=tuple(tuple(c.texts) for c in new_clauses),
        changes=tuple(change for _, _, change in ordered),
        old_heads=tuple(c.head_line for c in old_clauses),
        new_heads=tuple(c.head_line for c in new_clauses),
    )
    rebuilt = apply_changes(redline.old_clauses, redline.changes)
    if tuple(tuple(c) for c in rebuilt) != redline.new_clauses:
        raise FolioError("the comparison does not reproduce the new version (a bug in Folio: please report it)")
    return redline


class _Builder:
    def __init__(self, old_unit: str, new_unit: str, old: list[Clause], new: list[Clause]) -> None:
        self.old_unit, self.new_unit = old_unit, new_unit
        self.old, self.new = old, new

    def word_changes(self, i: int, j: int) -> list[Change]:
        a, b = self.old[i], self.new[j]
        a_texts, b_texts = a.texts, b.texts
        if a_texts == b_texts:
            return []
        changes: list[Change] = []
        for tag, i1, i2, j1, j2 in word_opcodes(a_texts, b_texts):
            if tag == "equal":
                continue
            kind: ChangeKind = {"insert": "inserted", "delete": "deleted"}.get(tag, "changed")  # type: ignore[assignment]
            if tag == "replace" and i2 <= a.number_words and j2 <= b.number_words and i1 == j1 == 0:
                kind = "renumbered"
            changes.append(
                Change(
                    kind=kind,
                    clause=b.title(),
                    old_at=_place(self.old_unit, a.words, i1, i2),
                    new_at=_place(self.new_unit, b.words, j1, j2),
                    old_clause=i,
                    new_clause=j,
                    start=i1,
                    end=i2,
                    old_words=tuple(a_texts[i1:i2]),
                    new_words=tuple(b_texts[j1:j2]),
                    before=tuple(b_texts[max(0, j1 - CONTEXT_WORDS) : j1]),
                    after=tuple(b_texts[j2 : j2 + CONTEXT_WORDS]),
                )
            )
        return changes

    def moved(self, i: int, j: int) -> Change:
        a, b = self.old[i], self.new[j]
        return Change(
            kind="moved",
            clause=b.title(),
            old_at=_place(self.old_unit, a.words, 0, len(a.words)),
            new_at=_place(self.new_unit, b.words, 0, len(b.words)),
            old_clause=i,
            new_clause=j,
        )

    def clause_inserted(self, j: int, by_new: dict[int, int], moved: frozenset[int]) -> Change:
        b = self.new[j]
        # In the old version, it goes after the clause that precedes it in the new one (and stayed).
        before = next((by_new[k] for k in range(j - 1, -1, -1) if k in by_new and by_new[k] not in moved), None)
        return Change(
            kind="clause inserted",
            clause=b.title(),
            old_at=self._gap(self.old_unit, self.old, before),
            new_at=_place(self.new_unit, b.words, 0, len(b.words)),
            old_clause=None,
            new_clause=j,
            new_words=tuple(b.texts),
        )

    def clause_deleted(self, i: int, pairs: dict[int, int], moved: frozenset[int]) -> tuple[Change, int]:
        a = self.old[i]
        before = next((pairs[k] for k in range(i - 1, -1, -1) if k in pairs and k not in moved), None)
        change = Change(
            kind="clause deleted",
            clause=a.title(),
            old_at=_place(self.old_unit, a.words, 0, len(a.words)),
            new_at=self._gap(self.new_unit, self.new, before),
            old_clause=i,
            new_clause=None,
            start=0,
            end=len(a.words),
            old_words=tuple(a.texts),
        )
        return change, -1 if before is None else before

    @staticmethod
    def _gap(unit: str, clauses: list[Clause], before: int | None) -> Place:
        """Where something absent from this version would be: the end of the clause before it, or the start."""
        if before is None:
            first = clauses[0].words[0] if clauses else None
            return _at(unit, first, first)
        last = clauses[before].words[-1]
        return _at(unit, last, last)


def _place(unit: str, words: tuple[Word, ...], start: int, end: int) -> Place:
    """The pages of words[start:end]; for an empty range (an insertion point), the word before it."""
    if end > start:
        return _at(unit, words[start], words[end - 1])
    near = words[start - 1] if start > 0 else words[start] if start < len(words) else None
    return _at(unit, near, near)


def _at(unit: str, first: Word | None, last: Word | None) -> Place:
    if first is None or last is None:
        return Place(unit, 1, 1)
    return Place(unit, first.page, last.page, first.label, last.label)
