"""The values ingest produces: a Document is an ordered list of anchored Segments."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

SegmentKind = Literal["text", "image"]
DocumentKind = Literal["pdf", "image", "video"]


@dataclass(frozen=True)
class Anchor:
    """Where a segment sits in its source: a page (with its printed label and box) or a time."""

    page: int | None = None  # 1-based page number
    label: str | None = None  # the page label printed on the page ('iv', 'A-3'); None = same as number
    # (x0, y0, x1, y1) in the page's own space (Page.width x Page.height): PDF points for PDF pages,
    # pixels of the upright image for image files. A whole-page image has the whole page as its box.
    bbox: tuple[float, float, float, float] | None = None
    t_seconds: float | None = None  # video: seconds from the start

    def marker(self) -> str:
        """The marker the model sees and cites: [p. 12] or [t 00:01:23]."""
        if self.t_seconds is not None:
            return f"[t {format_timestamp(self.t_seconds)}]"
        return f"[p. {self.label or self.page}]"


# What a segment is to the reader. Text: body | header | footer | annotation | table | ocr.
# Image: page (a scanned page as the model sees it) | keyframe (a video frame at anchor.t_seconds).


@dataclass(frozen=True)
class Segment:
    kind: SegmentKind
    anchor: Anchor
    text: str = ""
    image_png: bytes | None = None  # kind 'image': PNG sized from the vision-token budget
    role: str = "body"


@dataclass(frozen=True)
class Page:
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

    @property
    def page_count(self) -> int:
        return len(self.pages)

    def text_of_page(self, number: int) -> str:
        return "\n".join(s.text for s in self.segments if s.anchor.page == number and s.text)


def format_timestamp(seconds: float) -> str:
    total = int(seconds)
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"
