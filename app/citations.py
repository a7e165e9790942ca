"""Find [p. N] / [t hh:mm:ss] citations in an answer and check them against the source."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

_CITE_RE = re.compile(
    r"\[(?:D(?P<doc>\d+)\s*,?\s*)?(?:(?P<pages>pp?\.?\s*[^\[\]]{1,40}?)|(?P<time>t\s*\d{1,2}(?::\d{1,2}){1,2}))\]",
    re.IGNORECASE,
)
_QUOTE_BEFORE_RE = re.compile(r"[\"“”]([^\"“”]{3,600})[\"“”][\s,;:.]{0,3}$")
_FOLD = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "\u00ad": None})
_RANGE_RE = re.compile(r"^(\S+?)\s*[-–—]\s*(\S+)$")


@dataclass(frozen=True)
class Citation:
    kind: str  # 'page' | 'time'
    text: str  # as written, e.g. '[p. 3]'
    start: int
    end: int
    doc_index: int  # 1-based within the conversation's documents
    labels: tuple[str, ...] = ()  # page labels as cited ('iv', '3')
    pages: tuple[int, ...] = ()  # resolved 1-based page numbers
    t_seconds: float | None = None
    quote: str | None = None
    valid: bool = False  # the cited page/time exists in the document
    quote_found: bool | None = None  # None when the answer quoted nothing

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
        doc = int(match.group("doc") or 1)
        quote_match = _QUOTE_BEFORE_RE.search(answer[max(0, match.start() - 700) : match.start()])
        quote = quote_match.group(1).strip() if quote_match else None
        if match.group("time"):
            seconds = parse_timestamp(re.sub(r"^t\s*", "", match.group("time"), flags=re.IGNORECASE))
            found.append(
                Citation("time", match.group(0), match.start(), match.end(), doc, t_seconds=seconds, quote=quote)
            )
        else:
            labels = tuple(_page_labels(match.group("pages")))
            if labels:
                found.append(
                    Citation("page", match.group(0), match.start(), match.end(), doc, labels=labels, quote=quote)
                )
    return found


def normalize_for_match(text: str) -> str:
    """Fold what differs between a PDF's text layer and a model's quote: ligatures, quotes, dashes,
    hyphenation at line ends, case and whitespace."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)
    text = text.translate(_FOLD)
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class DocumentIndex:
    """What a checker needs to know about one cited document."""

    label_to_page: dict[str, int]
    page_count: int
    duration_s: float | None
    page_text: Callable[[int], str]


def check(citations: list[Citation], documents: list[DocumentIndex]) -> list[Citation]:
    checked: list[Citation] = []
    for c in citations:
        if not 1 <= c.doc_index <= len(documents):
            checked.append(c)
            continue
        doc = documents[c.doc_index - 1]
        if c.kind == "time":
            ok = c.t_seconds is not None and doc.duration_s is not None and 0 <= c.t_seconds <= doc.duration_s + 1
            checked.append(replace(c, valid=ok))
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
