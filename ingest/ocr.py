"""OCR for scanned pages and image files: which engine reads them, and what it found.

Two engines, chosen in the settings (`[ocr] engine`):
- `rapidocr` (the default): PaddleOCR's PP-OCRv6 text detection and recognition networks, shipped as
  ONNX files inside the rapidocr wheel and run by onnxruntime. Nothing outside pip, so every install
  (and the bundled app) reads scans. Its one recognition model covers Latin-script languages
  (English, French, German, Spanish, Italian, Portuguese, Dutch, Polish, ...), Chinese and Japanese.
- `tesseract` (optional): Tesseract through PyMuPDF, when Tesseract's language data is installed.
  For scripts the default model lacks: measured on the corpus' Hebrew and Devanagari pages
  (benchmarks/RESULTS.md), also Arabic, Cyrillic, Greek, ... - whatever language data is installed,
  chosen by `[ocr] language` ('heb', 'hin', 'eng+fra').
`off` reads scans as page images only.

Either engine returns lines of words with their boxes; ingest.ocr_layout groups them into blocks
in reading order. Both are imported lazily: onnxruntime and the models load on the first scanned page.
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


def ocr_engine(options: OcrOptions) -> OcrEngine | None:
    """The engine that reads scanned pages under these options, or None when OCR is off or the chosen
    engine is not installed (Tesseract without language data: pages are then read as images only)."""
    if options.engine == "off":
        return None
    if options.engine == "tesseract":
        from ingest.tesseract import TesseractEngine, tesseract_support

        support = tesseract_support()
        return TesseractEngine(support, options.language) if support.available else None
    from ingest.rapid_ocr import shared_engine

    return shared_engine()


def describe(options: OcrOptions) -> tuple[str, bool]:
    """One line on which engine reads scanned pages here (for `folio doctor`), and whether it runs."""
    from ingest.tesseract import tesseract_support

    support = tesseract_support()
    tess = (
        f"Tesseract at {support.tessdata} (languages: {', '.join(support.languages)})"
        if support.available
        else "Tesseract not installed"
    )
    if options.engine == "off":
        return f"off in the settings: scanned pages are read as page images only ({tess})", True
    if options.engine == "tesseract":
        if not support.available:
            return (
                "Tesseract chosen in the settings but not installed: scanned pages get no text "
                "(install tesseract-ocr, or choose rapidocr)",
                False,
            )
        missing = [code for code in options.language.split("+") if code not in support.languages]
        if missing:
            return f"Tesseract: no language data for {', '.join(missing)} ({tess})", False
        return f"Tesseract, language {options.language} ({tess})", True
    from ingest.rapid_ocr import model_files

    try:
        files = model_files()
    except (ImportError, FileNotFoundError) as exc:
        return f"rapidocr unavailable ({exc}): scanned pages get no text", False
    return f"rapidocr (PP-OCRv6, {', '.join(p.name for p in files)}); {tess}", True
