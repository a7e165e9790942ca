"""Which OCR engine reads scanned pages under the settings (ingest.ocr says what each one is), and a
line on it for `folio doctor`. Apart from ingest.ocr because the engines build on its values."""

from __future__ import annotations

from ingest.ocr import OcrEngine, OcrOptions


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
        model_files()
    except (ImportError, FileNotFoundError) as exc:
        return f"rapidocr unavailable ({exc}): scanned pages get no text", False
    return f"rapidocr (PP-OCRv6 tiny; small for CJK pages); {tess}", True
