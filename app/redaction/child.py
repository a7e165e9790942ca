"""Redaction's MuPDF and OCR work in a child process (app/processes/pool.py): reading every page,
OCR of pictures, redacting, and the proof all hold Python's GIL for whole calls, and a scanned
contract takes minutes. The window's thread only waits on a pipe; Cancel ends the child at once.

The functions here run in the child and rebuild the working copy from the source each time (it is
the same every time: app/redaction/apply.py's `prepare` is deterministic), so nothing but values
crosses the pipe.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.errors import Cancelled, FolioError
from app.processes.pool import ChildDied, ChildProcess, report
from app.redaction.apply import Inventory
from app.redaction.candidates import Candidate, Search
from app.redaction.pagetext import PageText
from app.redaction.proof import Proof

if TYPE_CHECKING:
    from ingest.ocr import OcrEngine, OcrOptions

PDF = "pdf"
IMAGE = "image"
TYPESET = "typeset"


@dataclass(frozen=True)
class Source:
    """What is redacted: a PDF or an image file (read, never written), or a Word, text or e-mail
    document typeset as a PDF first (`data`)."""

    title: str
    sha256: str  # of the original file (the library document's sha256)
    kind: str  # PDF, IMAGE or TYPESET
    path: str | None = None
    data: bytes | None = None  # the typeset PDF
    password: str | None = None
    document_id: int | None = None


@dataclass(frozen=True)
class Step:
    """Progress reported from the child: which step, how far."""

    text: str
    done: int
    total: int


@dataclass(frozen=True)
class Found:
    candidates: list[Candidate]
    pages: list[PageText]
    inventory: Inventory
    skipped_terms: list[str]


# -- in the child ----------------------------------------------------------------------------------
def _source_bytes(source: Source) -> bytes:
    if source.kind == TYPESET:
        if source.data is None:
            raise FolioError(f"{source.title}: nothing to redact (the document was not typeset)")
        return source.data
    path = Path(source.path or "")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FolioError(f"{source.title}: the original file cannot be read at {path} ({exc.strerror})") from exc
    if hashlib.sha256(data).hexdigest() != source.sha256:
        raise FolioError(f"{source.title}: the file at {path} has changed since it was added to the library")
    if source.kind == IMAGE:
        return _image_pdf(data, source.title)
    return data


def _image_pdf(data: bytes, title: str) -> bytes:
    """An image file (every page of a TIFF) as a PDF of full-page pictures."""
    import pymupdf

    try:
        with pymupdf.open(stream=data) as image:
            return bytes(image.convert_to_pdf())
    except Exception as exc:  # MuPDF's several types for an image it cannot decode
        raise FolioError(f"{title}: the image cannot be read ({exc})") from exc


def working_copy(source: Source, *, look: bool = False) -> tuple[Any, Inventory]:
    """The prepared working copy; with `look`, the words of its hidden places read out first (the
    candidate finder lists them; redacting needs only the copy)."""
    from app.redaction.apply import open_pdf, prepare

    data = _source_bytes(source)
    try:
        doc = open_pdf(data, source.password)
    except FolioError as exc:
        raise FolioError(f"{source.title}: {exc}") from exc
    return doc, prepare(doc, look=look, original=data, password=source.password)


def _ocr(options: OcrOptions | None) -> OcrEngine | None:
    """The OCR engine of the settings; when OCR is off there, the built-in one all the same (a picture
    nobody reads is a picture nobody checked)."""
    from ingest.ocr import OcrOptions
    from ingest.ocr_engines import ocr_engine

    chosen = ocr_engine(options or OcrOptions())
    return chosen if chosen is not None else ocr_engine(OcrOptions())


def _step(text: str) -> Any:
    return lambda done, total: report(Step(text, done, total))


def find_in_child(source: Source, search: Search, ocr: OcrOptions | None) -> Found:
    from app.redaction.candidates import Mark, find_candidates
    from app.redaction.pagetext import from_shown
    from app.redaction.proof import read_pages

    doc, inventory = working_copy(source, look=True)
    try:
        # Marks are made on the page as shown (turned by /Rotate): back into the page's own space.
        search.marks = tuple(
            Mark(m.page, from_shown(doc[m.page - 1], m.rect)) for m in search.marks if 0 < m.page <= doc.page_count
        )
        pages = read_pages(doc, _ocr(ocr), progress=_step("reading page"))
    finally:
        doc.close()
    candidates = find_candidates(pages, search, hidden=inventory.hidden)
    return Found(candidates, pages, inventory, list(search.skipped))


def redact_in_child(source: Source, accepted: list[Candidate], label: bool) -> bytes:
    from app.redaction.apply import redact, scrub, write

    doc, _inventory = working_copy(source)
    try:
        report(Step("removing the accepted areas", 0, 1))
        redact(doc, accepted, label=label)
        scrub(doc)
        return write(doc)
    finally:
        doc.close()


def prove_in_child(path: str, pages: list[PageText], accepted: list[Candidate], ocr: OcrOptions | None) -> Proof:
    from app.redaction.proof import prove

    return prove(path, pages, accepted, ocr=_ocr(ocr), progress=_step("checking page"))


def typeset_in_child(html: str) -> bytes:
    from app.export import html_pdf

    return html_pdf(html)


# -- in the parent ---------------------------------------------------------------------------------
class RedactionProcess(ChildProcess):
    """The child that does redaction's MuPDF and OCR work; stop() (any thread) cancels the call."""

    def __init__(self) -> None:
        super().__init__()
        self._stopped = False
        self._calling = False

    @property
    def stopped(self) -> bool:
        return self._stopped

    def resume(self) -> None:
        """Take new work again after stop()."""
        self._stopped = False

    def _run(self, fn: Any, *args: Any, on_progress: Any = None) -> Any:
        # _calling is set before _stopped is read, and stop() sets _stopped before it reads _calling:
        # however the two threads interleave, a stop() either stops this call or kills its child.
        self._calling = True
        try:
            if self._stopped:
                raise Cancelled()
            return self.call(fn, *args, on_progress=on_progress)
        except ChildDied as exc:
            if self._stopped or exc.closed:
                raise Cancelled() from exc
            raise FolioError("the redaction process ended unexpectedly (the file may be damaged)") from exc
        finally:
            self._calling = False

    def find(self, source: Source, search: Search, ocr: OcrOptions | None, on_progress: Any = None) -> Found:
        return self._run(find_in_child, source, search, ocr, on_progress=on_progress)

    def redact(self, source: Source, accepted: list[Candidate], label: bool, on_progress: Any = None) -> bytes:
        return self._run(redact_in_child, source, accepted, label, on_progress=on_progress)

    def prove(
        self,
        path: Path,
        pages: list[PageText],
        accepted: list[Candidate],
        ocr: OcrOptions | None,
        on_progress: Any = None,
    ) -> Proof:
        return self._run(prove_in_child, str(path), pages, accepted, ocr, on_progress=on_progress)

    def typeset(self, html: str) -> bytes:
        return self._run(typeset_in_child, html)

    def stop(self) -> None:
        """Cancel the call under way, or the next one if none is (until resume()); from any thread."""
        self._stopped = True
        if self._calling:
            super().stop()
