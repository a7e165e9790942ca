"""One scanned page (from a PDF or an image file) -> its Page and Segments: the cleaned page image
the model sees, plus OCR text (blocks in reading order, every word with its box) when an OCR engine
runs (ingest.ocr)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ingest.document import Anchor, OcrWord, Page, Segment
from ingest.limits import Limits
from ingest.ocr import OcrEngine, reading_score
from ingest.ocr_layout import blocks_in_reading_order
from ingest.scan import CleanedScan, Orientation, clean_scan, encode_png
from ingest.tesseract import osd_quarter_turns, tesseract_support

if TYPE_CHECKING:
    from ingest.scan import Image


@dataclass(frozen=True)
class LayerText:
    """Text the file already had on a scanned page (an OCR layer, a stamp), in page space."""

    bbox: tuple[float, float, float, float]
    text: str


def work_scale(page_width: float, page_height: float, limits: Limits, ocr: OcrEngine | None, dpi: float) -> float:
    """Pixels per page unit to render or decode at: what the OCR engine reads best when it will run,
    else a little over what the model gets (so the final downscale smooths rather than blurs)."""
    from ingest.limits import fit_to_budget

    model_w, _ = fit_to_budget(page_width, page_height, limits.page_tokens, enlarge=True)
    model_scale = model_w / page_width
    if ocr is None:
        return model_scale * 1.25
    return max(model_scale, ocr.work_scale(dpi, page_width, page_height))


def turned_half(cleaned: CleanedScan) -> CleanedScan:
    """The same cleaned page turned by 180 degrees (image, model picture and orientation)."""
    import cv2
    import numpy as np

    small = cv2.imdecode(np.frombuffer(cleaned.png, np.uint8), cv2.IMREAD_UNCHANGED)
    if small is None:
        raise ValueError("the cleaned page picture cannot be decoded")
    turns = (cleaned.orientation.quarter_turns + 2) % 4
    return CleanedScan(
        cv2.rotate(cleaned.image, cv2.ROTATE_180),
        Orientation(turns, cleaned.orientation.skew_deg),
        encode_png(cv2.rotate(small, cv2.ROTATE_180)),
        cleaned.png_size,
    )


def scanned_page(
    image: Image,
    *,
    number: int,
    label: str,
    page_size: tuple[float, float],
    limits: Limits,
    ocr: OcrEngine | None,
    layer_text: list[LayerText] | None = None,
) -> tuple[Page, list[Segment]]:
    """`image` shows the page as stored (not yet upright); `page_size` is its size in page units."""
    tesseract = tesseract_support()

    def second_opinion(upright: Image) -> int | None:
        return osd_quarter_turns(encode_png(upright), tesseract)

    cleaned = clean_scan(
        image, tokens=limits.page_tokens, second_opinion=second_opinion if tesseract.available else None
    )
    # A blank page (a production's separator sheets, the backs of one-sided pages) is not sent to OCR.
    lines = ocr.read(cleaned.image) if ocr is not None and not cleaned.blank else []
    score = reading_score(lines)
    if ocr is not None and cleaned.orientation.quarter_turns != 0 and score is not None:
        # The page was turned: let the OCR confirm it. A page misjudged as upside down (small monospace
        # type fools the ascender test) reads as a few unsure letters, the right way up as text.
        other = turned_half(cleaned)
        other_lines = ocr.read(other.image)
        if (reading_score(other_lines) or 0.0) > score:
            cleaned, lines = other, other_lines
    width, height = page_size
    turned = cleaned.orientation.quarter_turns % 2 == 1
    if turned:
        width, height = height, width
    page_box = (0.0, 0.0, float(width), float(height))
    anchor = Anchor(page=number, label=label, bbox=page_box)
    segments = [Segment(kind="image", anchor=anchor, image_png=cleaned.png, role="page")]
    if ocr is not None:
        work_h, work_w = cleaned.image.shape[:2]
        sx, sy = width / work_w, height / work_h

        def scaled(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
            return (box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy)

        for block in blocks_in_reading_order(lines):
            words: list[OcrWord] = [
                (*scaled(word.bbox), word.text, i) for i, line in enumerate(block.lines) for word in line.words
            ]
            box_anchor = Anchor(number, label, scaled(block.bbox))
            segments.append(Segment(kind="text", anchor=box_anchor, text=block.text, role="ocr", words=tuple(words)))
    elif layer_text:
        # The file's own layer, boxes as stored: only trustworthy when the page was not turned.
        for item in layer_text:
            box = item.bbox if cleaned.orientation.quarter_turns == 0 else page_box
            segments.append(Segment(kind="text", anchor=Anchor(number, label, box), text=item.text, role="ocr"))
    page = Page(
        number=number,
        label=label,
        width=float(width),
        height=float(height),
        scanned=True,
        image_png=cleaned.png,
        ocr=ocr is not None,
    )
    return page, segments
