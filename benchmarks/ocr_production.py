"""OCR at production scale, for bench_ingest.py --ocr: a scanned production built by code (the corpus'
real scans and rendered CUAD pages in one image-only PDF), read by Folio and by the `tesseract`
command on the same page images, in one run: pages per second and word recall for both.

Tesseract runs the way a production tool runs it (ocrmypdf's `-j`): one page per core at a time, each
with one thread (OMP_THREAD_LIMIT=1), and also one page at a time with its own threads; the faster
of the two is the bar. It reads the very pixels stored in the PDF (extracted, not re-rendered).
Folio's figure is its whole reading of the PDF: drawing each page, clean-up, OCR and reading order.
"""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

SCANS = ("8087_054.3B.tif", "eurotext.tif", "phototest.tif")  # the real scans with ground truth
HEADING = "## OCR at production scale (benchmarks/bench_ingest.py --ocr)"


def ensure_tesseract() -> str:
    """The `tesseract` command, installed from Debian's packages when missing (root or sudo -n)."""
    found = shutil.which("tesseract")
    if found:
        return found
    apt = ["apt-get", "install", "-y", "--no-install-recommends", "tesseract-ocr", "tesseract-ocr-eng"]
    command = apt if os.geteuid() == 0 else ["sudo", "-n", *apt]
    print("installing tesseract-ocr from Debian's packages ...", file=sys.stderr)
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
    found = shutil.which("tesseract")
    if not found:
        raise SystemExit("tesseract is not installed and could not be installed (apt-get install tesseract-ocr)")
    return found


def build_production(corpus: Path, contracts: list[Path], target: Path, pages: int, dpi: int) -> list[str]:
    """The image-only PDF; returns each page's reference text (CUAD: the page's own text layer; a real
    scan: its ground truth), and keeps the real scans' pages first."""
    import pymupdf

    references: list[str] = []
    with pymupdf.open() as out:
        for name in SCANS:
            image = corpus / "scans" / name
            if not image.is_file() or len(references) >= pages:
                continue
            with pymupdf.open(image) as picture:
                rect = picture[0].rect
                pdf_bytes = picture.convert_to_pdf()
            with pymupdf.open("pdf", pdf_bytes) as one:
                out.insert_pdf(one)
            del rect
            references.append(image.with_suffix(".txt").read_text(encoding="utf-8", errors="replace"))
        depth = 0
        while len(references) < pages:
            added = 0
            for pdf in contracts:
                with pymupdf.open(pdf) as doc:
                    if depth >= doc.page_count:
                        continue
                    page = doc[depth]
                    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
                    scanned = out.new_page(width=page.rect.width, height=page.rect.height)
                    scanned.insert_image(scanned.rect, stream=pix.tobytes("png"))
                    references.append(page.get_text())
                    added += 1
                if len(references) >= pages:
                    break
            if not added:
                break
            depth += 1
        out.save(target)
    return references


def page_images(pdf: Path, folder: Path) -> list[Path]:
    """The image stored on each page, as a file for tesseract."""
    import pymupdf

    files = []
    with pymupdf.open(pdf) as doc:
        for number, page in enumerate(doc, start=1):
            xref = page.get_images(full=True)[0][0]
            info = doc.extract_image(xref)
            path = folder / f"page-{number:04d}.{info['ext']}"
            path.write_bytes(info["image"])
            files.append(path)
    return files


def run_tesseract(command: str, images: list[Path], parallel: int) -> tuple[list[str], float]:
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"} if parallel > 1 else dict(os.environ)

    def one(image: Path) -> str:
        done = subprocess.run([command, str(image), "stdout"], capture_output=True, text=True, env=env, check=False)
        return done.stdout

    started = time.perf_counter()
    with ThreadPoolExecutor(max(1, parallel)) as pool:
        texts = list(pool.map(one, images))
    return texts, time.perf_counter() - started


def recall(texts: list[str], references: list[str], words: Any, picks: range | list[int]) -> float:
    found = wanted = 0
    for i in picks:
        ref = collections.Counter(words(references[i]))
        got = collections.Counter(words(texts[i]))
        found += sum(min(got[w], n) for w, n in ref.items())
        wanted += sum(ref.values())
    return found / max(1, wanted)


def bench_production(
    corpus: Path, contracts: list[Path], words: Any, pages: int, dpi: int, *, single: bool = True
) -> list[str]:
    """`single=False` leaves out tesseract one page at a time with its own threads: on this machine it
    ran at 0.07x the pages/s of one page per core (2026-11-29) and takes most of the run's time."""
    from ingest.load import load
    from ingest.ocr import OcrOptions

    command = ensure_tesseract()
    version = subprocess.run([command, "--version"], capture_output=True, text=True, check=False).stdout.split("\n")[0]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        pdf = Path(tmp) / "production.pdf"
        references = build_production(corpus, contracts, pdf, pages, dpi)
        real = [i for i in range(len(references)) if i < len(SCANS)]
        cuad = list(range(len(real), len(references)))
        images = page_images(pdf, Path(tmp))
        load_before = os.getloadavg()
        started, cpu = time.perf_counter(), time.process_time()
        doc = load(pdf, ocr=OcrOptions(engine="rapidocr"))
        folio_s, folio_cpu = time.perf_counter() - started, time.process_time() - cpu
        folio_texts = [
            "\n".join(s.text for s in doc.segments if s.role == "ocr" and s.anchor.page == n)
            for n in range(1, len(references) + 1)
        ]
        tess_par, par_s = run_tesseract(command, images, cores)
        tess_one, one_s = run_tesseract(command, images, 1) if single else ([], 0.0)
        load_after = os.getloadavg()
    n = len(references)
    rows = [
        ("Folio (rapidocr, pages side by side, one per core)", folio_texts, folio_s, f"{folio_cpu / n:.2f}"),
        (f"tesseract, one page per core ({cores} at a time, 1 thread each)", tess_par, par_s, "-"),
    ]
    if single:
        rows.append(("tesseract, one page at a time (its own threads)", tess_one, one_s, "-"))
    best_tess = max(n / seconds for _name, _texts, seconds, _per_page in rows[1:])
    table = [
        f"{n} pages: {len(real)} real scans from `../shared/corpus/scans` ({', '.join(SCANS[: len(real)])}) and "
        f"{len(cuad)} CUAD pages (`contracts_pdf`, page by page across the contracts) rendered gray at {dpi} dpi, "
        f"in one image-only PDF built by the benchmark. {version}. Load average {load_before[0]:.1f} at the start, "
        f"{load_after[0]:.1f} at the end (the benchmark's own work counts in it; above {cores}, other jobs shared "
        f"the cores). The {len(rows)} readings ran one after the other in one run on the same pages."
        + ("" if single else " Tesseract one page at a time with its own threads was left out (`--no-single`)."),
        "",
        "| reader | pages/s | against the faster tesseract | word recall, CUAD pages | word recall, real scans "
        "| Folio's processor s/page |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, texts, seconds, per_page in rows:
        rate = n / seconds
        table.append(
            f"| {name} | {rate:.3f} | {rate / best_tess:.2f}x | {recall(texts, references, words, cuad) * 100:.2f}% | "
            f"{recall(texts, references, words, real) * 100:.2f}% | {per_page} |"
        )
    table += [
        "",
        "Goal: Folio at least tesseract's pages/s on the same pages, with word recall at least 98% on the CUAD "
        "pages. Word recall: the reference's words (letters and digits, any order) found in what was read.",
        "",
    ]
    return table
