"""What a citation or a claim's verdict mark in a stored answer points at, and the answer with links.

A message stores its citations as checked by app.citations (page exists, quote found on it) and its
claims as grounded by app.citations.grounding. The window turns each citation and each verdict mark into a
link: this module says where the link goes (document, page or time, the words to highlight), what
state it is in, and the words shown on hover. A citation counts as verified only when something
was checked on its page (the quote, or the claim's facts): a page that merely exists is not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.citations.grounding import FOUND, PARTLY, QUOTED, SUPPORTED, UNSUPPORTED, WRONG_PAGE
from app.citations.verdicts import explain, mark, where

VERIFIED = "verified"  # the quote, or the claim's facts, were found on this page
UNCHECKED = "unchecked"  # the page exists; nothing on it was checked (nothing to check, or an older answer)
QUOTE_MISSING = "quote_not_found"  # the page exists but the quote is not on it
ELSEWHERE = "found_elsewhere"  # the claim is supported by another page than this one
NOT_FOUND = "not_supported"  # no page holds the claim this citation backs
PARTIAL = "partly_found"  # this page (or another) holds part of the claim; the rest was not found
BAD_ANCHOR = "no_such_page"  # the page or time is not in the document
PASSAGE = "passage"  # not a citation: the passage Folio found supporting a claim (shown highlighted)


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
    found_at: str = ""  # where the claim's support is, when it is on another page ('p. 7')

    @property
    def trusted(self) -> bool:
        return self.state == VERIFIED

    @property
    def faulty(self) -> bool:
        """Something was checked and failed (shown in red): not merely unchecked."""
        return self.state not in (VERIFIED, UNCHECKED)

    @property
    def tooltip(self) -> str:
        cited = self.text.strip("[]()")
        if self.state == VERIFIED:
            what = "Quote" if self.quote else "This sentence's facts were"
            return f"{what} found on {cited}. Click to see the passage highlighted."
        if self.state == UNCHECKED:
            return f"{cited} exists; nothing on it was checked for this sentence. Click to open it."
        if self.state == QUOTE_MISSING:
            return f"Not verified: the quoted passage was not found on {cited}. Click to open the page."
        if self.state == ELSEWHERE:
            return f"Wrong page: this sentence is not on {cited}; Folio found it on {self.found_at}."
        if self.state == PARTIAL:
            return f"Partly verified: part of this sentence was found on {self.found_at or cited}; not all of it."
        if self.state == NOT_FOUND:
            return f"Not verified: neither {cited} nor any other page holds this sentence's facts."
        if self.kind == "time":
            return f"Not verified: {cited} is not within the clip."
        if self.kind in ("section", "paragraph"):
            return f"Not verified: {cited} is not in this document."
        return f"Not verified: {cited} is not a page of this document."


def state_of(citation: dict[str, Any], claim: dict[str, Any] | None = None) -> str:
    """A citation's state from its own check and from its claim's verdict (None for answers stored
    before claims were grounded: then only a found quote counts)."""
    if not citation.get("valid"):
        return BAD_ANCHOR
    if citation.get("quote_found") is False:
        return QUOTE_MISSING
    verdict = claim.get("verdict") if claim else None
    if verdict in (QUOTED, SUPPORTED) and claim is not None and _same_place(claim, citation):
        return VERIFIED
    if verdict == WRONG_PAGE:
        return ELSEWHERE
    if verdict == PARTLY:
        return PARTIAL
    if verdict == UNSUPPORTED:
        return NOT_FOUND
    if citation.get("quote_found") is True:
        return VERIFIED
    return UNCHECKED


def _same_place(claim: dict[str, Any], citation: dict[str, Any]) -> bool:
    """The claim's support is on a page (or paragraph) this citation names, in the document it names
    (an e-mail's attachment has its own pages)."""
    cited_doc, found_doc = citation.get("document_id"), claim.get("document_id")
    same_doc = cited_doc is None or found_doc is None or cited_doc == found_doc
    return same_doc and claim.get("page") in (citation.get("pages") or [])


def owners(claims: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """For each citation (by index), the claim it stands in."""
    return {i: claim for claim in claims for i in claim.get("citations") or []}


def targets(
    citations: list[dict[str, Any]], document_ids: list[int], claims: list[dict[str, Any]] | None = None
) -> list[CitationTarget]:
    by_citation = owners(claims or [])
    out = []
    for i, c in enumerate(citations):
        claim = by_citation.get(i)
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
                state=state_of(c, claim),
                found_at=where(claim, len(document_ids))
                if claim and claim.get("verdict") in (WRONG_PAGE, PARTLY)
                else "",
            )
        )
    return out


@dataclass(frozen=True)
class ClaimTarget:
    """A claim's verdict mark: clicking it opens the page that supports the claim, passage highlighted."""

    index: int  # position among the message's claims
    verdict: str
    mark: str  # '✓ quoted p. 4'
    tooltip: str
    document_id: int | None
    page: int | None
    t_seconds: float | None
    passage: str  # the words to highlight on that page
    by_folio: bool  # the page is Folio's finding, not the model's citation

    @property
    def opens(self) -> bool:
        return self.document_id is not None and (self.page is not None or self.t_seconds is not None)


def claim_targets(claims: list[dict[str, Any]], document_ids: list[int]) -> list[ClaimTarget | None]:
    """One target per claim, None for a claim that gets no mark (a heading, a courtesy)."""
    out: list[ClaimTarget | None] = []
    for i, claim in enumerate(claims):
        shown = mark(claim, len(document_ids))
        if shown is None:
            out.append(None)
            continue
        doc_index = claim.get("doc_index")
        found = claim.get("verdict") in FOUND or claim.get("reason") == "not_checkable"  # a frame: open it
        doc_id = document_ids[doc_index - 1] if found and doc_index and 1 <= doc_index <= len(document_ids) else None
        if found and claim.get("document_id") is not None:
            doc_id = claim["document_id"]  # the part that holds it: the document, or an e-mail's attachment
        out.append(
            ClaimTarget(
                index=i,
                verdict=str(claim.get("verdict")),
                mark=shown,
                tooltip=explain(claim, len(document_ids)),
                document_id=doc_id,
                page=claim.get("page") if found else None,
                t_seconds=claim.get("t_seconds") if found else None,
                passage=str(claim.get("passage") or claim.get("quote") or ""),
                by_folio=claim.get("verdict") == "added",
            )
        )
    return out


def escape_markdown(text: str) -> str:
    specials = "\\`*_{}[]()#+-.!|>~<"
    return "".join("\\" + ch if ch in specials else ch for ch in text)


def link_citations(
    answer: str,
    citations: list[dict[str, Any]],
    href: Callable[[int], str],
    marks: Sequence[tuple[int, str, str]] = (),
) -> str:
    """The answer's Markdown with each citation (found at its stored offsets) turned into a link, and
    each verdict mark (offset, text, address) put in as a link where its claim ends."""
    events: list[tuple[int, int, int, str]] = []  # start, order (citations first), end, markdown
    for i, c in enumerate(citations):
        start, end = int(c.get("start", -1)), int(c.get("end", -1))
        if 0 <= start < end <= len(answer) and answer[start:end] == c.get("text"):
            events.append((start, 0, end, f"[{escape_markdown(answer[start:end])}]({href(i)})"))
    for at, text, address in marks:
        if 0 <= at <= len(answer):
            events.append((at, 1, at, f" [{escape_markdown(text)}]({address})"))
    out: list[str] = []
    last = 0
    for start, _order, end, markdown in sorted(events):
        if start < last:
            continue  # offsets that no longer match the text, or overlap, are left as plain text
        out += [answer[last:start], markdown]
        last = end
    out.append(answer[last:])
    return "".join(out)
