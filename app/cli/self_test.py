"""`folio --self-test`: prove an installation works end to end, without touching the user's data.

It runs in a throw-away FOLIO_HOME: writes a two-page PDF, ingests it, OCRs a generated scanned page
with the built-in OCR engine (its models ship with the app), installs the starter model
from a file (the installers do not contain it) and lets the real engine process answer a question
for a few tokens. Used by the bundle test, the release workflow and support ("run folio --self-test").
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app import __version__
from app.errors import FolioError

CHECK_SENTENCE = "The notice period under this agreement is ninety (90) days."
QUESTION = "What is the notice period?"


@dataclass(frozen=True)
class SelfTestResult:
    version: str
    pages: int
    segments: int
    model: str
    backends: tuple[str, ...]
    answer_tokens: int
    answer: str
    ingest_s: float
    answer_s: float
    total_s: float
    ocr_engine: str = ""
    ocr_s: float = 0.0

    def summary(self) -> str:
        preview = " ".join(self.answer.split())[:40]
        return (
            f"folio self-test ok: version {self.version}; ingested a {self.pages}-page PDF "
            f"({self.segments} segments) in {self.ingest_s:.1f} s; OCR ({self.ocr_engine}) read a scanned page "
            f"in {self.ocr_s:.1f} s; {self.model} on "
            f"{'+'.join(self.backends) or '?'} answered {self.answer_tokens} tokens in {self.answer_s:.1f} s "
            f"({preview!r}); total {self.total_s:.1f} s"
        )


@contextmanager
def temporary_home(keep: bool = False) -> Iterator[Path]:
    """A fresh FOLIO_HOME for the duration; the user's own folders are never opened."""
    home = Path(tempfile.mkdtemp(prefix="folio-self-test-"))
    previous = os.environ.get("FOLIO_HOME")
    os.environ["FOLIO_HOME"] = str(home)
    try:
        yield home
    finally:
        if previous is None:
            os.environ.pop("FOLIO_HOME", None)
        else:
            os.environ["FOLIO_HOME"] = previous
        if not keep:
            shutil.rmtree(home, ignore_errors=True)


def write_test_pdf(path: Path) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for number, text in enumerate(["Folio self-test agreement.\nSection 1. Parties.", CHECK_SENTENCE], start=1):
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(72, 72, 523, 300), text, fontsize=12)
        page.insert_text((280, 810), f"Page {number}", fontsize=8)
    doc.save(path)
    doc.close()
    return path


def write_scanned_page(path: Path) -> Path:
    """A page image (PNG, 150 dpi) with the check sentence on it and no text layer: what a scanner makes."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(72, 100, 523, 400), f"SCANNED EXHIBIT\n\n{CHECK_SENTENCE}", fontsize=14)
    page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).save(path)
    doc.close()
    return path


def run_self_test(
    starter_file: Path | None,
    *,
    max_tokens: int = 8,
    progress: Callable[[str], None] | None = None,
    keep_home: bool = False,
) -> SelfTestResult:
    """Run every step in a temporary FOLIO_HOME; raise FolioError (one line) on the first failure."""
    from app.chat import ChatService
    from app.context import open_app
    from app.models.registry import find_starter_file, packaged_starter_available, starter_file_name
    from app.paths import default_paths
    from inference.backends import load_backends

    say = progress or (lambda _msg: None)
    start = time.perf_counter()
    # Read-only use of the user's folders: the starter model they already installed, if any.
    installed = default_paths().models_dir / "starter" / starter_file_name()
    source = starter_file or find_starter_file() or (installed if installed.is_file() else None)
    with temporary_home(keep=keep_home) as home:
        config = home / "config"
        config.mkdir(parents=True)
        (config / "settings.toml").write_text(f"schema_version = 1\nmax_answer_tokens = {max_tokens}\n")
        ctx = open_app()
        try:
            say("ingesting a generated PDF")
            t0 = time.perf_counter()
            document = ctx.library.add(write_test_pdf(home / "self-test.pdf"), limits=ctx.limits).document
            ingest_s = time.perf_counter() - t0
            if document.page_count != 2 or "ninety (90) days" not in ctx.library.page_text(document.id, 2):
                raise FolioError("self-test: the generated PDF was not read back correctly")
            segments = len(ctx.library.segments(document.id))

            say(f"reading a scanned page with OCR ({ctx.ocr.engine})")
            t0 = time.perf_counter()
            scan = ctx.library.add(write_scanned_page(home / "scanned-page.png"), limits=ctx.limits).document
            ocr_s = time.perf_counter() - t0
            read = " ".join(ctx.library.page_text(scan.id, 1).lower().split())
            if ctx.ocr.engine != "off" and "ninety (90) days" not in read:
                raise FolioError(
                    f"self-test: OCR ({ctx.ocr.engine}) did not read the generated scanned page ({read[:60]!r})"
                )

            if source is not None:
                say(f"installing the starter model from {source}")
                model = ctx.models.install_starter(source)
            elif packaged_starter_available():
                model = ctx.models.starter()
            else:
                raise FolioError(
                    f"self-test: no starter model; pass --model PATH/{starter_file_name()} "
                    "or install it first with folio models add-starter"
                )

            say(f"asking {model.label} for {max_tokens} tokens")
            service = ChatService(ctx)
            t0 = time.perf_counter()
            try:
                message = service.ask([document.id], QUESTION, thinking=False)
            finally:
                service.close()
            answer_s = time.perf_counter() - t0
            if message.status != "complete" or not message.completion_tokens:
                raise FolioError(f"self-test: the model produced no answer (status {message.status})")
            return SelfTestResult(
                version=__version__,
                pages=document.page_count,
                segments=segments,
                model=model.label,
                backends=tuple(load_backends()),
                answer_tokens=message.completion_tokens,
                answer=message.text,
                ingest_s=ingest_s,
                ocr_engine=ctx.ocr.engine,
                ocr_s=ocr_s,
                answer_s=answer_s,
                total_s=time.perf_counter() - start,
            )
        finally:
            ctx.close()
