"""The values ingest produces: a Document is an ordered list of anchored Segments.

Anchors are where citations point. Paged sources (PDFs, scans, images) are cited by page
(`[p. 12]`), video by time (`[t 00:01:23]`), and flowing text (Word, plain text, Markdown, e-mail)
by its clause number as printed (`[§ 12.3]`) or, for an unnumbered paragraph, by its paragraph
number as the viewer shows it (`[¶ 41]`). Inside an e-mail, its attachments are cited with the
attachment's number first (`[attachment 1, p. 2]`). This module is the one place that defines those
forms: marker() writes them for the model, parse_cited() reads them back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

SegmentKind = Literal["text", "image"]
DocumentKind = Literal["pdf", "image", "video", "word", "text", "email"]
AnchorUnit = Literal["page", "paragraph"]
# Documents without pages: their units are paragraphs (headings, clauses, table, footnotes, e-mail parts).
FLOWING_KINDS: tuple[str, ...] = ("word", "text", "email")


def unit_of(kind: str) -> AnchorUnit:
    """How a document of this kind is cited: by page (or time), or by paragraph/clause."""
    return "paragraph" if kind in FLOWING_KINDS else "page"


@dataclass(frozen=True)
class Anchor:
    """Where a segment sits in its source: a page (with its printed label and box), a time, or a
    paragraph of a flowing document (with the clause number printed on it)."""

    # 1-based page number; in a flowing document (unit 'paragraph') the paragraph number.
    page: int | None = None
    # The page label printed on the page ('iv', 'A-3'; None = same as number); in a flowing document
    # the clause number a reader sees on the paragraph ('12.3', '4(a)'), None when it has none.
    label: str | None = None
    # (x0, y0, x1, y1) in the page's own space (Page.width x Page.height): PDF points for PDF pages,
    # pixels of the upright image for image files. A whole-page image has the whole page as its box.
    bbox: tuple[float, float, float, float] | None = None
    t_seconds: float | None = None  # video: seconds from the start
    unit: AnchorUnit = "page"
    attachment: int | None = None  # inside an e-mail's prompt: the 1-based attachment this part belongs to

    def marker(self) -> str:
        """The marker the model sees and cites: [p. 12], [t 00:01:23], [§ 12.3], [¶ 41], [attachment 1, p. 2]."""
        return f"[{self.cited()}]"

    def cited(self) -> str:
        """The marker without its brackets."""
        if self.t_seconds is not None:
            where = f"t {format_timestamp(self.t_seconds)}"
        elif self.unit == "paragraph":
            where = f"§ {self.label}" if self.label else f"¶ {self.page}"
        else:
            where = f"p. {self.label or self.page}"
        return f"attachment {self.attachment}, {where}" if self.attachment else where


@dataclass(frozen=True)
class CitedPlace:
    """A cited anchor as written, read back by parse_cited: which kind of place, and its value."""

    kind: Literal["page", "time", "section", "paragraph"]
    value: str  # page label(s) as written ('4', 'iv', '2-5'), a time, a clause number, a paragraph number
    attachment: int | None = None


# The forms marker() writes, as a reader accepts them: 'p. 4' / 'pp. 4-5', 't 00:01:23', '§ 12.3',
# '¶ 41', 'para 41', each optionally after 'attachment N,' (a bare 'Section 4' in prose is not one).
_ATTACHMENT = r"(?:att(?:achment|\.)?\s*(?P<attachment>\d{1,3})\s*,?\s*)"
CITED_PLACE = (
    rf"{_ATTACHMENT}?(?:(?P<pages>pp?\.?\s*[^\[\]]{{1,40}}?)|(?P<time>t\s*\d{{1,2}}(?::\d{{1,2}}){{1,2}})"
    r"|§§?\s*(?P<section>[0-9A-Za-z][0-9A-Za-z.()\-]{0,24}?)"
    r"|(?:¶¶?|para(?:graph|\.)?)\s*(?P<paragraph>\d{1,6}))"
)
_CITED_RE = re.compile(rf"^\s*{CITED_PLACE}\s*$", re.IGNORECASE)


def parse_cited(text: str) -> CitedPlace | None:
    """Read one anchor as written, with or without brackets ('[§ 12.3]', 'attachment 1, p. 2')."""
    match = _CITED_RE.match(text.strip().strip("[]"))
    return cited_place(match) if match else None


def cited_place(match: re.Match[str]) -> CitedPlace | None:
    """The CitedPlace of a match of a pattern that contains CITED_PLACE."""
    groups = match.groupdict()
    attachment = int(groups["attachment"]) if groups.get("attachment") else None
    if groups.get("time"):
        return CitedPlace("time", re.sub(r"^t\s*", "", groups["time"], flags=re.IGNORECASE), attachment)
    if groups.get("section"):
        return CitedPlace("section", groups["section"].rstrip(".").strip(), attachment)
    if groups.get("paragraph"):
        return CitedPlace("paragraph", groups["paragraph"], attachment)
    if groups.get("pages"):
        return CitedPlace("page", re.sub(r"^pp?\.?\s*", "", groups["pages"].strip(), flags=re.IGNORECASE), attachment)
    return None


# One recognised word on a scanned page: (x0, y0, x1, y1) in page space, its text, and the line of
# its segment it sits on (0-based), so highlighting can merge a passage's words line by line.
OcrWord = tuple[float, float, float, float, str, int]


@dataclass(frozen=True)
class Segment:
    kind: SegmentKind
    anchor: Anchor
    text: str = ""
    image_png: bytes | None = None  # kind 'image': PNG sized from the vision-token budget
    # What the segment is to the reader. Text: body | header | footer | annotation | table | ocr |
    # heading | footnote | comment | email_headers. Image: page (a scanned page as the model sees it) |
    # keyframe (a video frame at anchor.t_seconds).
    role: str = "body"
    words: tuple[OcrWord, ...] = ()  # OCR text: every word with its box


@dataclass(frozen=True)
class Page:
    """A page of a paged document; in a flowing document, one paragraph (number = paragraph number,
    label = its clause number or '', width/height 0)."""

    number: int  # 1-based
    label: str
    width: float
    height: float
    scanned: bool = False  # no usable text layer: the page is read as an image
    image_png: bytes | None = None  # the cleaned page image of a scanned page (same bytes as its segment)
    ocr: bool = False  # text on this page came from OCR


@dataclass(frozen=True)
class VideoInfo:
    fps: float
    width: int
    height: int
    frame_count: int
    codec: str  # FourCC as OpenCV reports it, e.g. 'h264', 'vp09'


@dataclass
class Document:
    kind: DocumentKind
    title: str
    sha256: str
    source_path: str
    size_bytes: int
    mime: str
    pages: list[Page] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    duration_s: float | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    video: VideoInfo | None = None
    contact_sheet_png: bytes | None = None  # video: a grid of the keyframes with their times, for the UI
    # An e-mail's attachments, each read as a document of its own, in the order the e-mail lists them.
    attachments: list[Attachment] = field(default_factory=list)

    @property
    def page_count(self) -> int:
        return len(self.pages)

    def text_of_page(self, number: int) -> str:
        return "\n".join(s.text for s in self.segments if s.anchor.page == number and s.text)


@dataclass
class Attachment:
    """A file attached to an e-mail: its name and bytes as sent, and the document read from it (None
    when its type is not one Folio reads; `skipped` says why)."""

    name: str
    data: bytes
    document: Document | None
    skipped: str = ""


def format_timestamp(seconds: float) -> str:
    total = int(seconds)
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"
