"""What one change is: its kind, the words it replaces, and its place in both versions. Apart from
redline.py so that apply.py, which rebuilds the new text from changes alone, does not import the
comparison that checks itself with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ChangeKind = Literal["changed", "inserted", "deleted", "renumbered", "clause inserted", "clause deleted", "moved"]
WORD_KINDS: tuple[ChangeKind, ...] = ("changed", "inserted", "deleted", "renumbered")


@dataclass(frozen=True)
class Place:
    """Pages (paragraphs, in a flowing document) a change covers in one version."""

    unit: str
    first: int
    last: int
    first_label: str | None = None
    last_label: str | None = None

    def cited(self) -> str:
        """'p. 3', 'pp. 3-4' (printed labels when the pages have them); in a flowing document the clause
        number printed on the paragraph, '§ 12.3', else its paragraph number, '¶ 41', as citations are."""
        first = self.first_label or str(self.first)
        last = self.last_label or str(self.last)
        if self.unit == "paragraph":
            if self.first == self.last:
                return f"§ {self.first_label}" if self.first_label else f"¶ {self.first}"
            return f"¶ {self.first}-{self.last}"
        return f"p. {first}" if self.first == self.last else f"pp. {first}-{last}"


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    clause: str  # the clause it is in, as titled in the new version (the old one for a deleted clause)
    old_at: Place
    new_at: Place
    old_clause: int | None  # index into Redline.old_clauses; None for an inserted clause
    new_clause: int | None  # index into Redline.new_clauses; None for a deleted clause
    start: int = 0  # the old clause's words [start:end] that this change replaces
    end: int = 0
    old_words: tuple[str, ...] = ()
    new_words: tuple[str, ...] = ()
    before: tuple[str, ...] = ()  # a few unchanged words either side, for finding it
    after: tuple[str, ...] = ()
