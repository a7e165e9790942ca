"""The redline as Markdown: a summary line, the model's summary when one was written (each sentence with
its grounding verdict, then "Other changes": every change it does not mention), then each change under
its clause with its anchors in both versions ('[old p. 3] [new p. 4]'), deleted words struck through
and inserted words in bold.

Document text is untrusted: every character Markdown or HTML could act on is escaped, so a contract
cannot add a link, an image or markup to the redline.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.compare.changes import Change, ChangeKind
from app.compare.redline import Redline, Side

if TYPE_CHECKING:
    from app.compare.summary import Summary

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


def to_markdown(redline: Redline, written: Summary | None = None) -> str:
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
    if written is not None:
        lines += summary_lines(redline, written)
        lines += ["", "## The complete redline"]
    heading = None
    for change in redline.changes:
        title = change.clause + (" (deleted)" if change.kind == "clause deleted" else "")
        if title != heading:
            heading = title
            lines += ["", f"{'###' if written else '##'} {escape(title)}", ""]
        lines.append(change_line(change))
    return "\n".join(lines) + "\n"


def summary_lines(redline: Redline, written: Summary) -> list[str]:
    """The model's summary as it wrote it (its own Markdown, untrusted: a PDF made from this shows links and
    HTML as text), each checked sentence's verdict, then the changes it does not mention."""
    from app.citations.verdicts import explain, mark
    from app.citations.verdicts import summary as verdict_counts

    demo = " (a small demo model: set up a real one for a summary to rely on)" if written.demo else ""
    lines = [
        "",
        "## Summary of the material changes",
        "",
        f"Written by {escape(written.model_label)}{demo}. "
        "D1 is the old version, D2 the new one; every sentence was checked against both.",
    ]
    if written.note:
        lines += ["", written.note]
    for part in written.parts:
        if part.title:
            lines += ["", f"### {escape(part.title)}"]
        # Its headings are kept as text: the model's answer cannot open a section of this file.
        lines += ["", re.sub(r"(?m)^(\s*)#", r"\1\\#", part.text) or "_(the model wrote nothing)_"]
        if part.stop_reason == "length":
            lines += ["", "_The answer reached its length limit (max_answer_tokens) and stops there._"]
        notes = [(m, c) for c in part.claims if (m := mark(c, 2)) is not None]
        if notes:
            lines += ["", f"Checked sentence by sentence ({verdict_counts(part.claims)}):"]
            lines += [f"- **{m}** {' '.join(str(c['text']).split())} - {explain(c, 2)}" for m, c in notes]
    other = written.other(redline)
    lines += ["", "## Other changes", ""]
    lines.append(
        f"{len(other)} of the {len(redline.changes)} changes are not mentioned above (a change counts as mentioned "
        "when one sentence cites its page in either version and names its changed words, or its clause for a "
        "whole-clause change)."
        + (
            f" {len(written.unread)} of them were not read by the model: their pages alone do not fit its context."
            if written.unread
            else ""
        )
    )
    if other:
        lines.append("")
        lines += [f"{change_line(redline.changes[k])} ({escape(redline.changes[k].clause)})" for k in other]
    return lines


@dataclass(frozen=True)
class _Style:
    text: Callable[[str], str]
    deleted: Callable[[str], str]
    inserted: Callable[[str], str]
    kind: Callable[[str], str]


_MARKDOWN = _Style(escape, lambda t: f"~~{escape(t)}~~", lambda t: f"**{escape(t)}**", lambda k: f"**{k}**")
_PLAIN = _Style(str, lambda t: f"[-{t}-]", lambda t: f"{{+{t}+}}", str)  # the wdiff notation


def change_line(change: Change) -> str:
    """The change as a Markdown list item: deleted words struck through, inserted words bold."""
    return "- " + _described(change, _MARKDOWN)


def change_text(change: Change) -> str:
    """The change as plain text ([-deleted-] {+inserted+}), for a document that is not Markdown."""
    return _described(change, _PLAIN)


def _described(change: Change, style: _Style) -> str:
    where = anchors(change)
    kind = style.kind(change.kind)
    if change.kind == "moved":
        return f"{kind} {where}: the clause moved (old {change.old_at.cited()} → new {change.new_at.cited()})"
    if change.kind == "clause inserted":
        return f"{kind} {where}: {style.inserted(' '.join(change.new_words))}"
    if change.kind == "clause deleted":
        return f"{kind} {where}: {style.deleted(' '.join(change.old_words))}"
    if change.kind == "renumbered":
        return f"{kind} {where}: {style.text(' '.join(change.old_words))} → {style.text(' '.join(change.new_words))}"
    parts = []
    if change.before:
        parts.append("…" + style.text(" ".join(change.before)))
    if change.old_words:
        parts.append(style.deleted(" ".join(change.old_words)))
    if change.new_words:
        parts.append(style.inserted(" ".join(change.new_words)))
    if change.after:
        parts.append(style.text(" ".join(change.after)) + "…")
    return f"{kind} {where}: {' '.join(parts)}"


def _named(side: Side) -> str:
    """'#3 Sponsorship Agreement (6 pages)' for a library document, the file's path for a file read once."""
    name = f"{side.reference} {side.title}" if side.reference.startswith("#") else side.reference
    return f"{escape(name)} ({_extent(side.page_count, side.unit)})"


def _extent(count: int, unit: str) -> str:
    noun = "paragraph" if unit == "paragraph" else "page"
    return f"{count} {noun}{'s' if count != 1 else ''}"
