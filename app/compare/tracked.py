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

PieceKind = Literal["same", "inserted", "deleted", "note", "break"]  # break: the end of a heading's own line


@dataclass(frozen=True)
class Piece:
    kind: PieceKind
    text: str
    change: int | None = None  # its index in Redline.changes (None for unchanged words)


Paragraph = list[Piece]
BREAK = Piece("break", "")


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
        return _whole("deleted", c.old_words, _head(redline.old_heads, c.old_clause), number[id(c)])

    out: list[Paragraph] = [gone(c) for c in deleted_after.get(None, [])]
    for source in plan.order:
        if not isinstance(source, int):
            head = _head(redline.new_heads, source.new_clause)
            out.append(_whole("inserted", source.new_words, head, number[id(source)]))
            continue
        head = _head(redline.old_heads, source)
        paragraph = _edited(redline.old_clauses[source], plan.edits.get(source, []), number, head)
        if source in moved:
            move = moved[source]
            paragraph.append(Piece("note", f"moved from old {move.old_at.cited()}", number[id(move)]))
        out.append(paragraph)
        out += [gone(c) for c in deleted_after.get(source, [])]
    return out


def _head(heads: tuple[int, ...], clause: int | None) -> int:
    return heads[clause] if clause is not None and clause < len(heads) else 0


def _whole(kind: PieceKind, words: tuple[str, ...], head: int, change: int) -> Paragraph:
    """A clause inserted or deleted whole: its heading line, then its text."""
    if 0 < head < len(words):
        return [Piece(kind, " ".join(words[:head]), change), BREAK, Piece(kind, " ".join(words[head:]), change)]
    return [Piece(kind, " ".join(words), change)]


def _edited(words: tuple[str, ...], changes: list[Change], number: dict[int, int], head: int = 0) -> Paragraph:
    """The clause's words with its changes in place; the heading's own line ends before word `head`,
    unless a change runs across that end (the heading was rewritten into the text or out of it)."""
    pieces: Paragraph = []
    at = 0

    def same(end: int) -> None:
        if at < head <= end and head < len(words):
            pieces.extend([Piece("same", " ".join(words[at:head])), BREAK, Piece("same", " ".join(words[head:end]))])
        else:
            pieces.append(Piece("same", " ".join(words[at:end])))

    for change in sorted(changes, key=lambda c: c.start):
        same(change.start)
        pieces.append(Piece("deleted", " ".join(change.old_words), number[id(change)]))
        pieces.append(Piece("inserted", " ".join(change.new_words), number[id(change)]))
        at = change.end
    same(len(words))
    return [p for p in pieces if p.text or p.kind == "break"]


def accepted(paragraphs: list[Paragraph]) -> list[str]:
    """The words with every change accepted: the new version's."""
    return [w for p in paragraphs for piece in p if piece.kind in ("same", "inserted") for w in piece.text.split()]
