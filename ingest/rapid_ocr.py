"""The default OCR engine: rapidocr (Apache-2.0) with the PP-OCRv6 detection and recognition ONNX
models its wheel ships, run by onnxruntime in the process that reads the file (the ingest child).

The models are given to rapidocr by path, so its model downloader is never reached: an install
without a network reads scans exactly as one with. Pages reach it upright (ingest.scan turns them),
so its text-direction classifier is not loaded.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.ocr import OcrLine, OcrWord

if TYPE_CHECKING:
    from numpy.typing import NDArray

DET_MODEL = "PP-OCRv6_det_small.onnx"
REC_MODEL = "PP-OCRv6_rec_small.onnx"
# rapidocr shrinks larger images to this long side before detection and cuts the lines it reads out
# of the shrunk image, so rendering more only costs time. Its own default, 2000, reads an A4 page at
# 171 dpi, below what small print needs: 9-point typewriter type lost its 'm's ('Naze', 'Agreexent').
# 2400 keeps A4 and Letter at 200 dpi or more. A 200 dpi image file is read at its own size, where
# the clean-up's median would thin one-pixel strokes ('Houlevard'): ingest.scan.denoise skips the
# median on such pages.
MAX_SIDE = 2400
MAX_DPI = 300.0
MAX_THREADS = 4
# Recognition time grows with each line's width at its fixed 48-pixel height, so pages are read
# squeezed sideways: at 0.7 the corpus scans and rendered CUAD pages came out with no more character
# errors than unsqueezed (0.97% against 2.68%) in about 0.7 of the time; at 0.55 and below
# recognition breaks down (21% errors), so 0.7 keeps a margin.
SQUEEZE = 0.7


def model_files() -> tuple[Path, Path]:
    """The detection and recognition models inside the installed rapidocr package."""
    import importlib.util

    spec = importlib.util.find_spec("rapidocr")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the rapidocr package is not installed")
    folder = Path(next(iter(spec.submodule_search_locations))) / "models"
    files = (folder / DET_MODEL, folder / REC_MODEL)
    for path in files:
        if not path.is_file():
            raise FileNotFoundError(f"rapidocr's model {path.name} is missing from {folder}")
    return files


class RapidOcrEngine:
    name = "rapidocr"

    def __init__(self) -> None:
        self._ocr: Any = None  # rapidocr.RapidOCR, made on the first page (text-only files never load it)

    def _engine(self) -> Any:
        if self._ocr is None:
            from rapidocr import RapidOCR

            det, rec = model_files()
            threads = max(1, min(MAX_THREADS, usable_cores()))
            self._ocr = RapidOCR(
                params={
                    "Global.log_level": "error",
                    "Global.use_cls": False,
                    "Global.max_side_len": MAX_SIDE,
                    "Det.model_path": str(det),
                    "Rec.model_path": str(rec),
                    "EngineConfig.onnxruntime.intra_op_num_threads": threads,
                    "EngineConfig.onnxruntime.inter_op_num_threads": 1,
                    # rapidocr turns the arena off to give memory back between calls; a document's
                    # pages come one after another, and reusing buffers is faster.
                    "EngineConfig.onnxruntime.enable_cpu_mem_arena": True,
                }
            )
        return self._ocr

    def work_scale(self, dpi: float, width: float, height: float) -> float:
        return min(MAX_DPI / dpi, MAX_SIDE / max(width, height))

    def read(self, image: NDArray[Any]) -> list[OcrLine]:
        import cv2

        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        height, width = image.shape[:2]
        narrow = max(1, round(width * SQUEEZE))
        squeezed = cv2.resize(image, (narrow, height), interpolation=cv2.INTER_AREA)
        result = self._engine()(squeezed, return_word_box=True)
        if not result.txts:
            return []
        stretch = width / narrow
        words = result.word_results if len(result.word_results) == len(result.txts) else None
        lines = []
        for i, (quad, text, score) in enumerate(zip(result.boxes, result.txts, result.scores, strict=True)):
            box = _box(quad, stretch)
            found = tuple(OcrWord(_box(q, stretch), t) for t, _score, q in words[i] if q is not None) if words else ()
            lines.append(OcrLine(box, " ".join(text.split()), found or _spread(box, text), float(score)))
        return lines


def usable_cores() -> int:
    """The cores this process may run on (a container or `taskset` may allow fewer than the machine has)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@functools.cache
def shared_engine() -> RapidOcrEngine:
    """One engine per process: loading the models takes a moment; every later page reuses them."""
    return RapidOcrEngine()


def _box(quad: Any, stretch: float) -> tuple[float, float, float, float]:
    """An axis-aligned box around a quadrilateral, back in the unsqueezed image's pixels."""
    xs = [float(p[0]) * stretch for p in quad]
    ys = [float(p[1]) for p in quad]
    return (min(xs), min(ys), max(xs), max(ys))


def _spread(box: tuple[float, float, float, float], text: str) -> tuple[OcrWord, ...]:
    """Word boxes by character share, for a line rapidocr gave no word boxes for."""
    x0, y0, x1, y1 = box
    parts = text.split()
    total = max(1, sum(len(p) for p in parts) + len(parts) - 1)
    out, at = [], 0
    for part in parts:
        left = x0 + (x1 - x0) * at / total
        at += len(part)
        out.append(OcrWord((left, y0, x0 + (x1 - x0) * at / total, y1), part))
        at += 1
    return tuple(out)
