"""Scanned pages with OpenCV: turn upright (90/180°), deskew, denoise, stretch contrast, size for the model.

Every function takes and returns numpy images (uint8, gray or BGR); no files, no PDF objects.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ingest.limits import fit_to_budget

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Image = NDArray[Any]

ANALYSIS_SIDE = 1000  # orientation and skew are estimated on a copy this size: enough for text lines
MAX_SKEW_DEG = 10.0
# Vertical text lines must beat horizontal ones by this factor before a page is turned by 90°;
# magazine pages with columns and pictures score about even and are left as they are.
TURN_90_RATIO = 1.3
# Upright Latin text has more ink above the x-height band (ascenders, capitals) than below it
# (descenders): measured 1.1-2.7 upright, 0.37-0.9 upside down. Only a clear reversal turns a page;
# a ratio below FLIP_FLOOR is a script with a headline (Devanagari measured 0.11 upright), not Latin.
FLIP_RATIO = 0.6
FLIP_FLOOR = 0.2
COLOUR_SATURATION = 24  # mean HSV saturation above which a scan keeps its colour (stamps, signatures)
# The 3x3 median runs on a page only if it keeps this share of the ink outside specks. Measured
# (200 dpi renders): 9-point typewriter type keeps 25%, 10-point text faces 76-84%, the corpus' 300 dpi
# bilevel scans and large print 97-99%.
MEDIAN_KEEPS = 0.9
# Ink blobs of at most this many pixels are specks. Not more: at 200 dpi the dot of an 'i' and a
# typewriter's full stop are 2-4 pixels.
SPECK_PIXELS = 1


@dataclass(frozen=True)
class Orientation:
    quarter_turns: int  # clockwise quarter turns applied to make the text upright (0..3)
    skew_deg: float  # further rotation applied, in degrees (counter-clockwise positive, OpenCV's sense)


@dataclass(frozen=True)
class CleanedScan:
    image: Image  # upright, deskewed, denoised, contrast-stretched; at the resolution it was given
    orientation: Orientation
    png: bytes  # the page the model sees: sized from the vision-token budget, whole 32-px tiles
    png_size: tuple[int, int]
    blank: bool = False  # no ink beyond specks: nothing for OCR to read


def clean_scan(
    image: Image, *, tokens: int, second_opinion: Callable[[Image], int | None] | None = None
) -> CleanedScan:
    """The whole pipeline for one scanned page."""
    import cv2

    colour = image.ndim == 3 and _is_colourful(image)
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    working = image if colour else gray
    if working.ndim == 3 and working.shape[2] == 4:
        working = cv2.cvtColor(working, cv2.COLOR_BGRA2BGR)
    orientation = estimate_orientation(gray, second_opinion)
    # Clean before turning: the corners a deskew uncovers are filled with white, which would
    # otherwise count as paper when the contrast is measured.
    working = stretch_contrast(denoise(working))
    working = apply_orientation(working, orientation)
    height, width = working.shape[:2]
    out_w, out_h = fit_to_budget(width, height, tokens)
    small = cv2.resize(working, (out_w, out_h), interpolation=cv2.INTER_AREA)
    return CleanedScan(working, orientation, encode_png(small), (out_w, out_h), blank=is_blank(gray))


BLANK_INK = 200  # ink pixels (at ANALYSIS_SIDE) below which a page holds nothing to read


def is_blank(gray: Image) -> bool:
    """A page with no ink but specks (the back of a sheet, a separator page in a production)."""
    import numpy as np

    return int(np.count_nonzero(ink_mask(gray))) < BLANK_INK


def encode_png(image: Image) -> bytes:
    import cv2

    ok, buf = cv2.imencode(".png", image, [cv2.IMWRITE_PNG_COMPRESSION, 3])
    if not ok:
        raise ValueError("PNG encoding failed")
    return bytes(buf)


def _is_colourful(image: Image) -> bool:
    import cv2

    small = cv2.resize(image[:, :, :3], (64, 64), interpolation=cv2.INTER_AREA)
    saturation = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)[:, :, 1]
    return float(saturation.mean()) > COLOUR_SATURATION


def ink_mask(gray: Image) -> Image:
    """Binary mask of the ink (text = 1) on a copy at most ANALYSIS_SIDE pixels on its long side."""
    import cv2
    import numpy as np

    scale = min(1.0, ANALYSIS_SIDE / max(gray.shape[:2]))
    small = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else gray
    _, mask = cv2.threshold(small, 0, 1, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    if mask.mean() > 0.5:  # light text on a dark background
        mask = 1 - mask
    # Specks would vote for every angle alike; opening removes them without touching letters.
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    return mask.astype(np.uint8)


def _profile(along: NDArray[Any], across: NDArray[Any], degrees: float) -> NDArray[Any]:
    import numpy as np

    rad = math.radians(degrees)
    projected = across * math.cos(rad) - along * math.sin(rad)
    return np.bincount((projected - projected.min()).astype(np.int64)).astype(np.float64)


def _line_score(profile: NDArray[Any]) -> float:
    """1 + the squared coefficient of variation of a projection profile: how sharply ink gathers
    into lines. Independent of the number of bins, so two directions can be compared."""
    return float(len(profile) * profile.dot(profile) / profile.sum() ** 2)


def _best_angle(along: NDArray[Any], across: NDArray[Any]) -> tuple[float, float]:
    """The skew that makes lines sharpest (sum of squared bins, searched coarse then fine) and its score."""

    def sharpness(angle: float) -> float:
        profile = _profile(along, across, angle)
        return float(profile.dot(profile))

    limit = int(MAX_SKEW_DEG)
    best = max(range(-limit, limit + 1), key=sharpness)
    fine = [a / 10 for a in range(best * 10 - 9, best * 10 + 10) if abs(a) <= limit * 10]
    angle = max(fine, key=sharpness)
    return angle, _line_score(_profile(along, across, angle))


def estimate_orientation(gray: Image, second_opinion: Callable[[Image], int | None] | None = None) -> Orientation:
    """Quarter turns and skew that make the text upright.

    `second_opinion` (Tesseract's script-independent orientation detection, when installed) is asked
    only when the text does not clearly read as upright Latin; it gets the page as turned so far and
    returns further clockwise quarter turns, or None when unsure.
    """
    import cv2
    import numpy as np

    if gray.ndim == 3:
        gray = cv2.cvtColor(gray, cv2.COLOR_BGR2GRAY)
    mask = ink_mask(gray)
    ys, xs = np.nonzero(mask)
    if len(ys) < BLANK_INK:  # a blank page: nothing to straighten
        return Orientation(0, 0.0)
    if len(ys) > 150_000:
        pick = np.random.default_rng(0).choice(len(ys), 150_000, replace=False)
        ys, xs = ys[pick], xs[pick]
    fx, fy = xs.astype(np.float64), ys.astype(np.float64)
    h_angle, h_score = _best_angle(fx, fy)  # text lines run left-right
    v_angle, v_score = _best_angle(fy, fx)  # text lines run top-bottom
    if v_score > h_score * TURN_90_RATIO:
        turns, skew = 1, -v_angle
    else:
        turns, skew = 0, h_angle
    ratio = ascender_ratio(_rotate(mask, Orientation(turns, skew), border=0))
    if second_opinion is not None and (ratio is None or ratio < 1.0):
        scale = min(1.0, 1600 / max(gray.shape[:2]))
        small = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else gray
        extra = second_opinion(apply_orientation(small, Orientation(turns, skew)))
        if extra is not None:
            return Orientation((turns + extra) % 4, round(skew, 2))
    if ratio is not None and FLIP_FLOOR < ratio < FLIP_RATIO:
        turns += 2
    return Orientation(turns % 4, round(skew, 2))


def ascender_ratio(mask: Image) -> float | None:
    """Ink above over ink below the x-height band of each text line (None: no lines to go by)."""
    import numpy as np

    rows = mask.sum(axis=1).astype(np.float64)
    if rows.max() <= 0:
        return None
    in_line = rows > 0.02 * rows.max()
    above = below = 0.0
    start = None
    for y, inside in enumerate([*in_line.tolist(), False]):
        if inside and start is None:
            start = y
        elif not inside and start is not None:
            line = rows[start:y]
            if len(line) >= 6:
                core = np.nonzero(line >= 0.5 * line.max())[0]
                above += float(line[: core[0]].sum())
                below += float(line[core[-1] + 1 :].sum())
            start = None
    if above + below < 0.02 * rows.sum() or below == 0:
        return None
    return above / below


def _rotate(image: Image, orientation: Orientation, *, border: int) -> Image:
    import cv2

    turned = image
    if orientation.quarter_turns == 1:
        turned = cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)
    elif orientation.quarter_turns == 2:
        turned = cv2.rotate(image, cv2.ROTATE_180)
    elif orientation.quarter_turns == 3:
        turned = cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE)
    if abs(orientation.skew_deg) < 0.05:
        return turned
    height, width = turned.shape[:2]
    matrix = cv2.getRotationMatrix2D((width / 2, height / 2), orientation.skew_deg, 1.0)
    fill = (border,) * (turned.shape[2] if turned.ndim == 3 else 1)
    return cv2.warpAffine(
        turned, matrix, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=fill
    )


def apply_orientation(image: Image, orientation: Orientation) -> Image:
    return _rotate(image, orientation, border=255)


def denoise(image: Image) -> Image:
    """Scanner specks out, strokes kept.

    A 3x3 median removes specks and salt-and-pepper noise, and smooths the paper's grain, but it also
    erases any stroke one pixel wide: 9-point typewriter type at 170-200 dpi loses three quarters of
    its ink to it ('Houlevard', 'Agreexent'). So the median runs only on a page whose strokes it
    keeps (MEDIAN_KEEPS of the ink that is not specks); on any other page only the specks go (ink
    in blobs of at most SPECK_PIXELS pixels), and every stroke keeps all of its ink. The
    non-local-means filter cleans more and costs ~50x the median's time per page.
    """
    import cv2
    import numpy as np

    median = cv2.medianBlur(image, 3)
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    gray_median = median if median.ndim == 2 else cv2.cvtColor(median, cv2.COLOR_BGR2GRAY)
    threshold, ink = cv2.threshold(gray, 0, 1, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    inked = gray_median <= threshold
    if ink.mean() > 0.5:  # light text on a dark background
        ink, inked = 1 - ink, ~inked
    _count, labels, stats, _centres = cv2.connectedComponentsWithStats(ink, connectivity=8)
    small = stats[:, cv2.CC_STAT_AREA] <= SPECK_PIXELS
    small[0] = False  # label 0 is the paper
    specks = small[labels]
    strokes = ink.astype(bool) & ~specks
    total = int(np.count_nonzero(strokes))
    if total == 0 or np.count_nonzero(strokes & inked) >= MEDIAN_KEEPS * total:
        return median
    cleaned = image.copy()
    cleaned[specks] = median[specks]  # a speck's 3x3 median is the paper around it
    return cleaned


def stretch_contrast(image: Image) -> Image:
    """Map the darkest ink to black and the paper to white (1st and 90th percentile of the gray:
    ink rarely covers a tenth of a page, so the 90th is paper, and the noise above it goes white).
    A page with a few lines on it (a signature page) has under 1% ink, so its 1st percentile is
    paper too; its ink is then taken at the 0.1th. Left unstretched, the thin strokes of light
    typewriter type the median filter has greyed stayed too faint to be read at all."""
    import cv2
    import numpy as np

    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    sample = gray[:: max(1, gray.shape[0] // 400), :: max(1, gray.shape[1] // 400)]
    least, low, high = np.percentile(sample, [0.1, 1, 90])
    if high - low < 16:
        low = least
    if high - low < 16:  # an almost uniform page: stretching would only amplify noise
        return image
    lut = np.clip((np.arange(256, dtype=np.float64) - low) * 255.0 / (high - low), 0, 255).astype(np.uint8)
    return cv2.LUT(image, lut)
