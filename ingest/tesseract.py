"""Tesseract through PyMuPDF's built-in OCR: needs only Tesseract's language data (tessdata).

The optional OCR engine (see ingest.ocr), for scripts the default engine does not read, and the
script-independent page orientation check (`osd_quarter_turns`) whenever Tesseract is installed.
"""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.ocr import OcrLine, OcrWord

if TYPE_CHECKING:
    from numpy.typing import NDArray

PREFERRED_LANGUAGE = "eng"
OCR_DPI = 300  # Tesseract reads body text best with ~300 dpi
OCR_MAX_PIXELS = 12_000_000  # about A4 at 300 dpi; larger pages are read at lower resolution


@dataclass(frozen=True)
class TesseractSupport:
    tessdata: Path | None
    languages: tuple[str, ...]

    @property
    def available(self) -> bool:
        return self.tessdata is not None and bool(self.languages)


def tesseract_support() -> TesseractSupport:
    """Where Tesseract's language data is, if anywhere (TESSDATA_PREFIX wins, as for Tesseract itself)."""
    return _tesseract_support(os.environ.get("TESSDATA_PREFIX", ""))


@functools.cache
def _tesseract_support(_env: str) -> TesseractSupport:
    import pymupdf

    try:
        folder = Path(pymupdf.get_tessdata())
    except Exception:  # PyMuPDF raises a bare RuntimeError/Exception when Tesseract is absent
        return TesseractSupport(None, ())
    languages = tuple(
        sorted(p.name.removesuffix(".traineddata") for p in folder.glob("*.traineddata") if p.stem != "osd")
    )
    return TesseractSupport(folder if languages else None, languages)


class TesseractEngine:
    def __init__(self, support: TesseractSupport, language: str) -> None:
        self.support = support
        wanted = [code for code in language.split("+") if code in support.languages]
        fallback = PREFERRED_LANGUAGE if PREFERRED_LANGUAGE in support.languages else support.languages[0]
        self.language = "+".join(wanted) or fallback
        self.name = f"tesseract ({self.language})"

    def work_scale(self, dpi: float, width: float, height: float) -> float:
        cap = (OCR_MAX_PIXELS / (width * height)) ** 0.5
        return min(OCR_DPI / dpi, cap)

    def read(self, image: NDArray[Any]) -> list[OcrLine]:
        import cv2
        import pymupdf

        # MuPDF's OCR device silently finds nothing in a gray pixmap, so it gets RGB.
        rgb = cv2.cvtColor(image, cv2.COLOR_GRAY2RGB if image.ndim == 2 else cv2.COLOR_BGR2RGB)
        height, width = rgb.shape[:2]
        pix = pymupdf.Pixmap(pymupdf.csRGB, width, height, rgb.tobytes(), False)
        pix.set_dpi(72, 72)  # one PDF point per pixel, so the boxes come back in pixels
        pdf = pymupdf.open("pdf", pix.pdfocr_tobytes(language=self.language, tessdata=str(self.support.tessdata)))
        try:
            rows = pdf[0].get_text("words", sort=False)
        finally:
            pdf.close()
        lines: dict[tuple[int, int], list[OcrWord]] = {}
        for x0, y0, x1, y1, text, block, line, _word in rows:
            if text.strip():
                lines.setdefault((block, line), []).append(OcrWord((x0, y0, x1, y1), text))
        return [_line(words) for words in lines.values()]


def _line(words: list[OcrWord]) -> OcrLine:
    box = (
        min(w.bbox[0] for w in words),
        min(w.bbox[1] for w in words),
        max(w.bbox[2] for w in words),
        max(w.bbox[3] for w in words),
    )
    return OcrLine(box, " ".join(w.text for w in words), tuple(words))


def osd_quarter_turns(png: bytes, support: TesseractSupport) -> int | None:
    """Clockwise quarter turns Tesseract's orientation detection asks for, or None if unsure/unavailable.

    Works for every script, unlike the ascender/descender test in ingest.scan.
    """
    if support.tessdata is None or not (support.tessdata / "osd.traineddata").exists():
        return None
    try:
        proc = subprocess.run(
            ["tesseract", "stdin", "stdout", "--psm", "0", "--tessdata-dir", str(support.tessdata)],
            input=png,
            capture_output=True,
            timeout=60,
            env={**os.environ, "OMP_THREAD_LIMIT": "1"},  # threads only contend on a busy machine
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    rotate = confidence = None
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(":")
        try:
            if key.strip() == "Rotate":
                rotate = int(value.strip())
            elif key.strip() == "Orientation confidence":
                confidence = float(value.strip())
        except ValueError:
            return None
    if rotate is None or confidence is None or confidence < 2.0:
        return None
    return (rotate // 90) % 4
