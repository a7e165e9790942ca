"""Image files (PNG, JPEG, TIFF with any number of pages, WebP, BMP): each image is a scanned page."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ingest.document import Page, Segment
from ingest.errors import CorruptFile, TooLarge
from ingest.image_size import image_sizes
from ingest.limits import Limits
from ingest.ocr import OcrEngine
from ingest.progress import ProgressFn, Ticker
from ingest.scanned import scanned_page, work_scale

if TYPE_CHECKING:
    from ingest.scan import Image

ASSUMED_DPI = 300.0  # scans rarely record their resolution reliably; 300 dpi is the common setting


def check_sizes(path: Path, sizes: list[tuple[int, int]], limits: Limits) -> None:
    if len(sizes) > limits.max_pages:
        raise TooLarge(f"{path.name}: {len(sizes)} pages is over the limit of {limits.max_pages} pages")
    for number, (width, height) in enumerate(sizes, start=1):
        where = f"page {number} is " if len(sizes) > 1 else ""
        if width == 0 or height == 0:
            raise CorruptFile(f"{path.name}: {where}an image with no pixels (the file is damaged)")
        if width * height > limits.max_image_pixels:
            raise TooLarge(
                f"{path.name}: {where}{width:,} x {height:,} pixels, over the limit of "
                f"{limits.max_image_pixels / 1e6:.0f} megapixels (a possible decompression bomb)"
            )


def read_image_file(
    path: Path, *, limits: Limits, ocr: OcrEngine | None, progress: ProgressFn | None = None
) -> tuple[list[Page], list[Segment]]:
    sizes = image_sizes(path)
    check_sizes(path, sizes, limits)  # before a single pixel is decoded
    data = path.read_bytes()
    if data.startswith(b"\xff\xd8") and b"\xff\xd9" not in data[-65536:]:
        # libjpeg pads a cut-off JPEG with gray and only warns; a half-gray page would pass as read.
        raise CorruptFile(f"{path.name}: the JPEG is truncated (its end marker is missing)")
    pages: list[Page] = []
    segments: list[Segment] = []
    ticker = Ticker(progress, len(sizes))
    for number in range(1, len(sizes) + 1):
        image = _decode(data, number - 1, len(sizes), path)
        height, width = image.shape[:2]
        image = _to_work_size(image, limits, ocr)
        page, page_segments = scanned_page(
            image, number=number, label=str(number), page_size=(float(width), float(height)), limits=limits, ocr=ocr
        )
        pages.append(page)
        segments.extend(page_segments)
        ticker.page_done(number, f"page {number} of {len(sizes)}")
    return pages, segments


def _decode(data: bytes, index: int, count: int, path: Path) -> Image:
    import cv2
    import numpy as np

    buffer = np.frombuffer(data, dtype=np.uint8)
    image = None
    try:
        if count > 1:
            ok, frames = cv2.imdecodemulti(buffer, cv2.IMREAD_COLOR, range=(index, index + 1))
            image = frames[0] if ok and frames else None
        else:
            image = cv2.imdecode(buffer, cv2.IMREAD_COLOR)  # applies the EXIF orientation
    except cv2.error as exc:
        raise CorruptFile(f"{path.name}: the image is damaged and cannot be decoded ({exc.msg.strip()[:80]})") from exc
    if image is None or image.size == 0:
        where = f"page {index + 1} of " if count > 1 else ""
        raise CorruptFile(f"{path.name}: {where}the image is damaged or truncated and cannot be decoded")
    return image


def _to_work_size(image: Image, limits: Limits, ocr: OcrEngine | None) -> Image:
    import cv2

    height, width = image.shape[:2]
    scale = work_scale(float(width), float(height), limits, ocr, dpi=ASSUMED_DPI)
    if scale >= 1.0:
        return image
    return cv2.resize(
        image, (max(1, round(width * scale)), max(1, round(height * scale))), interpolation=cv2.INTER_AREA
    )
