"""PDFs, page by page: text pages keep their blocks (reading order, boxes, tables as Markdown,
running headers/footers once, comments marked); pages without a usable text layer are scanned pages."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.document import Anchor, Page, Segment
from ingest.errors import CorruptFile, EmptyDocument, IngestError, PasswordRequired, TooLarge
from ingest.headers import BlockPlace, running_blocks
from ingest.limits import Limits
from ingest.ocr import OcrEngine
from ingest.page_memo import PageMemo
from ingest.progress import ProgressFn, Ticker
from ingest.rapid_ocr import PAGE_THREAD
from ingest.scanned import LayerText, scanned_page, work_scale
from ingest.tables import find_tables

# A page with fewer visible characters than this has no usable text layer (a scan with a stamped
# page number, a blank page with a watermark letter).
MIN_TEXT_CHARS = 20
# A picture covering this much of the page, with all the text on it invisible, is a scan that
# came with someone else's OCR layer.
FULL_PAGE_IMAGE = 0.8


@dataclass
class _TextPage:
    page: Page
    blocks: list[tuple[tuple[float, float, float, float], str]]
    tables: list[tuple[tuple[float, float, float, float], str]]
    annotations: list[Segment]


@dataclass
class PdfContent:
    pages: list[Page] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)


def open_pdf(path: Path, password: str | None) -> Any:
    import pymupdf

    pymupdf.TOOLS.mupdf_display_errors(False)
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # MuPDF raises several unrelated types for broken files
        raise CorruptFile(f"{path.name}: the PDF is damaged and cannot be read ({_short(exc)})") from exc
    if doc.needs_pass:
        if not password:
            doc.close()
            raise PasswordRequired(f"{path.name}: password required")
        if not doc.authenticate(password):
            doc.close()
            raise PasswordRequired(f"{path.name}: the password is wrong")
    return doc


def read_pdf(
    path: Path,
    *,
    password: str | None,
    limits: Limits,
    ocr: OcrEngine | None,
    progress: ProgressFn | None = None,
    memo: PageMemo | None = None,
) -> PdfContent:
    """`memo` keeps each scanned page once read, and gives back the pages an earlier, interrupted
    reading of the same file finished (ingest.page_memo)."""
    doc = open_pdf(path, password)
    try:
        try:
            count = doc.page_count
        except Exception as exc:
            raise CorruptFile(f"{path.name}: the PDF is damaged and cannot be read ({_short(exc)})") from exc
        if count == 0:
            raise EmptyDocument(f"{path.name}: the PDF has no pages")
        if count > limits.max_pages:
            raise TooLarge(f"{path.name}: {count} pages is over the limit of {limits.max_pages} pages")
        ticker = _PageTicker(progress, count, memo)
        with _ScanPool(ocr) as pool:
            for index in range(count):
                try:
                    page = doc.load_page(index)
                    pool.add(_read_page(page, index + 1, limits, ocr, path.name, memo), ticker)
                except IngestError:
                    raise
                except Exception as exc:
                    raise CorruptFile(
                        f"{path.name}: page {index + 1} is damaged and cannot be read ({_short(exc)})"
                    ) from exc
            read = pool.results(path.name)
        content = _assemble(read)
        content.metadata = {k: str(v) for k, v in (doc.metadata or {}).items() if v}
        return content
    finally:
        doc.close()


_Read = _TextPage | tuple[Page, list[Segment]]


class _PageTicker:
    """Progress by pages finished, from whichever thread finished one."""

    def __init__(self, progress: ProgressFn | None, count: int, memo: PageMemo | None) -> None:
        self._ticker = Ticker(progress, count)
        self._count, self._memo = count, memo
        self._done = 0
        self._lock = threading.Lock()

    def page_done(self) -> None:
        with self._lock:
            self._done += 1
            kept = self._memo.kept if self._memo is not None else 0
            note = f" ({kept} kept from an interrupted reading)" if kept else ""
            self._ticker.page_done(self._done, f"page {self._done} of {self._count}{note}", kept)


class _ScanPool:
    """Scanned pages are cleaned and OCR'd on one thread per core, several pages at once, while MuPDF
    (one thread: a document is not shared between threads) renders the next ones. A page is a
    serial chain of small steps (clean-up, detection, recognition line by line, reading order);
    pages side by side keep every core busy where splitting one page across cores left them
    waiting on each other. At most a few rendered pages wait, so memory stays flat on 5,000 pages."""

    def __init__(self, ocr: OcrEngine | None) -> None:
        workers = max(1, int(getattr(ocr, "page_workers", 1)))
        # The name tells ingest.rapid_ocr to give each thread an engine of its own.
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix=PAGE_THREAD) if workers > 1 else None
        self._ahead = workers + 1
        self._items: list[_Read | Future[_Read]] = []
        self._pending: set[Future[_Read]] = set()

    def __enter__(self) -> _ScanPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def add(self, item: _Read | Callable[[], _Read], ticker: _PageTicker) -> None:
        if not callable(item):
            self._items.append(item)
            ticker.page_done()
            return
        if self._pool is None:
            self._items.append(item())
            ticker.page_done()
            return
        # Wait for any page to finish, not the oldest: behind one slow page (many lines, or read twice
        # when turned) a core could sit idle once the pages after it were done. Measured on the 200-page
        # production it moved little (1.62 to 1.66 of two cores busy). Errors surface in results().
        while len(self._pending) >= self._ahead:
            done, _running = wait(self._pending, return_when=FIRST_COMPLETED)
            self._pending.difference_update(done)
        future = self._pool.submit(item)
        future.add_done_callback(lambda _f: ticker.page_done())
        self._pending.add(future)
        self._items.append(future)

    def results(self, name: str) -> list[_Read]:
        out: list[_Read] = []
        for number, item in enumerate(self._items, start=1):
            if not isinstance(item, Future):
                out.append(item)
                continue
            try:
                out.append(item.result())
            except IngestError:
                raise
            except Exception as exc:
                raise CorruptFile(f"{name}: page {number} is damaged and cannot be read ({_short(exc)})") from exc
        return out


def _assemble(read: list[_TextPage | tuple[Page, list[Segment]]]) -> PdfContent:
    text_pages = [r for r in read if isinstance(r, _TextPage)]
    places = [
        BlockPlace(i, j, text, (bbox[1] + bbox[3]) / 2, tp.page.height)
        for i, tp in enumerate(text_pages)
        for j, (bbox, text) in enumerate(tp.blocks)
    ]
    running = running_blocks(places, len(text_pages))
    content = PdfContent()
    text_index = 0
    for item in read:
        if not isinstance(item, _TextPage):
            page, segments = item
            content.pages.append(page)
            content.segments.extend(segments)
            continue
        page = item.page
        content.pages.append(page)
        blocks: list[Segment] = []
        for j, (bbox, text) in enumerate(item.blocks):
            role = running.get((text_index, j), "body")
            if role != "repeat":
                anchor = Anchor(page=page.number, label=page.label, bbox=bbox)
                blocks.append(Segment(kind="text", anchor=anchor, text=text, role=role))
        tables = [
            Segment(kind="text", anchor=Anchor(page=page.number, label=page.label, bbox=bbox), text=md, role="table")
            for bbox, md in item.tables
        ]
        content.segments.extend(_merge_tables(blocks, tables))
        content.segments.extend(item.annotations)
        text_index += 1
    return content


def _merge_tables(blocks: list[Segment], tables: list[Segment]) -> list[Segment]:
    """Blocks keep MuPDF's reading order; each table goes before the first block below its top."""
    pending = sorted(tables, key=lambda t: t.anchor.bbox[1] if t.anchor.bbox else 0.0)
    merged: list[Segment] = []
    for block in blocks:
        top = block.anchor.bbox[1] if block.anchor.bbox else 0.0
        while pending and pending[0].anchor.bbox is not None and pending[0].anchor.bbox[1] <= top:
            merged.append(pending.pop(0))
        merged.append(block)
    return merged + pending


def _read_page(
    page: Any, number: int, limits: Limits, ocr: OcrEngine | None, name: str, memo: PageMemo | None = None
) -> _Read | Callable[[], _Read]:
    """A text page, read; or for a scanned page, the work left once MuPDF has drawn it (a callable,
    run on another thread), or what an earlier reading kept of it."""
    label = page.get_label() or str(number)
    rect = page.rect
    width, height = float(rect.width), float(rect.height)
    images = page.get_images(full=True)
    for image in images:
        pixels = int(image[2]) * int(image[3])
        if pixels > limits.max_image_pixels:
            raise TooLarge(
                f"{name}: page {number} holds a {image[2]:,} x {image[3]:,} pixel image, over the limit of "
                f"{limits.max_image_pixels / 1e6:.0f} megapixels (a possible decompression bomb)"
            )
    blocks: list[tuple[tuple[float, float, float, float], str]] = []
    for block in page.get_text("blocks", sort=True):
        x0, y0, x1, y1, text, _block_no, block_type = block[:7]
        if block_type != 0:  # 1 = image block; pictures are read as part of a scanned page
            continue
        cleaned = _clean(text)
        if cleaned:
            blocks.append(((x0, y0, x1, y1), cleaned))
    chars = sum(len("".join(text.split())) for _, text in blocks)
    if chars >= MIN_TEXT_CHARS:
        scanned = bool(images) and _scan_with_hidden_text(page, width * height)
    else:  # little or no text: a scan if there is anything to see, else a (nearly) empty text page
        scanned = bool(images) or bool(page.get_cdrawings())
    if not scanned:
        page_obj = Page(number=number, label=label, width=width, height=height)
        tables = find_tables(page)
        if tables:
            blocks = [b for b in blocks if not any(_inside(b[0], t.bbox) for t in tables)]
        return _TextPage(page_obj, blocks, [(t.bbox, t.markdown) for t in tables], _annotations(page, number, label))
    if memo is not None:
        kept = memo.get(number)
        if kept is not None:
            return kept
    return _scanned_pdf_page(page, number, label, limits, ocr, blocks, memo)


def _scanned_pdf_page(
    page: Any,
    number: int,
    label: str,
    limits: Limits,
    ocr: OcrEngine | None,
    blocks: list[tuple[tuple[float, float, float, float], str]],
    memo: PageMemo | None = None,
) -> Callable[[], tuple[Page, list[Segment]]]:
    import cv2
    import numpy as np
    import pymupdf

    width, height = float(page.rect.width), float(page.rect.height)
    zoom = work_scale(width, height, limits, ocr, dpi=72.0)
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
    rgb = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.stride)[:, : pix.width * 3]
    bgr = cv2.cvtColor(rgb.reshape(pix.height, pix.width, 3), cv2.COLOR_RGB2BGR)
    layer = [LayerText(bbox, text) for bbox, text in blocks]
    annotations = _annotations(page, number, label)

    def finish() -> tuple[Page, list[Segment]]:
        page_obj, segments = scanned_page(
            bgr, number=number, label=label, page_size=(width, height), limits=limits, ocr=ocr, layer_text=layer
        )
        segments = segments + annotations
        if memo is not None:
            memo.put(number, page_obj, segments)
        return page_obj, segments

    return finish


def _scan_with_hidden_text(page: Any, page_area: float) -> bool:
    covered = 0.0
    for info in page.get_image_info():
        x0, y0, x1, y1 = info["bbox"]
        covered = max(covered, max(0.0, x1 - x0) * max(0.0, y1 - y0))
    if covered < FULL_PAGE_IMAGE * page_area:
        return False
    spans = page.get_texttrace()
    total = sum(len(s["chars"]) for s in spans)
    hidden = sum(len(s["chars"]) for s in spans if s["type"] == 3 or s.get("opacity", 1) == 0)
    return total > 0 and hidden >= 0.9 * total


def _inside(box: tuple[float, float, float, float], outer: tuple[float, float, float, float]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return outer[0] <= cx <= outer[2] and outer[1] <= cy <= outer[3]


def _annotations(page: Any, number: int, label: str) -> list[Segment]:
    segments: list[Segment] = []
    for annot in page.annots() or []:
        info = annot.info or {}
        content = _clean(info.get("content", ""))
        if not content:
            continue
        r = annot.rect
        anchor = Anchor(page=number, label=label, bbox=(r.x0, r.y0, r.x1, r.y1))
        kind = (annot.type[1] if annot.type else "").lower() or "comment"
        author = info.get("title", "")
        prefix = f"[{kind} comment by {author}] " if author else f"[{kind} comment] "
        segments.append(Segment(kind="text", anchor=anchor, text=prefix + content, role="annotation"))
    return segments


def _clean(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.replace("\x00", "").splitlines()]
    return "\n".join(line for line in lines if line).strip()


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:120]
