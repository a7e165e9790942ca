"""Find citations in an answer and check them against the source: [p. N], [t hh:mm:ss], and for Word,
text and e-mail documents [§ 12.3] / [¶ 41], each optionally inside an e-mail's attachment
([attachment 1, p. 2]). The forms are defined once, in ingest.document (Anchor.marker, CITED_PLACE)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from app.citations.quotes import quote_in
from ingest.document import CITED_PLACE, cited_place

_CITE_RE = re.compile(rf"\[(?:(?:D|e-?mail\s*)(?P<doc>\d+)\s*,?\s*)?{CITED_PLACE}\]", re.IGNORECASE)
# Citations written in words: "on page 4", "pages 3 and 4", "(p. 4)", "(pp. 3-4)".
_PROSE_PAGE_RE = re.compile(
    r"\b(?P<pages>pages?\s+(?:\d{1,4}|[ivxlc]{1,6}\b)(?:\s*(?:-|–|to|and|&|,)\s*\d{1,4})*)"
    r"|\((?P<paren>pp?\.\s*\d{1,4}(?:\s*(?:-|–|,|and)\s*\d{1,4})*)\)",
    re.IGNORECASE,
)
# "Section 15.7", "clause 11.2", "§ 12.3", "Article 5": the page that holds that heading (in a Word,
# text or e-mail document: that clause, as [§ 12.3] is).
_SECTION_RE = re.compile(
    r"(?:\b(?:sections?|sec\.|clauses?|articles?)|§)\s*(?P<number>\d{1,3}(?:\.\d{1,3}){0,3}(?:\([a-z0-9]{1,3}\))?)",
    re.IGNORECASE,
)
_QUOTE_BEFORE_RE = re.compile(r"[\"“”]([^\"“”]{3,600})[\"“”][\s,;:.]{0,3}$")
_RANGE_RE = re.compile(r"^(\S+?)\s*[-–—]\s*(\S+)$")


@dataclass(frozen=True)
class Citation:
    kind: str  # 'page' | 'time' | 'section' | 'paragraph' (see ANCHOR_KINDS)
    text: str  # as written, e.g. '[p. 3]', '[§ 12.3]', 'on page 3', 'Section 15.7'
    start: int
    end: int
    doc_index: int  # 1-based within the conversation's documents
    labels: tuple[str, ...] = ()  # page labels as cited ('iv', '3'); a clause number; a paragraph number
    pages: tuple[int, ...] = ()  # resolved 1-based page numbers (paragraph numbers in flowing documents)
    t_seconds: float | None = None
    quote: str | None = None
    valid: bool = False  # the cited page/time exists in the document
    quote_found: bool | None = None  # None when the answer quoted nothing
    attachment: int | None = None  # the cited place is in this attachment of the e-mail doc_index names
    document_id: int | None = None  # the document checked: the e-mail's attachment when one is cited
    written: str = "bracket"  # 'bracket' ([p. 3]) or 'prose' (on page 3, Section 15.7)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_timestamp(text: str) -> float | None:
    parts = text.strip().split(":")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        return None
    numbers = [int(p) for p in parts]
    if any(n >= 60 for n in numbers[1:]):
        return None
    seconds = 0
    for n in numbers:
        seconds = seconds * 60 + n
    return float(seconds)


def _page_labels(spec: str) -> list[str]:
    spec = re.sub(r"^pp?\.?\s*", "", spec.strip(), flags=re.IGNORECASE)
    labels: list[str] = []
    for piece in re.split(r"\s*(?:,|;|\band\b|&)\s*", spec):
        piece = piece.strip()
        if not piece:
            continue
        match = _RANGE_RE.match(piece)
        if match and match.group(1).isdigit() and match.group(2).isdigit():
            low, high = int(match.group(1)), int(match.group(2))
            if 0 < low <= high and high - low <= 50:
                labels.extend(str(n) for n in range(low, high + 1))
                continue
        labels.append(piece)
    return labels


def _quote_before(answer: str, at: int) -> str | None:
    match = _QUOTE_BEFORE_RE.search(answer[max(0, at - 700) : at])
    return match.group(1).strip() if match else None


def _bracketed(answer: str, match: re.Match[str]) -> Citation | None:
    place = cited_place(match)
    if place is None:
        return None
    doc = int(match.group("doc") or 1)
    at = (match.group(0), match.start(), match.end(), doc)
    common = {"quote": _quote_before(answer, match.start()), "attachment": place.attachment}
    if place.kind == "time":
        return Citation("time", *at, t_seconds=parse_timestamp(place.value), **common)  # type: ignore[arg-type]
    if place.kind in ("section", "paragraph"):
        return Citation(place.kind, *at, labels=(place.value,), **common)  # type: ignore[arg-type]
    labels = tuple(_page_labels(place.value))
    return Citation("page", *at, labels=labels, **common) if labels else None  # type: ignore[arg-type]


def _prose_page(answer: str, match: re.Match[str]) -> Citation | None:
    spec = match.group("pages") or match.group("paren")
    spec = re.sub(r"^(?:pages?|pp?\.)\s*", "", spec, flags=re.IGNORECASE).replace(" to ", "-")
    labels = tuple(_page_labels(spec))
    if not labels:
        return None
    start, end = match.span()
    return Citation("page", match.group(0), start, end, 1, labels=labels, quote=_quote_before(answer, start),
                    written="prose")  # fmt: skip


def _section(answer: str, match: re.Match[str]) -> Citation:
    start, end = match.span()
    return Citation("section", match.group(0), start, end, 1, labels=(match.group("number"),),
                    quote=_quote_before(answer, start), written="prose")  # fmt: skip


@dataclass(frozen=True)
class AnchorKind:
    """One way an answer can point into a document: how it is written, and how it is read back.

    To add an anchor kind, add one entry to ANCHOR_KINDS and, if it does not resolve to pages like
    'section' does, a branch in `check`. Bracketed forms ([p. 4], [§ 12.3], [¶ 41], [attachment 1,
    p. 2]) are one kind: ingest.document.CITED_PLACE defines them for the writer and the reader."""

    name: str
    pattern: re.Pattern[str]
    read: Callable[[str, re.Match[str]], Citation | None]


# In order of precedence: where two overlap, the earlier kind keeps the text.
ANCHOR_KINDS: tuple[AnchorKind, ...] = (
    AnchorKind("bracket", _CITE_RE, _bracketed),
    AnchorKind("prose page", _PROSE_PAGE_RE, _prose_page),
    AnchorKind("section", _SECTION_RE, _section),
)


_QUOTED_SPAN_RE = re.compile(r"[\"“][^\"“”]{1,600}[\"”]")


def find_citations(answer: str) -> list[Citation]:
    found: list[Citation] = []
    # Words quoted from the document ('"as set out in Section 7"') are the document's, not a citation.
    quoted = [m.span() for m in _QUOTED_SPAN_RE.finditer(answer)]
    for kind in ANCHOR_KINDS:
        for match in kind.pattern.finditer(answer):
            if any(c.start < match.end() and match.start() < c.end for c in found):
                continue
            if kind.name != "bracket" and any(s <= match.start() < e for s, e in quoted):
                continue
            citation = kind.read(answer, match)
            if citation is not None:
                found.append(citation)
    return sorted(found, key=lambda c: c.start)


@dataclass
class DocumentIndex:
    """What a checker needs to know about one cited document."""

    label_to_page: dict[str, int]
    page_count: int
    duration_s: float | None
    page_text: Callable[[int], str]
    document_id: int | None = None
    unit: str = "page"  # 'paragraph' for Word, text and e-mail documents (ingest.document.unit_of)
    # A clause's paragraphs (the numbered one, its sub-clauses and unnumbered paragraphs up to the next clause).
    clause_paragraphs: Callable[[int], list[int]] | None = None
    attachments: dict[int, DocumentIndex] = field(default_factory=dict)  # an e-mail's, by position

    def section_pages(self, number: str) -> tuple[int, ...]:
        """The page whose text opens a line with this section number ('15.7', 'Section 15.7')."""
        number = number.split("(")[0]  # '12.3(a)' sits under the heading '12.3'
        heading = re.compile(
            r"^\s*(?:(?:section|sec\.|clause|article|§)\s*)?" + re.escape(number) + r"(?![\d]|\.\d)",
            re.IGNORECASE | re.MULTILINE,
        )
        for page in range(1, self.page_count + 1):
            if heading.search(self.page_text(page)):
                return (page,)
        return ()


def check(citations: list[Citation], documents: list[DocumentIndex]) -> list[Citation]:
    checked: list[Citation] = []
    for c in citations:
        if not 1 <= c.doc_index <= len(documents):
            checked.append(c)
            continue
        doc = documents[c.doc_index - 1]
        if c.attachment is not None:
            if c.attachment not in doc.attachments:
                checked.append(replace(c, valid=False))
                continue
            doc = doc.attachments[c.attachment]
        c = replace(c, document_id=doc.document_id)
        if c.kind == "time":
            ok = c.t_seconds is not None and doc.duration_s is not None and 0 <= c.t_seconds <= doc.duration_s + 1
            checked.append(replace(c, valid=ok))
            continue
        if c.kind == "paragraph" or (c.kind == "section" and doc.unit == "paragraph"):
            checked.append(_check_paragraphs(c, doc))
            continue
        if c.kind == "section":  # in a PDF: the page that opens with that heading
            pages = doc.section_pages(c.labels[0]) if doc.duration_s is None else ()
            checked.append(replace(c, pages=pages, valid=bool(pages), quote_found=_quote_on(c.quote, pages, doc)))
            continue
        if doc.unit == "paragraph":  # a Word, text or e-mail document has no pages to cite
            checked.append(replace(c, valid=False, quote_found=False if c.quote is not None else None))
            continue
        labels = c.labels
        written = _written_pages(c.text)
        if len(labels) > 1 and _printed_label(written, doc) is not None:
            labels = (written,)  # '[p. 2-14]' where the page is printed '2-14' (chapter-page), not a range
        pages = tuple(p for p in (_resolve(label, doc) for label in labels) if p is not None)
        valid = bool(pages) and len(pages) == len(labels)
        checked.append(replace(c, labels=labels, pages=pages, valid=valid, quote_found=_quote_on(c.quote, pages, doc)))
    return checked


def _check_paragraphs(c: Citation, doc: DocumentIndex) -> Citation:
    """[§ 12.3] in a Word, text or e-mail document: the clause's paragraphs (sub-clauses included);
    [¶ 41]: that paragraph. A quote is checked against their text as it reads, and with tracked
    changes accepted."""
    from ingest.word import accepted_text

    value = c.labels[0] if c.labels else ""
    if doc.unit != "paragraph":  # a PDF's paragraphs are not numbered
        return replace(c, valid=False)
    if c.kind == "section":
        first = _printed_label(value, doc)
        pages = tuple(doc.clause_paragraphs(first)) if first is not None and doc.clause_paragraphs else ()
        if first is not None and not pages:
            pages = (first,)
    else:
        number = int(value) if value.isdigit() else 0
        pages = (number,) if 1 <= number <= doc.page_count else ()
    quote_found = None
    if c.quote is not None and pages:
        text = "\n".join(doc.page_text(p) for p in pages)
        quote_found = quote_in(c.quote, text) or quote_in(c.quote, accepted_text(text))
    elif c.quote is not None:
        quote_found = False
    return replace(c, pages=pages, valid=bool(pages), quote_found=quote_found)


def _quote_on(quote: str | None, pages: tuple[int, ...], doc: DocumentIndex) -> bool | None:
    if quote is None:
        return None

    return any(quote_in(quote, doc.page_text(p)) for p in pages)


def _written_pages(text: str) -> str:
    """What a page citation says after 'p.' / 'pp.', as written."""
    match = _CITE_RE.fullmatch(text)
    spec = match.group("pages") if match and match.group("pages") else ""
    return re.sub(r"^pp?\.?\s*", "", spec.strip(), flags=re.IGNORECASE)


def _printed_label(label: str, doc: DocumentIndex) -> int | None:
    if label in doc.label_to_page:
        return doc.label_to_page[label]
    return {k.lower(): v for k, v in doc.label_to_page.items()}.get(label.lower())


def resolve_page(label: str, doc: DocumentIndex) -> int | None:
    """The 1-based page a cited label ('iv', '12') points to, or None."""
    return _resolve(label, doc)


def _resolve(label: str, doc: DocumentIndex) -> int | None:
    if label in doc.label_to_page:
        return doc.label_to_page[label]
    if label.isdigit() and 1 <= int(label) <= doc.page_count:
        return int(label)
    lowered = {k.lower(): v for k, v in doc.label_to_page.items()}
    return lowered.get(label.lower())
