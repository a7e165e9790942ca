"""Scanned pages and image files: orientation, deskew, clean-up, budget sizing, OCR (rapidocr by
default, Tesseract when chosen and installed, or off)."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from ingest import IngestError
from ingest.limits import Limits, vision_tokens
from ingest.load import load
from ingest.ocr import OcrOptions
from ingest.scan import apply_orientation, clean_scan, denoise, estimate_orientation
from ingest.tesseract import tesseract_support
from tests.fixtures.media import SCAN_TEXT, make_scan, make_scanned_pdf, render_text_page

OFF = OcrOptions(engine="off")
needs_tesseract = pytest.mark.skipif(
    not tesseract_support().available, reason="Tesseract language data not installed (apt-get install tesseract-ocr)"
)


@pytest.fixture(scope="module")
def page() -> np.ndarray:
    return render_text_page()


@pytest.fixture
def no_tesseract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process see no Tesseract language data, installed or not."""
    empty = tmp_path / "no-tessdata"
    empty.mkdir()
    monkeypatch.setenv("TESSDATA_PREFIX", str(empty))
    assert not tesseract_support().available


@pytest.mark.parametrize(("degrees", "turns"), [(4.0, 0), (-3.0, 0), (2.0, 1), (0.0, 2), (-3.0, 3)])
def test_orientation_and_skew_are_undone(page: np.ndarray, degrees: float, turns: int) -> None:
    scan = make_scan(page, degrees=degrees, quarter_turns=turns)
    found = estimate_orientation(scan)
    assert found.quarter_turns == (4 - turns) % 4
    assert abs(found.skew_deg + degrees) <= 0.5
    again = estimate_orientation(apply_orientation(scan, found))
    assert again.quarter_turns == 0 and abs(again.skew_deg) <= 0.3


def test_clean_up_whitens_paper_blackens_ink_and_removes_specks(page: np.ndarray) -> None:
    scan = make_scan(page, degrees=2.5)
    cleaned = clean_scan(scan, tokens=2048)
    gray = cleaned.image if cleaned.image.ndim == 2 else cv2.cvtColor(cleaned.image, cv2.COLOR_BGR2GRAY)
    assert np.percentile(gray, 50) >= 245  # paper
    assert np.percentile(gray, 0.5) <= 20  # ink
    # Isolated dark pixels in the paper area (top margin has no text): specks the filter removed.
    margin_before = (cv2.cvtColor(scan, cv2.COLOR_BGR2GRAY)[:150] < 100).mean()
    margin_after = (gray[:150] < 100).mean()
    assert margin_after < margin_before / 10
    width, height = cleaned.png_size
    assert width % 32 == 0 and height % 32 == 0 and vision_tokens(width, height) <= 2048
    decoded = cv2.imdecode(np.frombuffer(cleaned.png, np.uint8), cv2.IMREAD_UNCHANGED)
    assert decoded.shape[:2] == (height, width)


def test_a_page_with_a_few_faint_lines_still_gets_black_ink() -> None:
    # a signature page: three lines of light gray type on a white page, well under 1% ink
    blank = np.full((2200, 1700), 255, np.uint8)
    for i, text in enumerate(["AGREED TO AND ACCEPTED", "December 14, 1997", "BY: David A. Smith"]):
        cv2.putText(blank, text, (60, 200 + 60 * i), cv2.FONT_HERSHEY_SIMPLEX, 1.0, 200, 2, cv2.LINE_AA)
    assert (blank < 250).mean() < 0.01
    cleaned = clean_scan(blank, tokens=2048)
    assert cleaned.image[150:350, :700].min() <= 40  # the ink, stretched to black
    assert np.percentile(cleaned.image, 50) >= 250  # the paper stays white


def _type_page(font: str, size: float) -> tuple[np.ndarray, np.ndarray]:
    """Lines of type rendered at 200 dpi (Courier at 9 points: a typewriter's strokes, about one
    pixel wide), and one-pixel specks on the paper, away from the type."""
    import pymupdf

    doc = pymupdf.open()
    sheet = doc.new_page(width=420, height=200)
    for row in range(6):
        text = "Southpoint Boulevard, Jacksonville" if row % 2 else "Agreement made by GSMS and PSS"
        sheet.insert_text((20, 30 + 28 * row), text, fontname=font, fontsize=size)
    pix = sheet.get_pixmap(dpi=200, colorspace=pymupdf.csGRAY)
    page = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.stride)[:, : pix.width].copy()
    doc.close()
    specks = np.zeros(page.shape, bool)
    rng = np.random.default_rng(3)
    for y, x in zip(rng.integers(3, page.shape[0] - 3, 800), rng.integers(3, page.shape[1] - 3, 800), strict=True):
        if page[y - 3 : y + 4, x - 3 : x + 4].min() == 255:
            page[y, x] = 30
            specks[y, x] = True
    return page, specks


def test_thin_strokes_keep_all_their_ink_and_lose_only_their_specks() -> None:
    page, specks = _type_page("cour", 9)
    strokes = (page < 128) & ~specks
    cleaned = denoise(page)
    assert (cv2.medianBlur(page, 3)[strokes] < 128).mean() < 0.6  # a median erases nearly half of this ink
    assert (cleaned[strokes] < 128).all()
    assert specks.sum() > 100 and (cleaned[specks] > 200).all()
    assert (cleaned[~specks] == page[~specks]).all()  # nothing but the specks is touched


def test_thick_strokes_get_the_median() -> None:
    """Type it cannot harm still gets the median, which also evens out the paper's grain."""
    page, specks = _type_page("hebo", 20)
    rng = np.random.default_rng(5)
    grain = rng.integers(-12, 13, page.shape)
    grainy = np.clip(35 + page * 0.8 + grain, 0, 255).astype(np.uint8)  # gray paper (239), grainy
    cleaned = denoise(grainy)
    strokes = (page < 128) & ~specks
    assert (cleaned[strokes] < 128).mean() > 0.9
    assert specks.sum() > 100 and (cleaned[specks] > 200).all()
    paper = page == 255
    assert cleaned[paper].std() < 0.75 * grainy[paper].std()  # the grain evened out


def _png_size(png: bytes | None) -> tuple[int, int]:
    assert png is not None
    width, height = struct.unpack(">II", png[16:24])
    return width, height


@pytest.mark.parametrize("ext", ["png", "jpg", "webp", "bmp", "tif"])
def test_each_image_format_becomes_a_scanned_page(
    tmp_path: Path, page: np.ndarray, ext: str, no_tesseract: None
) -> None:
    path = tmp_path / f"scan.{ext}"
    assert cv2.imwrite(str(path), make_scan(page, degrees=1.5))
    doc = load(path, limits=Limits(page_tokens=1024), ocr=OFF)
    assert doc.kind == "image" and doc.page_count == 1
    assert doc.pages[0].scanned and not doc.pages[0].ocr
    assert (doc.pages[0].width, doc.pages[0].height) == (page.shape[1], page.shape[0])
    [segment] = doc.segments  # OCR off: the page image alone, and nothing broke
    assert segment.kind == "image" and segment.role == "page"
    assert segment.anchor.page == 1 and segment.anchor.label == "1"
    assert vision_tokens(*_png_size(segment.image_png)) <= 1024


def test_multi_page_tiff_gives_one_page_each(tmp_path: Path, page: np.ndarray, no_tesseract: None) -> None:
    path = tmp_path / "bundle.tiff"
    frames = [make_scan(page, degrees=d) for d in (1.0, -2.0)] + [make_scan(page, quarter_turns=2)]
    assert cv2.imwritemulti(str(path), frames)
    doc = load(path, ocr=OFF)
    assert [(p.number, p.label, p.scanned) for p in doc.pages] == [(1, "1", True), (2, "2", True), (3, "3", True)]
    assert [s.anchor.page for s in doc.segments] == [1, 2, 3]
    # The upside-down third page is stored upright: same picture as the upright first page, nearly.
    first, third = (cv2.imdecode(np.frombuffer(s.image_png or b"", np.uint8), 0) for s in doc.segments[::2])
    assert first.shape == third.shape
    assert np.abs(first.astype(int) - third.astype(int)).mean() < 25


def test_type_comes_from_content_not_the_name(tmp_path: Path, page: np.ndarray, no_tesseract: None) -> None:
    disguised = tmp_path / "scan.pdf"
    _ok, png = cv2.imencode(".png", make_scan(page))
    disguised.write_bytes(png.tobytes())
    assert load(disguised, ocr=OFF).kind == "image"
    archive = tmp_path / "contract.png"
    archive.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(IngestError, match=r"damaged and cannot be read \(it is a ZIP archive"):
        load(archive)


def test_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    _ok, png = cv2.imencode(".png", np.zeros((8, 8), np.uint8))
    data = bytearray(png.tobytes())
    data[16:24] = struct.pack(">II", 100_000, 100_000)  # the header now claims 10 gigapixels
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(bytes(data))
    with pytest.raises(IngestError, match="decompression bomb"):
        load(bomb)


@pytest.mark.parametrize("ext", ["jpg", "png"])
def test_truncated_images_are_refused(tmp_path: Path, page: np.ndarray, ext: str) -> None:
    _ok, data = cv2.imencode(f".{ext}", make_scan(page))
    cut = tmp_path / f"cut.{ext}"
    cut.write_bytes(data.tobytes()[: len(data) // 2])
    with pytest.raises(IngestError, match=r"truncated|damaged"):
        load(cut)


def _check_ocr_page(doc: object) -> None:
    from ingest.document import Document

    assert isinstance(doc, Document)
    assert doc.pages[0].scanned and doc.pages[0].ocr
    ocr = [s for s in doc.segments if s.role == "ocr"]
    text = " ".join(s.text for s in ocr).lower()
    for phrase in ("settlement agreement", "forty thousand", "laws of ontario"):
        assert phrase in text
    for segment in ocr:
        x0, y0, x1, y1 = segment.anchor.bbox or (0, 0, 0, 0)
        assert 0 <= x0 < x1 <= 595 and 0 <= y0 < y1 <= 842
    # Upright after the fix, so the title is near the top of the page.
    title = next(s for s in ocr if "SETTLEMENT" in s.text)
    assert (title.anchor.bbox or (0, 0, 0, 0))[1] < 200


def test_default_ocr_reads_a_scan_with_every_word_boxed(tmp_path: Path, page: np.ndarray, no_tesseract: None) -> None:
    """A fresh install (no Tesseract) reads a skewed, upside-down, noisy scan: text in reading order,
    each word with its own box on the page, words in the order of their lines."""
    from ingest.progress import ReadProgress

    pdf = make_scanned_pdf(tmp_path / "scan.pdf", [make_scan(page, degrees=3, quarter_turns=2)] * 2)
    heard: list[ReadProgress] = []
    doc = load(pdf, progress=heard.append)
    _check_ocr_page(doc)
    assert [(p.done, p.total) for p in heard] == [(1, 2), (2, 2)]  # OCR pages are slow: each one reported
    ocr = [s for s in doc.segments if s.role == "ocr" and s.anchor.page == 1]
    words = [w for s in ocr for w in s.words]
    assert " ".join(w[4] for w in words).lower().count("forty") == 1
    for x0, y0, x1, y1, text, _line in words:
        assert 0 <= x0 < x1 <= 595 and 0 <= y0 < y1 <= 842 and text.strip()
        assert (y1 - y0) < 40  # a word's box, not a block's
    block = next(s for s in ocr if "forty" in s.text)
    lines = block.text.split("\n")
    assert {w[5] for w in block.words} == set(range(len(lines)))
    assert " ".join(w[4] for w in block.words if w[5] == 0) == lines[0]


@needs_tesseract
def test_tesseract_reads_the_scan_when_chosen(tmp_path: Path, page: np.ndarray) -> None:
    pdf = make_scanned_pdf(tmp_path / "scan.pdf", [make_scan(page, degrees=3, quarter_turns=2)])
    doc = load(pdf, ocr=OcrOptions(engine="tesseract", language="eng"))
    _check_ocr_page(doc)
    assert all(s.words for s in doc.segments if s.role == "ocr")


def test_with_ocr_off_scans_still_load_as_images(tmp_path: Path, page: np.ndarray, no_tesseract: None) -> None:
    pdf = make_scanned_pdf(tmp_path / "scan.pdf", [make_scan(page, degrees=3)])
    doc = load(pdf, ocr=OFF)
    assert doc.pages[0].scanned and not doc.pages[0].ocr
    assert [s.role for s in doc.segments] == ["page"]


def test_tesseract_chosen_but_missing_reads_pages_as_images(
    tmp_path: Path, page: np.ndarray, no_tesseract: None
) -> None:
    from ingest.ocr_engines import describe

    pdf = make_scanned_pdf(tmp_path / "scan.pdf", [make_scan(page)])
    doc = load(pdf, ocr=OcrOptions(engine="tesseract"))
    assert [s.role for s in doc.segments] == ["page"]
    detail, runs = describe(OcrOptions(engine="tesseract"))
    assert not runs and "not installed" in detail


def test_ocr_leaves_no_telemetry_behind(tmp_path: Path, page: np.ndarray) -> None:
    """onnxruntime queues usage telemetry in ~/.cache/Microsoft unless told not to: `folio add` of a
    scan, started without the opt-out in its environment and with its own home folder, OCRs the page
    and writes nothing there."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    home = tmp_path / "home"
    home.mkdir()
    scan = tmp_path / "scan.png"
    assert cv2.imwrite(str(scan), make_scan(page))
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "app.cli", "add", str(scan)], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert proc.returncode == 0 and "added" in proc.stdout, proc.stderr
    assert not (home / ".cache" / "Microsoft").exists()


GULF_SOUTH = "contracts_pdf/GULFSOUTHMEDICALSUPPLYINC_12_24_1997-EX-4-AFFILIATE AGREEMENT.PDF"


def test_a_page_misjudged_as_upside_down_is_read_the_right_way_up(tmp_path: Path, no_tesseract: None) -> None:
    """CUAD's Gulf South contract is set in small monospace type whose ascenders fool the orientation
    estimate into turning its first page upside down; the OCR's own confidence turns it back, so the
    page reads as text (not a few unsure letters) and its words sit where they are on the page."""
    import pymupdf

    from tests.conftest import CORPUS

    source = CORPUS / GULF_SOUTH
    if not source.is_file():
        pytest.skip(f"real-world corpus not found at {CORPUS}")
    with pymupdf.open(source) as doc:
        pix = doc[0].get_pixmap(dpi=200, colorspace=pymupdf.csGRAY)
    scan = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width)
    assert estimate_orientation(scan).quarter_turns == 2  # the misjudgement this guards against
    image = tmp_path / "page.png"
    assert cv2.imwrite(str(image), scan)
    doc = load(image)
    text = " ".join(s.text for s in doc.segments if s.role == "ocr")
    for phrase in ("Southpoint Boulevard", "Jacksonville, Florida", "Internal Revenue Code"):
        assert phrase in text
    title = next(s for s in doc.segments if s.role == "ocr" and "Southpoint" in s.text)
    assert (title.anchor.bbox or (0, 0, 0, 0))[1] < doc.pages[0].height / 4  # near the top: the page is upright


@pytest.mark.parametrize("kind", ["image file", "image-only PDF"])
def test_a_typewriter_page_scanned_at_200_dpi_reads_in_full(tmp_path: Path, kind: str, no_tesseract: None) -> None:
    """Page 2 of the Gulf South contract (9-point typewriter type, 1,012 words) scanned at 200 dpi,
    read the way a lawyer would add it: every word is read. With the median on every page, the image
    file (read at its own size) missed 57 words ('Houlevard'), the image-only PDF (rendered at 2,400
    pixels) 2."""
    import collections

    import pymupdf

    from tests.conftest import CORPUS

    source = CORPUS / GULF_SOUTH
    if not source.is_file():
        pytest.skip(f"real-world corpus not found at {CORPUS}")
    with pymupdf.open(source) as doc:
        page = doc[1]
        reference = page.get_text()
        pix = page.get_pixmap(dpi=200, colorspace=pymupdf.csGRAY)
        if kind == "image file":
            path = tmp_path / "page.png"
            path.write_bytes(pix.tobytes("png"))
        else:
            path = tmp_path / "page.pdf"
            with pymupdf.open() as out:
                scanned = out.new_page(width=page.rect.width, height=page.rect.height)
                scanned.insert_image(scanned.rect, stream=pix.tobytes("png"))
                out.save(path)
    doc = load(path)
    assert doc.pages[0].scanned and doc.pages[0].ocr

    def words(text: str) -> collections.Counter[str]:
        return collections.Counter(re.findall(r"[^\W_]+", text.lower()))

    wanted, found = words(reference), words(" ".join(s.text for s in doc.segments if s.role == "ocr"))
    missed = {w: n - found[w] for w, n in wanted.items() if found[w] < n}
    assert sum(wanted.values()) == 1012
    assert sum(missed.values()) <= 3, missed


def test_lines_shared_out_between_threads_read_as_on_one_thread(
    page: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two cores, a page's lines are recognised on two threads, each line whole on one; the
    lines, their words and boxes are exactly what one thread reads."""
    import ingest.rapid_ocr as rapid

    image = clean_scan(make_scan(page, degrees=1.5), tokens=1024).image
    monkeypatch.setattr(rapid, "usable_cores", lambda: 2)
    shared = rapid.RapidOcrEngine()
    two = shared.read(image)
    assert isinstance(shared._engine().text_rec._first, rapid._SharedRecognition)
    monkeypatch.setattr(rapid, "usable_cores", lambda: 1)
    one = rapid.RapidOcrEngine().read(image)
    assert len(two) >= len(SCAN_TEXT) and two == one


def test_a_japanese_page_is_read_again_by_the_model_that_has_kana(page: np.ndarray) -> None:
    """The tiny recogniser has no kana (its character list lacks them); a page on which it reads CJK
    characters goes to the small recogniser, an English page never loads it."""
    import pymupdf

    import ingest.rapid_ocr as rapid

    assert "と" not in rapid.model_files().keys.read_text(encoding="utf-8")
    engine = rapid.RapidOcrEngine()
    english = engine.read(clean_scan(make_scan(page), tokens=1024).image)
    assert "forty" in " ".join(line.text for line in english).lower()
    assert engine._engine().text_rec._second is None
    with pymupdf.open() as doc:
        sheet = doc.new_page(width=595, height=842)
        sheet.insert_text((60, 100), "甲と乙は、以下のとおり合意した。", fontname="japan", fontsize=16)
        sheet.insert_text((60, 160), "第三条 秘密保持", fontname="japan", fontsize=16)
        pix = sheet.get_pixmap(dpi=200, colorspace=pymupdf.csGRAY)
    image = np.frombuffer(pix.samples, np.uint8).reshape(pix.h, pix.w)
    read = [line.text for line in engine.read(image)]
    assert read == ["甲と乙は、以下のとおり合意した。", "第三条 秘密保持"]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this platform")
def test_ocr_threads_follow_the_cores_this_process_may_use() -> None:
    from ingest.rapid_ocr import usable_cores

    allowed = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(allowed)})
        assert usable_cores() == 1
    finally:
        os.sched_setaffinity(0, allowed)
    assert usable_cores() == len(allowed)
