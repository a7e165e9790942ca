"""The default OCR engine: rapidocr (Apache-2.0) with the PP-OCRv6 detection and recognition ONNX
models its wheel ships, run by onnxruntime in the process that reads the file (the ingest child).

The models are given to rapidocr by path, so its model downloader is never reached: an install
without a network reads scans exactly as one with. Pages reach it upright (ingest.scan turns them),
so its text-direction classifier is not loaded.
"""

from __future__ import annotations

import functools
import os
import threading
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
# Lines are recognised one at a time, not in rapidocr's batches of 6: a batch pads every line to the
# widest one in it, and the padding is computed too. Measured on two 200 dpi pages (30 and 81 lines,
# 1 thread, load 7): 0.84x and 0.89x the processor time of batches of 6; batches of 16 took 1.3x and
# 1.1x the time of batches of 6 and, padded differently, missed 3 more words on one page.
REC_BATCH = 1
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


PAGE_THREAD = "ocr-page"  # ingest.pdf's threads that read one page each, several pages at once


class RapidOcrEngine:
    name = "rapidocr"

    def __init__(self, max_side: int = MAX_SIDE, page_workers: int | None = None) -> None:
        self.max_side = max_side  # another long side only for benchmarks' side-by-side runs
        # Pages of a PDF read side by side (ingest.pdf), one per core: each page on one thread.
        self.page_workers = page_workers if page_workers is not None else max(1, min(MAX_THREADS, usable_cores()))
        self._ocr: Any = None  # rapidocr.RapidOCR for a page read alone, made on the first page
        self._local = threading.local()  # one single-threaded RapidOCR per page thread

    def _engine(self) -> Any:
        """On a page thread its own single-threaded engine (rapidocr keeps state between its steps);
        a page read alone (an image file) gets every core, its lines shared out between them."""
        from rapidocr import RapidOCR

        if threading.current_thread().name.startswith(PAGE_THREAD):
            mine = getattr(self._local, "ocr", None)
            if mine is None:
                mine = self._local.ocr = RapidOCR(params=engine_params(self.max_side, 1))
            return mine
        if self._ocr is None:
            threads = max(1, min(MAX_THREADS, usable_cores()))
            ocr = RapidOCR(params=engine_params(self.max_side, threads))
            _share_recognition(ocr, threads)
            self._ocr = ocr
        return self._ocr

    def work_scale(self, dpi: float, width: float, height: float) -> float:
        return min(MAX_DPI / dpi, self.max_side / max(width, height))

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


def engine_params(max_side: int, threads: int) -> dict[str, Any]:
    """rapidocr's settings for Folio's engine."""
    det, rec = model_files()
    return {
        "Global.log_level": "error",
        "Global.use_cls": False,
        "Global.max_side_len": max_side,
        "Det.model_path": str(det),
        "Rec.model_path": str(rec),
        "Rec.rec_batch_num": REC_BATCH,
        "EngineConfig.onnxruntime.intra_op_num_threads": threads,
        "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        # rapidocr turns the arena off to give memory back between calls; a document's pages come
        # one after another, and reusing buffers is faster.
        "EngineConfig.onnxruntime.enable_cpu_mem_arena": True,
    }


def _share_recognition(ocr: Any, workers: int) -> None:
    """Detection runs on `workers` threads inside onnxruntime; recognition instead gives each of
    `workers` threads its own lines, each line on one thread. A single 48-pixel line is too small a
    job to split well: on two pages (1 thread each) two threads within each line cost 1.5x the
    processor time of one, and on shared cores they wait on each other. Relies on rapidocr 3.x's
    lazily loaded models (`_load_det_model`, `_load_rec_model`, `text_rec`); another version keeps
    its own recogniser, read line after line."""
    from concurrent.futures import ThreadPoolExecutor

    engine_cfg = getattr(getattr(ocr, "cfg", None), "EngineConfig", None)
    if workers < 2 or engine_cfg is None or not hasattr(ocr, "_load_rec_model"):
        return
    ocr._load_det_model()  # made with `workers` threads
    engine_cfg.onnxruntime.intra_op_num_threads = 1
    ocr._load_rec_model()
    ocr.text_rec = _SharedRecognition(ocr.text_rec, ThreadPoolExecutor(workers, thread_name_prefix="ocr-rec"), workers)


class _SharedRecognition:
    """rapidocr's recogniser with a page's lines dealt out to worker threads (onnxruntime runs one
    session from several threads at once); the results come back in the lines' order."""

    def __init__(self, recogniser: Any, pool: Any, workers: int) -> None:
        self._recogniser, self._pool, self._workers = recogniser, pool, workers

    def __call__(self, args: Any) -> Any:
        from rapidocr.ch_ppocr_rec.typings import TextRecInput, TextRecOutput

        images = list(args.img) if isinstance(args.img, list | tuple) else [args.img]
        if len(images) < 2:
            return self._recogniser(args)
        # Dealt in order of width, so every worker gets short and long lines alike.
        order = sorted(range(len(images)), key=lambda i: images[i].shape[1] / max(1, images[i].shape[0]))
        shares = [order[k :: self._workers] for k in range(self._workers)]
        outputs = list(
            self._pool.map(
                lambda share: self._recogniser(
                    TextRecInput(img=[images[i] for i in share], return_word_box=args.return_word_box)
                ),
                shares,
            )
        )
        txts: list[Any] = [None] * len(images)
        scores: list[Any] = [None] * len(images)
        words: list[Any] = [None] * len(images)
        for share, out in zip(shares, outputs, strict=True):
            for at, i in enumerate(share):
                txts[i], scores[i], words[i] = out.txts[at], out.scores[at], out.word_results[at]
        return TextRecOutput(
            imgs=images,
            txts=tuple(txts),
            scores=scores,
            word_results=tuple(words),
            elapse=max(out.elapse or 0.0 for out in outputs),
            viser=outputs[0].viser,
        )


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
