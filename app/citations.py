"""Find citations in an answer and check them against the source: [p. N], [t hh:mm:ss], and for Word,
text and e-mail documents [§ 12.3] / [¶ 41], each optionally inside an e-mail's attachment
([attachment 1, p. 2]). The forms are defined once, in ingest.document (Anchor.marker, CITED_PLACE)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ingest.document import CITED_PLACE, cited_place

_CITE_RE = re.compile(rf"\[(?:(?:D|e-?mail\s*)(?P<doc>\d+)\s*,?\s*)?{CITED_PLACE}\]", re.IGNORECASE)
_QUOTE_BEFORE_RE = re.compile(r"[\"“”]([^\"“”]{3,600})[\"“”][\s,;:.]{0,3}$")
_FOLD = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "\u00ad": None})
_RANGE_RE = re.compile(r"^(\S+?)\s*[-–—]\s*(\S+)$")


@dataclass(frozen=True)
class Citation:
    kind: str  # 'page' | 'time' | 'section' | 'paragraph'
    text: str  # as written, e.g. '[p. 3]'
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


def find_citations(answer: str) -> list[Citation]:
    found: list[Citation] = []
    for match in _CITE_RE.finditer(answer):
        place = cited_place(match)
        if place is None:
            continue
        doc = int(match.group("doc") or 1)
        quote_match = _QUOTE_BEFORE_RE.search(answer[max(0, match.start() - 700) : match.start()])
        quote = quote_match.group(1).strip() if quote_match else None
        common = {"quote": quote, "attachment": place.attachment}
        if place.kind == "time":
            seconds = parse_timestamp(place.value)
            found.append(
                Citation("time", match.group(0), match.start(), match.end(), doc, t_seconds=seconds, **common)  # type: ignore[arg-type]
            )
        elif place.kind in ("section", "paragraph"):
            found.append(
                Citation(place.kind, match.group(0), match.start(), match.end(), doc, labels=(place.value,), **common)  # type: ignore[arg-type]
            )
        else:
            labels = tuple(_page_labels(place.value))
            if labels:
                found.append(
                    Citation("page", match.group(0), match.start(), match.end(), doc, labels=labels, **common)  # type: ignore[arg-type]
                )
    return found


def normalize_for_match(text: str) -> str:
    """Fold what differs between a PDF's text layer and a model's quote: ligatures, quotes, dashes,
    hyphenation at line ends, case and whitespace."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)
    text = text.translate(_FOLD)
    return " ".join(text.lower().split())


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
    section_pages: Callable[[int], list[int]] | None = None
    attachments: dict[int, DocumentIndex] = field(default_factory=dict)  # an e-mail's, by position


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
        if c.kind in ("section", "paragraph"):
            checked.append(_check_paragraphs(c, doc))
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
        quote_found = None
        if c.quote is not None:
            from app.quotes import quote_in  # app.quotes builds on normalize_for_match above

            quote_found = any(quote_in(c.quote, doc.page_text(p)) for p in pages)
        checked.append(replace(c, labels=labels, pages=pages, valid=valid, quote_found=quote_found))
    return checked


def _check_paragraphs(c: Citation, doc: DocumentIndex) -> Citation:
    """[§ 12.3]: the clause's paragraphs (sub-clauses included); [¶ 41]: that paragraph. A quote is
    checked against their text as it reads, and with tracked changes accepted."""
    from app.quotes import quote_in
    from ingest.word import accepted_text

    value = c.labels[0] if c.labels else ""
    if doc.unit != "paragraph":
        return replace(c, valid=False)
    if c.kind == "section":
        first = _printed_label(value, doc)
        pages = tuple(doc.section_pages(first)) if first is not None and doc.section_pages else ()
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
