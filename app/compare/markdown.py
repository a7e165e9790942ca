"""The redline as Markdown: a summary line, then each change under its clause with its anchors in both
versions ('[old p. 3] [new p. 4]'), deleted words struck through and inserted words in bold.

Document text is untrusted: every character Markdown or HTML could act on is escaped, so a contract
cannot add a link, an image or markup to the redline.
"""

from __future__ import annotations

from app.compare.changes import Change, ChangeKind
from app.compare.redline import Redline, Side

_ESCAPE = {c: "\\" + c for c in "\\`*_[]<>|~&#"}
_KIND_ORDER: tuple[ChangeKind, ...] = (
    "changed",
    "inserted",
    "deleted",
    "renumbered",
    "moved",
    "clause inserted",
    "clause deleted",
)
NOTE = (
    "Compared word by word within clauses paired by number, heading and text. Running headers and footers, "
    "page numbers, line breaks, line-end hyphenation and typography (quote and dash styles) are not changes."
)


def escape(text: str) -> str:
    return "".join(_ESCAPE.get(c, c) for c in text)


def summary(redline: Redline) -> str:
    total = len(redline.changes)
    if not total:
        return "No changes: the two versions have the same words."
    counts = ", ".join(f"{n} {kind}" for kind in _KIND_ORDER if (n := redline.count(kind)))
    return f"{total} change{'s' if total != 1 else ''}: {counts}."


def anchors(change: Change) -> str:
    return f"[old {change.old_at.cited()}] [new {change.new_at.cited()}]"


def to_markdown(redline: Redline) -> str:
    old, new = redline.old, redline.new
    lines = [
        f"# Redline: {escape(old.title)} → {escape(new.title)}",
        "",
        f"- Old: {_named(old)}",
        f"- New: {_named(new)}",
        "",
        summary(redline),
        "",
        NOTE,
    ]
    heading = None
    for change in redline.changes:
        title = change.clause + (" (deleted)" if change.kind == "clause deleted" else "")
        if title != heading:
            heading = title
            lines += ["", f"## {escape(title)}", ""]
        lines.append(change_line(change))
    return "\n".join(lines) + "\n"


def change_line(change: Change) -> str:
    where = anchors(change)
    if change.kind == "moved":
        return f"- **moved** {where}: the clause moved (old {change.old_at.cited()} → new {change.new_at.cited()})"
    if change.kind == "clause inserted":
        return f"- **clause inserted** {where}: {_inserted(change.new_words)}"
    if change.kind == "clause deleted":
        return f"- **clause deleted** {where}: {_deleted(change.old_words)}"
    if change.kind == "renumbered":
        return f"- **renumbered** {where}: {escape(' '.join(change.old_words))} → {escape(' '.join(change.new_words))}"
    parts = []
    if change.before:
        parts.append("…" + escape(" ".join(change.before)))
    if change.old_words:
        parts.append(_deleted(change.old_words))
    if change.new_words:
        parts.append(_inserted(change.new_words))
    if change.after:
        parts.append(escape(" ".join(change.after)) + "…")
    return f"- **{change.kind}** {where}: {' '.join(parts)}"


def _deleted(words: tuple[str, ...]) -> str:
    return f"~~{escape(' '.join(words))}~~"


def _inserted(words: tuple[str, ...]) -> str:
    return f"**{escape(' '.join(words))}**"


def _named(side: Side) -> str:
    """'#3 Sponsorship Agreement (6 pages)' for a library document, the file's path for a file read once."""
    name = f"{side.reference} {side.title}" if side.reference.startswith("#") else side.reference
    return f"{escape(name)} ({_extent(side.page_count, side.unit)})"


def _extent(count: int, unit: str) -> str:
    noun = "paragraph" if unit == "paragraph" else "page"
    return f"{count} {noun}{'s' if count != 1 else ''}"
