"""The redline as the new version's text with every change marked in place: what a Word document with
tracked changes shows. Accepting every insertion and dropping every deletion gives the new version word
for word (the same layout of changes as apply.py, which `compare` checks); a moved clause stands where
it is now, with a note of where it was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.compare.apply import layout
from app.compare.changes import Change
from app.compare.redline import Redline

PieceKind = Literal["same", "inserted", "deleted", "note"]


@dataclass(frozen=True)
class Piece:
    kind: PieceKind
    text: str
    change: int | None = None  # its index in Redline.changes (None for unchanged words)


Paragraph = list[Piece]


def tracked_paragraphs(redline: Redline) -> list[Paragraph]:
    """One paragraph per clause of either version, in the new version's order; a deleted clause stays
    after the clause that preceded it in the old version."""
    plan = layout(len(redline.old_clauses), redline.changes)
    number = {id(c): k for k, c in enumerate(redline.changes)}
    moved = {c.old_clause: c for c in redline.changes if c.kind == "moved"}
    deleted_after: dict[int | None, list[Change]] = {}
    kept = [i for i in plan.order if isinstance(i, int) and i not in moved]
    for i, change in sorted(plan.deleted.items()):
        before = max((k for k in kept if k < i), default=None)
        deleted_after.setdefault(before, []).append(change)

    def gone(c: Change) -> Paragraph:
        return [Piece("deleted", " ".join(c.old_words), number[id(c)])]

    out: list[Paragraph] = [gone(c) for c in deleted_after.get(None, [])]
    for source in plan.order:
        if not isinstance(source, int):
            out.append([Piece("inserted", " ".join(source.new_words), number[id(source)])])
            continue
        paragraph = _edited(redline.old_clauses[source], plan.edits.get(source, []), number)
        if source in moved:
            move = moved[source]
            paragraph.append(Piece("note", f"moved from old {move.old_at.cited()}", number[id(move)]))
        out.append(paragraph)
        out += [gone(c) for c in deleted_after.get(source, [])]
    return out


def _edited(words: tuple[str, ...], changes: list[Change], number: dict[int, int]) -> Paragraph:
    pieces: Paragraph = []
    at = 0
    for change in sorted(changes, key=lambda c: c.start):
        pieces.append(Piece("same", " ".join(words[at : change.start])))
        pieces.append(Piece("deleted", " ".join(change.old_words), number[id(change)]))
        pieces.append(Piece("inserted", " ".join(change.new_words), number[id(change)]))
        at = change.end
    pieces.append(Piece("same", " ".join(words[at:])))
    return [p for p in pieces if p.text]


def accepted(paragraphs: list[Paragraph]) -> list[str]:
    """The words with every change accepted: the new version's."""
    return [w for p in paragraphs for piece in p if piece.kind in ("same", "inserted") for w in piece.text.split()]
