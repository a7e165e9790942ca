"""What the model read of each document of a question, in the words of the answer's footer: every page
read, every page not read and why. No answer given from part of a selection goes without it."""

from __future__ import annotations

from dataclasses import dataclass

from app.pages import page_ranges

WHOLE, PASSES, CHOSEN, SEARCHED = "whole", "passes", "chosen", "search"


@dataclass(frozen=True)
class DocumentReading:
    """How one document of a question is read: the pages there are to read (all of it, or the pages
    chosen), the requests planned over them, and how many of those were answered."""

    doc_index: int  # D-number in the conversation
    title: str
    unit: str  # 'page' | 'paragraph'
    total: int  # pages (paragraphs) the document has
    selection: tuple[int, ...]  # the pages there are to read
    windows: tuple[tuple[int, ...], ...]  # the pages of each request, in order
    how: str  # WHOLE | PASSES | CHOSEN (--pages) | SEARCHED
    too_long: tuple[int, ...] = ()  # pages that alone do not fit the context
    done: int = 0  # requests answered (the first `done` windows)

    @property
    def read(self) -> tuple[int, ...]:
        return tuple(sorted({p for w in self.windows[: self.done] for p in w}))

    def phrase(self) -> str:
        """'pages 1-612 in 5 passes: pages 1-131, 131-260, …' and what was not read."""
        many = f"{self.unit}s"
        read = self.read
        unread = sorted(set(range(1, self.total + 1)) - set(read)) if self.total else []
        said: list[str] = []
        if self.how == WHOLE:
            said.append(f"{_named(self.unit, self.selection)}, whole" if self.done else "")
        elif self.how == PASSES:
            shown = [page_ranges(w) for w in self.windows[: self.done]]
            joined = (", " if all("," not in s for s in shown) else "; ").join(shown)
            passes = len(self.windows)
            count = f"{passes} passes" if self.done == passes else f"{self.done} of {passes} passes"
            chosen = " (chosen by the user)" if len(self.selection) < self.total else ""
            if self.done:
                said.append(f"{_named(self.unit, read)}{chosen} in {count}: {many} {joined}")
        else:
            why = "chosen by the user" if self.how == CHOSEN else "those a word search ranks highest for the question"
            if read:
                said.append(f"{_named(self.unit, read)} of {self.total} ({why})")
            elif self.how == SEARCHED and self.done:
                said.append(f"no {self.unit} found by a word search for the question's words")
        said = [s for s in said if s]
        if self.too_long:
            said.append(f"not read: {_named(self.unit, self.too_long)} (alone longer than the model's context)")
        if not self.done and self.windows:
            said.append("not read (stopped before it)")
        elif unread:
            stopped = self.done < len(self.windows)
            planned = set(self.selection) - set(read) - set(self.too_long)
            if stopped and planned:
                said.append(f"not read: {_named(self.unit, planned)} (stopped before them)")
            others = set(unread) - planned - set(self.too_long) if stopped else set(unread) - set(self.too_long)
            if others:
                said.append(f"not read: the other {len(others)} {many if len(others) > 1 else self.unit}")
        return "; ".join(said)


def footer(readings: list[DocumentReading]) -> str:
    """The answer's last lines: what the model read, document by document."""
    if len(readings) == 1:
        return f"Read: {readings[0].phrase()}."
    lines = ["Read, document by document:"]
    lines += [f"- D{r.doc_index} {_short(r.title)}: {r.phrase()}" for r in readings]
    return "\n".join(lines)


def _named(unit: str, pages: tuple[int, ...] | list[int] | set[int]) -> str:
    """'page 9', 'pages 1-5, 9'."""
    return f"{unit}{'s' if len(pages) > 1 else ''} {page_ranges(pages)}"


def _short(title: str) -> str:
    flat = " ".join(title.split())
    return flat if len(flat) <= 48 else flat[:45].rstrip() + "..."
