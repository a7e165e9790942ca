"""ingest.load(path) -> Document: sniff the type from content, check limits, read it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ingest.document import Document
from ingest.errors import CorruptFile, EmptyDocument, IngestError, PasswordRequired, TooLarge, UnsupportedFile
from ingest.limits import Limits
from ingest.ocr import OcrOptions
from ingest.ocr_engines import ocr_engine
from ingest.page_memo import PageMemo, memo_folder
from ingest.progress import ProgressFn
from ingest.sniff import ENCRYPTED_OFFICE, sniff

__all__ = ["Limits", "OcrOptions", "check_readable", "file_sha256", "load"]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_readable(path: Path, limits: Limits) -> int:
    """Return the size in bytes, or raise a one-line error about why the file can't be used."""
    if not path.exists():
        raise IngestError(f"{path}: no such file", path=str(path))
    if path.is_dir():
        raise IngestError(f"{path}: is a folder, not a file", path=str(path))
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise IngestError(f"{path}: cannot be read ({exc.strerror})", path=str(path)) from exc
    if size == 0:
        raise EmptyDocument(f"{path.name}: the file is empty (0 bytes)", path=str(path))
    if size > limits.max_bytes:
        raise TooLarge(
            f"{path.name}: {size / 1024**2:.0f} MB is over the limit of {limits.max_bytes / 1024**2:.0f} MB",
            path=str(path),
        )
    return size


def load(
    path: str | Path,
    *,
    password: str | None = None,
    limits: Limits | None = None,
    ocr: OcrOptions | None = None,
    progress: ProgressFn | None = None,
    resume_dir: Path | None = None,
) -> Document:
    """Read a file into a Document, or raise IngestError with one plain line saying why not.

    `ocr` chooses the OCR engine for scanned pages and images (default: rapidocr); `progress` hears
    about each page read, from the thread or process doing the reading. With `resume_dir`, a scanned
    PDF's pages are kept there as they are read, and a reading that was interrupted goes on from the
    first page it had not finished (ingest.page_memo; the caller forgets them once stored)."""
    options = _Options(password, limits or Limits(), ocr or OcrOptions(), progress, resume_dir=resume_dir)
    return _load(path, options)


def _load(path: str | Path, options: _Options) -> Document:
    limits = options.limits
    source = Path(path).expanduser().resolve()
    size = check_readable(source, limits)
    try:
        kind = sniff(source)
        sha256 = file_sha256(source)
    except OSError as exc:
        raise IngestError(f"{source}: cannot be read ({exc.strerror})", path=str(source)) from exc
    document = Document(
        kind="pdf", title=source.stem, sha256=sha256, source_path=str(source), size_bytes=size, mime=kind.mime
    )
    if kind.family == "damaged":
        raise CorruptFile(f"{source.name}: the file is damaged and cannot be read (it is {_article(kind.name)})")
    if kind == ENCRYPTED_OFFICE:
        raise PasswordRequired(
            f"{source.name}: the Office file is protected with a password; Folio cannot open encrypted Office "
            "files (save an unprotected copy, or a PDF)",
            path=str(source),
        )
    try:
        _read_into(document, source, kind.family, options)
    except IngestError as exc:
        exc.path = exc.path or str(source)
        raise
    except MemoryError as exc:
        raise TooLarge(f"{source.name}: not enough memory to read this file", path=str(source)) from exc
    if kind.family == "unknown":
        raise UnsupportedFile(
            f"{source.name}: unsupported file type (it looks like {_article(kind.name)})", path=str(source)
        )
    if not document.segments:
        raise EmptyDocument(f"{source.name}: nothing readable was found in the file", path=str(source))
    return document


@dataclass(frozen=True)
class _Options:
    password: str | None
    limits: Limits
    ocr: OcrOptions
    progress: ProgressFn | None
    nesting: int = 0  # how many e-mails this file is attached inside
    resume_dir: Path | None = None


def _read_into(document: Document, source: Path, family: str, options: _Options) -> None:
    limits = options.limits
    if family == "pdf":
        from ingest.pdf import read_pdf

        engine = ocr_engine(options.ocr)
        memo = None
        if options.resume_dir is not None:
            read_as = (engine.name if engine else "off", options.ocr, limits.page_tokens, limits.max_image_pixels)
            settings = "|".join(map(str, read_as))
            memo = PageMemo(memo_folder(options.resume_dir, document.sha256, settings))
        content = read_pdf(
            source, password=options.password, limits=limits, ocr=engine, progress=options.progress, memo=memo
        )
        document.pages, document.segments, document.metadata = content.pages, content.segments, content.metadata
        document.title = content.metadata.get("title") or source.stem
    elif family == "image":
        from ingest.images import read_image_file

        document.kind = "image"
        engine = ocr_engine(options.ocr)
        document.pages, document.segments = read_image_file(
            source, limits=limits, ocr=engine, progress=options.progress
        )
    elif family == "video":
        from ingest.video import read_video

        video = read_video(source, limits=limits)
        document.kind = "video"
        document.segments = video.segments
        document.duration_s = video.duration_s
        document.video = video.info
        document.contact_sheet_png = video.contact_sheet_png
        document.metadata = {
            "fps": f"{video.info.fps:.3f}",
            "width": str(video.info.width),
            "height": str(video.info.height),
            "frames": str(video.info.frame_count),
            "codec": video.info.codec,
            "keyframe_scan": video.strategy,
        }
    elif family == "word":
        from ingest.word import read_docx

        document.kind = "word"
        read_docx(source, document, limits=limits)
    elif family == "text":
        from ingest.text import read_text_file

        document.kind = "text"
        read_text_file(source, document, limits=limits)
    elif family in ("email", "msg"):
        from ingest.email_read import read_email

        document.kind = "email"

        def load_attachment(path: Path) -> Document:
            # Attachments are read like any file (a scanned PDF is OCR'd), but without their own progress;
            # an e-mail inside an e-mail inside ... is read only so deep (each level is a recursion).
            if options.nesting >= limits.max_attachment_depth:
                raise CorruptFile(
                    f"{path.name}: attached inside {options.nesting} e-mails, deeper than Folio reads "
                    f"({limits.max_attachment_depth})"
                )
            return _load(path, _Options(None, limits, options.ocr, None, options.nesting + 1))

        read_email(source, document, outlook=family == "msg", limits=limits, load_attachment=load_attachment)


def _article(name: str) -> str:
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name
