"""One reply made of several grounded answers: a table of part x answer, a synthesis, the footer.

Each answer was grounded on its own (its claims and citations, with offsets into its own text); here
its text is placed in the reply and every claim and citation moves with it, so the stored turn's
marks and clickable citations point where they did. Within a table cell the answer is kept on one
line (a line break or '|' would end the cell: each becomes one character, so offsets keep). An answer
of one document of several cites its pages as [p. 3]; in the reply, where several documents share
the page, each of its bracketed citations names its document ([D2 p. 3]) and points at it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_NAMED_DOC_RE = re.compile(r"^\[(?:D|e-?mail\s*)\d+\s*,?\s*", re.IGNORECASE)
NOT_FOUND_RE = re.compile(r"^\W*(not\s+found|nothing\s+found)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Answer:
    """One request's answer and its grounding (ClaimVerdict.to_dict / Citation.to_dict, in its text)."""

    text: str
    claims: list[dict[str, Any]] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def found(self) -> bool:
        """False when the model said this part does not answer the question (or wrote nothing)."""
        return bool(self.text.strip()) and NOT_FOUND_RE.match(self.text) is None


def naming_document(answer: Answer, doc_index: int) -> tuple[str, Callable[[int], int]]:
    """The answer's text with each bracketed citation naming document `doc_index` ([p. 3] ->
    [D2 p. 3]), and where each offset of the old text went."""
    edits: list[tuple[int, int, str]] = []
    for c in sorted(answer.citations, key=lambda c: int(c["start"])):
        written = str(c["text"])
        if c.get("written", "bracket") != "bracket" or not written.startswith("["):
            continue
        named = f"[D{doc_index} " + _NAMED_DOC_RE.sub("", written, count=1).removeprefix("[")
        if named != written:
            edits.append((int(c["start"]), int(c["end"]), named))
    out: list[str] = []
    moves: list[tuple[int, int]] = []  # (old end of an edit, total shift after it)
    last, shift = 0, 0
    for start, end, named in edits:
        out += [answer.text[last:start], named]
        shift += len(named) - (end - start)
        moves.append((end, shift))
        last = end
    out.append(answer.text[last:])

    def moved(pos: int) -> int:
        by = 0
        for end, total in moves:
            if pos >= end:
                by = total
        return pos + by

    return "".join(out), moved


class Reply:
    """A reply built piece by piece, with the claims and citations of the answers placed in it."""

    def __init__(self) -> None:
        self.text = ""
        self.claims: list[dict[str, Any]] = []
        self.citations: list[dict[str, Any]] = []

    def add(self, literal: str) -> None:
        self.text += literal

    def add_answer(self, answer: Answer, *, doc_index: int | None = None, one_line: bool = False) -> None:
        """Place an answer: its claims and citations move with it. `doc_index`: the answer was about
        that document alone (its citations are renamed to point at it); `one_line`: in a table cell."""
        text, moved = naming_document(answer, doc_index) if doc_index is not None else (answer.text, lambda p: p)
        if one_line:
            text = text.replace("\r", " ").replace("\n", " ").replace("|", "/")
        base, first_citation = len(self.text), len(self.citations)
        self.text += text
        for c in answer.citations:
            start, end = base + moved(int(c["start"])), base + moved(int(c["end"]))
            placed = {**c, "start": start, "end": end, "text": self.text[start:end]}
            if doc_index is not None:
                placed["doc_index"] = doc_index
            self.citations.append(placed)
        for claim in answer.claims:
            start, end = base + moved(int(claim["start"])), base + moved(int(claim["end"]))
            placed = {**claim, "start": start, "end": end, "text": self.text[start:end]}
            placed["citations"] = [first_citation + int(i) for i in claim.get("citations") or []]
            if doc_index is not None and placed.get("doc_index") is not None:
                placed["doc_index"] = doc_index
            self.claims.append(placed)
