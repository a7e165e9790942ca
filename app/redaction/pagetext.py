"""A page's words with the box of every character: the text layer as MuPDF reads it, and the text in
the page's pictures as OCR reads it. Candidates are found in this text and redacted by its boxes;
the proof counts what is left in the same text of the output.

Boxes are in the page's unrotated space, which is what MuPDF's text extraction and redaction
annotations both use; a page with /Rotate is drawn turned, so a rectangle marked on screen is turned
back (`from_shown`) before it is used here.

Each character's box is its ink (TEXT_ACCURATE_BBOXES), not the font's line height: MuPDF removes
every glyph a redaction rectangle touches, and line-height boxes of one line reach into the
descenders and ascenders of the lines above and below, so a name redacted with them took letters of
its neighbours along (seen on tightly set text). The box drawn over the name is the line's height;
the rectangles that remove text are the ink of its own characters.

Text that is in the page but that nobody sees there stays in this text, marked per character
(`PageText.hidden`): white text on no background, and text a picture drawn later covers. It is
found like any other and removed by its boxes when accepted; the mark only tells the user where it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ingest.ocr import OcrEngine

Rect = tuple[float, float, float, float]

TEXT = "text"
OCR = "ocr"
# Pictures smaller than this (in square points, about 1.5 x 1.5 cm) are rules, bullets and logos'
# specks: too small to hold a line of text worth reading.
MIN_PICTURE_AREA = 1800.0
# A page with fewer characters in its text layer than this, but with drawings, may be text turned
# into outlines or a scan drawn as vectors: OCR reads the whole page (as ingest does for such pages).
MIN_TEXT_CHARS = 20
OCR_DPI = 200.0  # what the OCR engines read small print well at (ingest.rapid_ocr)
OCR_MAX_SIDE = 2400
OCR_PAD = 1.5  # points around an OCR word: its box is tight, the ink's antialiased edge is not

# Characters read the same when finding and counting: curly quotes, dashes, no-break spaces. One
# character for one, so every character keeps its box.
_SAME = str.maketrans(
    {
        "\u00a0": " ",
        "\u2007": " ",
        "\u202f": " ",
        "\u2009": " ",
        "\u2018": "'",
        "\u2019": "'",
        "\u02bc": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00ad": "-",  # a soft hyphen shows as a hyphen where a line breaks
    }
)


@dataclass
class PageText:
    number: int  # 1-based
    text: str  # lines joined by '\n' (a line-end hyphen kept); OCR's lines after the text layer's
    boxes: list[Rect | None]  # each character's ink box; None for the '\n' and ' ' Folio put between
    line_boxes: list[Rect | None]  # each character's line-height box (what the black box covers)
    via: list[str]  # TEXT or OCR, per character
    pictures: list[Rect] = field(default_factory=list)  # the areas OCR read (unrotated page space)
    rotation: int = 0
    # Per character: '' where it can be seen, else why not (app/redaction/hidden.py's WHITE_TEXT or
    # UNDER_IMAGE); empty when nothing on the page is hidden.
    hidden: list[str] = field(default_factory=list)

    def add(self, char: str, box: Rect | None, line_box: Rect | None, via: str) -> None:
        self.text += char
        self.boxes.append(box)
        self.line_boxes.append(line_box)
        self.via.append(via)

    def hidden_at(self, i: int) -> str:
        return self.hidden[i] if i < len(self.hidden) else ""


def normal(text: str) -> str:
    """One character for one: the forms of quotes, dashes and spaces read alike."""
    return text.translate(_SAME)


def read_page(page: Any, ocr: OcrEngine | None, *, number: int) -> PageText:
    """The text layer of a MuPDF page, then OCR of its pictures (when an engine is given; the pictures'
    areas are noted either way, so a proof without OCR can say what it did not read)."""
    import pymupdf

    out = PageText(number, "", [], [], [], rotation=page.rotation)
    flags = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
    ink = _lines(page.get_text("rawdict", flags=flags | pymupdf.TEXT_ACCURATE_BBOXES))
    tall = _lines(page.get_text("rawdict", flags=flags))
    if [len(line) for line in tall] != [len(line) for line in ink]:
        # One reading left a character out (seen: the space of a line set on the page's bottom edge,
        # whose ink box is empty, so 'Hello World' read 'HelloWorld' and no term matched). Follow the
        # line-height reading, which keeps every character, with each one's ink box where the other
        # reading has it (a space's box never removes anything: see rects_of).
        inks = {(c, round(o[0], 2), round(o[1], 2)): box for line in ink for c, box, o in line}
        ink = [[(c, inks.get((c, round(o[0], 2), round(o[1], 2)), box), o) for c, box, o in line] for line in tall]
    for line, tall_line in zip(ink, tall, strict=True):
        if out.text and out.text[-1] != "\n":
            out.add("\n", None, None, TEXT)
        for (char, box, _o), (_c, tall_box, _to) in zip(line, tall_line, strict=True):
            out.add(char, box, tall_box, TEXT)
    _mark_hidden(page, out)
    out.pictures = picture_areas(page, text_chars=sum(1 for c in out.text if not c.isspace()))
    if ocr is not None:
        for area in out.pictures:
            _read_picture(page, area, ocr, out)
    return out


def _mark_hidden(page: Any, out: PageText) -> None:
    """Mark the characters nobody sees: white text with nothing but white under it, and text a picture
    drawn after it covers. MuPDF's text trace gives each span's colour and its place in the order the
    page is drawn (`seqno`), which is the index of its entry in the page's drawing log (`get_bboxlog`)."""
    from app.redaction.hidden import UNDER_IMAGE, WHITE_TEXT

    spans = page.get_texttrace()
    white = [s for s in spans if s["type"] == 0 and _is_white(s.get("color"))]
    has_pictures = bool(page.get_image_info())
    if not white and not has_pictures:
        return
    log = page.get_bboxlog()
    pictures = [(k, rect) for k, (kind, rect) in enumerate(log) if kind in ("fill-image", "fill-imgmask")]
    grounds: list[tuple[int, Rect]] = list(pictures) + [
        (k, r) for k, (kind, r) in enumerate(log) if kind == "fill-shade"
    ]
    if white:
        grounds += [
            (int(d["seqno"]), tuple(d["rect"]))
            for d in page.get_drawings()
            if d.get("fill") is not None and not _is_white(d["fill"]) and d.get("fill_opacity", 1) > 0
        ]
    white_ids = {id(s) for s in white}
    marks: list[tuple[Rect, str]] = []  # hidden characters' boxes and why
    for span in spans:
        if span["type"] != 0 or span.get("opacity", 1) == 0:
            continue  # invisible text was taken out by apply.prepare before the page is read
        seq = int(span["seqno"])
        on_white = id(span) in white_ids
        for char in span["chars"]:
            centre = _centre(char[3])
            if any(k > seq and _inside(centre, r) for k, r in pictures):
                marks.append((char[3], UNDER_IMAGE))
            elif on_white and not any(k < seq and _inside(centre, r) for k, r in grounds):
                marks.append((char[3], WHITE_TEXT))
    if not marks:
        return
    out.hidden = [""] * len(out.text)
    for i, box in enumerate(out.boxes):
        if box is None or out.via[i] != TEXT:
            continue
        centre = _centre(box)
        out.hidden[i] = next((why for rect, why in marks if _inside(centre, rect)), "")


def _is_white(color: Any) -> bool:
    """A fill colour as MuPDF reports it (grey, RGB or CMYK components from 0 to 1) that is white."""
    if not color:
        return False
    values = [float(v) for v in color]
    if len(values) == 4:
        return all(v <= 0.02 for v in values)
    return all(v >= 0.98 for v in values)


def _centre(box: Any) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def _inside(point: tuple[float, float], rect: Any) -> bool:
    return bool(rect[0] <= point[0] <= rect[2] and rect[1] <= point[1] <= rect[3])


def _lines(raw: dict[str, Any]) -> list[list[tuple[str, Rect, tuple[float, float]]]]:
    """Each text line's characters (read alike, see `normal`) with their boxes and origins."""
    lines = []
    for block in raw["blocks"]:
        if block.get("type") != 0:
            continue
        for line in block["lines"]:
            chars = [
                (normal(ch["c"])[:1] or " ", tuple(ch["bbox"]), tuple(ch["origin"]))
                for span in line["spans"]
                for ch in span["chars"]
            ]
            if chars:
                lines.append(chars)
    return lines


def picture_areas(page: Any, *, text_chars: int) -> list[Rect]:
    """Where OCR should read: every picture big enough to hold a line of text, or the whole page when
    its text layer is (nearly) empty and it has drawings."""
    areas: list[Rect] = []
    for info in page.get_image_info():
        x0, y0, x1, y1 = (float(v) for v in info["bbox"])
        x0, y0 = max(x0, page.mediabox.x0), max(y0, page.mediabox.y0)
        x1, y1 = min(x1, page.mediabox.x1), min(y1, page.mediabox.y1)
        if (x1 - x0) * (y1 - y0) >= MIN_PICTURE_AREA:
            areas.append((x0, y0, x1, y1))
    if text_chars < MIN_TEXT_CHARS and not areas and page.get_cdrawings():
        m = page.mediabox
        areas.append((m.x0, m.y0, m.x1, m.y1))
    return _merge_overlapping(areas)


def _merge_overlapping(areas: list[Rect]) -> list[Rect]:
    merged: list[Rect] = []
    for area in sorted(areas):
        for i, other in enumerate(merged):
            if _overlap(area, other) > 0:
                merged[i] = _union(area, other)
                break
        else:
            merged.append(area)
    return merged


def render_area(page: Any, area: Rect) -> tuple[Any, Any]:
    """An area of the page drawn upright as it is shown (a /Rotate page turned), as a BGR image, and
    the matrix that takes the image's pixels back to unrotated page space."""
    import numpy as np
    import pymupdf

    shown = pymupdf.Rect(area) * page.rotation_matrix
    zoom = min(OCR_DPI / 72.0, OCR_MAX_SIDE / max(shown.width, shown.height, 1.0))
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=shown, colorspace=pymupdf.csRGB, alpha=False)
    rgb = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.stride)[:, : pix.width * 3]
    bgr = rgb.reshape(pix.height, pix.width, 3)[:, :, ::-1].copy()
    # pixel -> shown page space (the clip's corner, then the zoom) -> unrotated page space
    back = pymupdf.Matrix(1 / zoom, 0, 0, 1 / zoom, pix.x / zoom, pix.y / zoom) * page.derotation_matrix
    return bgr, back


def _read_picture(page: Any, area: Rect, ocr: OcrEngine, out: PageText) -> None:
    import pymupdf

    image, back = render_area(page, area)
    for line in ocr.read(image):
        if out.text and out.text[-1] != "\n":
            out.add("\n", None, None, OCR)
        for k, word in enumerate(line.words):
            if k:
                out.add(" ", None, None, OCR)
            box = pymupdf.Rect(word.bbox) * back
            padded = (box.x0 - OCR_PAD, box.y0 - OCR_PAD, box.x1 + OCR_PAD, box.y1 + OCR_PAD)
            text = normal(word.text)
            width = (padded[2] - padded[0]) / max(1, len(text))
            for i, char in enumerate(text):
                # A word's characters share its height; each gets its share of the width.
                piece = (padded[0] + i * width, padded[1], padded[0] + (i + 1) * width, padded[3])
                out.add(char, piece, piece, OCR)


def from_shown(page: Any, rect: Rect) -> Rect:
    """A rectangle on the page as shown (turned by /Rotate) in unrotated page space."""
    import pymupdf

    r = pymupdf.Rect(rect) * page.derotation_matrix
    r.normalize()
    return (r.x0, r.y0, r.x1, r.y1)


# -- finding words in a page's text ----------------------------------------------------------------
def term_pattern(term: str, *, case: bool = False) -> re.Pattern[str] | None:
    """A user's term as it may be printed: any case, any run of spaces or a line break between its
    words, and a line-end hyphen (or a bare line break) anywhere inside a word. Whole words only."""
    words = normal(" ".join(term.split())).split(" ")
    if not any(any(ch.isalnum() for ch in w) for w in words):
        return None
    broken = r"(?:-?\n)?"  # 'confiden-\ntial', or a word simply split over two lines
    parts = [broken.join(re.escape(ch) for ch in word) for word in words if word]
    body = r"[ \t]*(?:-?\n)?[ \t]*".join(parts)
    left = r"(?<![^\W_])" if term[:1].isalnum() else ""
    right = r"(?![^\W_])" if term[-1:].isalnum() else ""
    return re.compile(left + body + right, 0 if case else re.IGNORECASE)


def rects_of(page: PageText, start: int, end: int) -> tuple[list[Rect], list[Rect]]:
    """The characters text[start:end] as (ink boxes, one per visible character) and (the line-height
    box of each run of them on one line: what is drawn over them)."""
    ink: list[Rect] = []
    shown: list[Rect] = []
    current: Rect | None = None
    for i in range(start, end):
        box, tall = page.boxes[i], page.line_boxes[i]
        if box is None or tall is None:  # a line break: the next characters start a new box
            if current is not None:
                shown.append(current)
                current = None
            continue
        if page.text[i].isspace():
            continue
        ink.append(box)
        current = tall if current is None else _union(current, tall)
    if current is not None:
        shown.append(current)
    return ink, shown


def _union(a: Rect, b: Rect) -> Rect:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _overlap(a: Rect, b: Rect) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def overlaps(a: Rect, b: Rect) -> bool:
    return _overlap(a, b) > 0


def context(page: PageText, start: int, end: int, width: int = 48) -> str:
    """The words around text[start:end] on one line, for the candidate list."""
    left = page.text[max(0, start - width) : start]
    right = page.text[end : end + width]
    left = left.rsplit("\n", 1)[-1] if "\n" in left and len(left.rsplit("\n", 1)[-1]) > 8 else left
    return " ".join(f"{left}[{page.text[start:end]}]{right}".split())
