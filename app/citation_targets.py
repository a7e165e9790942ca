"""What a citation in a stored answer points at, how sure we are, and the answer with links.

A message stores its citations as checked by app.citations (page exists, quote found on it).
The window turns each one into a link: this module says where the link goes (document, page or
time, the quote to highlight), what state it is in, and the words shown on hover.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ingest.document import format_timestamp

VERIFIED = "verified"  # the page exists and the quote was found on it
UNQUOTED = "unquoted"  # the page exists; the answer quoted nothing to check
QUOTE_MISSING = "quote_not_found"  # the page exists but the quote is not on it
BAD_ANCHOR = "no_such_page"  # the page or time is not in the document


@dataclass(frozen=True)
class CitationTarget:
    index: int  # position among the message's citations
    text: str  # as written, e.g. '[p. 4]'
    document_id: int | None
    kind: str  # 'page' | 'time' | 'section' | 'paragraph'
    page: int | None  # in a flowing document (Word, text, e-mail): the paragraph number
    t_seconds: float | None
    quote: str | None
    state: str

    @property
    def trusted(self) -> bool:
        return self.state in (VERIFIED, UNQUOTED)

    @property
    def tooltip(self) -> str:
        where = self.text.strip("[]")
        if self.state == VERIFIED:
            return f"Quote found on {where}. Click to see it highlighted."
        if self.state == UNQUOTED:
            return f"{where} exists. The answer quotes nothing here to check. Click to open it."
        if self.state == QUOTE_MISSING:
            return f"Not verified: the quoted passage was not found on {where}. Click to open the page."
        if self.kind == "time":
            return f"Not verified: {where} is not within the clip."
        if self.kind in ("section", "paragraph"):
            return f"Not verified: {where} is not in this document."
        return f"Not verified: {where} is not a page of this document."


def state_of(citation: dict[str, Any]) -> str:
    if not citation.get("valid"):
        return BAD_ANCHOR
    found = citation.get("quote_found")
    if found is None:
        return UNQUOTED
    return VERIFIED if found else QUOTE_MISSING


def targets(citations: list[dict[str, Any]], document_ids: list[int]) -> list[CitationTarget]:
    out = []
    for i, c in enumerate(citations):
        doc_index = int(c.get("doc_index") or 1)
        doc_id = document_ids[doc_index - 1] if 1 <= doc_index <= len(document_ids) else None
        if c.get("attachment") is not None:  # a place inside one of the e-mail's attachments
            doc_id = c.get("document_id") if c.get("valid") else None
        pages = c.get("pages") or []
        out.append(
            CitationTarget(
                index=i,
                text=str(c.get("text", "")),
                document_id=doc_id,
                kind=str(c.get("kind", "page")),
                page=int(pages[0]) if pages else None,
                t_seconds=c.get("t_seconds"),
                quote=c.get("quote"),
                state=state_of(c),
            )
        )
    return out


def escape_markdown(text: str) -> str:
    specials = "\\`*_{}[]()#+-.!|>~<"
    return "".join("\\" + ch if ch in specials else ch for ch in text)


def link_citations(answer: str, citations: list[dict[str, Any]], href: Callable[[int], str]) -> str:
    """The answer's Markdown with each citation (found at its stored offsets) turned into a link."""
    out: list[str] = []
    last = 0
    for i, c in sorted(enumerate(citations), key=lambda ic: int(ic[1].get("start", 0))):
        start, end = int(c.get("start", -1)), int(c.get("end", -1))
        if start < last or end > len(answer) or answer[start:end] != c.get("text"):
            continue  # offsets that no longer match the text are left as plain text
        out.append(answer[last:start])
        out.append(f"[{escape_markdown(answer[start:end])}]({href(i)})")
        last = end
    out.append(answer[last:])
    return "".join(out)


def describe_time(t_seconds: float | None) -> str:
    return format_timestamp(t_seconds) if t_seconds is not None else "?"
