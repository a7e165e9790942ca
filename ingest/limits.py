"""What one file may cost (bytes, pages, seconds, pixels) and what its images may cost the model."""

from __future__ import annotations

import math
from dataclasses import dataclass

# Qwen3.5's vision encoder (mtmd, projector qwen3vl_merger) spends about one token per 32x32 pixels.
PIXELS_PER_TOKEN_SIDE = 32


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 2 * 1024**3
    max_pages: int = 5000
    max_duration_s: float = 3 * 3600.0
    # Decoded size of any one image (a scan inside a PDF, an image file, a video frame). Bigger is
    # refused before decoding: a few KB of JBIG2 or PNG can expand to gigabytes.
    max_image_pixels: int = 200_000_000
    max_keyframes: int = 24  # frame budget for a video
    page_tokens: int = 2048  # vision tokens for one scanned page (an A4 page at ~150 dpi)
    frame_tokens: int = 576  # vision tokens for one keyframe (1024x576 for 16:9)
    # Nesting, which readers walk by recursion: MIME parts inside parts (real mail nests a few levels;
    # a mail bomb thousands), and e-mails attached to e-mails attached to e-mails (each read in turn).
    max_mime_depth: int = 50
    max_attachment_depth: int = 8


def vision_tokens(width: int, height: int) -> int:
    """Tokens the model spends on an image of this size."""
    side = PIXELS_PER_TOKEN_SIDE
    return math.ceil(width / side) * math.ceil(height / side)


def fit_to_budget(width: float, height: float, tokens: int, *, enlarge: bool = False) -> tuple[int, int]:
    """The largest size with the same aspect, in whole 32-px tiles, that costs at most `tokens`.

    A pixel image is never enlarged (that adds tokens, not detail) except to reach one tile;
    `enlarge=True` is for sizes in PDF points, which render sharply at any scale.
    """
    side = PIXELS_PER_TOKEN_SIDE
    if width <= 0 or height <= 0:
        raise ValueError("image has no area")
    scale = side * math.sqrt(tokens / (width * height))
    if not enlarge:
        scale = min(1.0, scale)
    cols = max(1, int(width * scale // side))
    rows = max(1, int(height * scale // side))
    while cols * rows > tokens:  # rounding can overshoot by a tile on extreme aspect ratios
        if cols >= rows:
            cols -= 1
        else:
            rows -= 1
    return cols * side, rows * side
