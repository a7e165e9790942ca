"""The proof: the written copy opened again and searched for everything that was redacted.

What is checked, page by page, for every redacted string:
- the text layer as PyMuPDF reads it (text outside the page's box included), and that no character
  is left under an area that was redacted;
- the text layer as pypdf reads it (another parser: it reads hidden layers and ignores MuPDF's
  clipping, so text one reader misses the other finds);
- the pictures, by OCR of the written page, on pages that had pictures where something was redacted;
- every object outside the pages' text: the document information, XMP, annotations, attached files,
  form fields, JavaScript, marked-content properties (ActualText, Alt), bookmarks, and any string or
  stream an earlier revision would have left;
- that the file has one revision, no annotations, no attached files, no metadata, no JavaScript.

A redacted string may rightly appear elsewhere: an occurrence the user rejected, or the label on a box
('Redacted: personal data' when 'data' was a term). So each reader may find a string as often as it
occurs in the working copy outside the redacted areas, plus in the labels on that page, and no more.
Anything beyond that is a survivor: the export fails with one line naming the page, and nothing is
kept. The result names what was looked at; it never holds the redacted text itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.errors import FolioError
from app.redaction.candidates import HIDDEN, KIND_NAMES, Candidate
from app.redaction.pagetext import PageText, Rect, normal, overlaps, read_page, render_area

if TYPE_CHECKING:
    from ingest.ocr import OcrEngine

PYMUPDF = "PyMuPDF text"
PYPDF = "pypdf text"
OCR_CHECK = "OCR of pictures"
UNDER_BOXES = "characters under the boxes"
OBJECTS = "metadata, annotations, attachments and other objects"
LABEL_RGB = 0xFFFFFF  # apply.LABEL_COLOUR as MuPDF reports a span's colour
STRUCTURE = "file structure"


class RedactionFailed(FolioError):
    """Something redacted can still be found in the written copy: it was not kept."""


@dataclass(frozen=True)
class Survivor:
    page: int  # 0: not on a page (an object of the file)
    kind: str  # the candidate kind whose words were found ('' for a structural finding)
    check: str  # which reader found it
    extra: int = 1  # how many more than the occurrences left on purpose

    def line(self) -> str:
        what = KIND_NAMES.get(self.kind, "redacted text") if self.kind else "the file"
        where = f"page {self.page}" if self.page else "the file"
        return f"{where}: {what} can still be found ({self.check})"


@dataclass
class Proof:
    checks: list[str] = field(default_factory=list)  # what was looked at, in words
    survivors: list[Survivor] = field(default_factory=list)
    strings: int = 0  # distinct redacted strings looked for
    pages: int = 0
    ocr_pages: list[int] = field(default_factory=list)
    ocr_missing: bool = False  # pictures were there but no OCR engine could read them

    @property
    def ok(self) -> bool:
        return not self.survivors

    def summary(self) -> str:
        if not self.ok:
            first = self.survivors[0].line()
            more = f" (and {len(self.survivors) - 1} more)" if len(self.survivors) > 1 else ""
            return f"{first}{more}"
        return f"nothing redacted can be found: checked {'; '.join(self.checks)}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checks": self.checks,
            "strings": self.strings,
            "pages": self.pages,
            "ocr_pages": self.ocr_pages,
            "ocr_missing": self.ocr_missing,
            "survivors": [{"page": s.page, "kind": s.kind, "check": s.check, "extra": s.extra} for s in self.survivors],
        }


# -- matching the same words whatever reads them --------------------------------------------------
def flatten(text: str) -> tuple[str, list[int]]:
    """Text with a line-end hyphen joined ('confiden-\\ntial') and line breaks as spaces, and where
    each of its characters came from in `text`."""
    out: list[str] = []
    where: list[int] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "-" and text[i + 1 : i + 2] == "\n" and out and out[-1].isalpha():
            i += 2
            continue
        out.append(" " if ch in "\n\r\t" else normal(ch))
        where.append(i)
        i += 1
    return "".join(out), where


def proof_pattern(words: str) -> re.Pattern[str] | None:
    """The redacted words as any reader may give them back: any case, anything but letters and digits
    between them (spaces, a line break, no space at all), whole words."""
    tokens = re.findall(r"[^\W_]+", normal(words).lower())
    if not tokens:
        return None
    body = r"[\W_]*".join(re.escape(t) for t in tokens)
    return re.compile(rf"(?<![^\W_]){body}(?![^\W_])", re.IGNORECASE)


@dataclass(frozen=True)
class Sought:
    kind: str
    pattern: re.Pattern[str]


def sought(accepted: Iterable[Candidate]) -> list[Sought]:
    """Each distinct redacted string once (the first kind it was accepted as names it)."""
    seen: dict[str, Sought] = {}
    for c in accepted:
        pattern = proof_pattern(c.text)
        if pattern is not None and pattern.pattern not in seen:
            seen[pattern.pattern] = Sought(c.kind, pattern)
    return list(seen.values())


def allowed_counts(
    pages: Sequence[PageText], accepted: Sequence[Candidate], strings: list[Sought]
) -> dict[tuple[int, int], int]:
    """(page, string index) -> how often a reader may still find the string on the page: as often as the
    working copy prints it there, less the occurrences accepted for removal (each place once, however
    many kinds claimed it), plus the labels drawn on that page that spell it."""
    index = {s.pattern.pattern: k for k, s in enumerate(strings)}
    removed: dict[tuple[int, int], set[tuple[int, int]]] = {}
    labels: dict[int, list[str]] = {}
    for c in accepted:
        pattern = proof_pattern(c.text)
        if pattern is not None and c.via != HIDDEN:  # a hidden place's words are not in the page's text
            removed.setdefault((c.page, index[pattern.pattern]), set()).add(c.span)
        labels.setdefault(c.page, []).extend([c.label] * len(c.boxes))
    allowed: dict[tuple[int, int], int] = {}
    for page in pages:
        flat, _where = flatten(page.text)
        label_text = " | ".join(labels.get(page.number, []))
        for k, s in enumerate(strings):
            left = len(s.pattern.findall(flat)) - len(removed.get((page.number, k), ()))
            n = max(0, left) + len(s.pattern.findall(label_text))
            if n:
                allowed[(page.number, k)] = n
    return allowed


# -- the proof ---------------------------------------------------------------------------------------
def prove(
    path: str,
    pages: Sequence[PageText],
    accepted: Sequence[Candidate],
    *,
    ocr: OcrEngine | None,
    progress: Any = None,
) -> Proof:
    """Open the written file anew and look for every redacted string in it."""
    import pymupdf

    proof = Proof(pages=len(pages))
    strings = sought(accepted)
    proof.strings = len(strings)
    allowed = allowed_counts(pages, accepted, strings)
    doc = pymupdf.open(path)
    try:
        _structure(doc, proof)
        _objects(doc, strings, proof)
        by_page: dict[int, list[Candidate]] = {}
        for c in accepted:
            by_page.setdefault(c.page, []).append(c)
        reader = _pypdf_reader(path)
        for page_text in pages:
            number = page_text.number
            page = doc[number - 1]
            if progress is not None:
                progress(number, len(pages))
            here = by_page.get(number, [])
            _under_boxes(page, here, proof)
            mupdf_text = page.get_text("text", flags=pymupdf.TEXT_PRESERVE_WHITESPACE)
            _count(mupdf_text, strings, allowed, number, PYMUPDF, proof)
            _count(_pypdf_text(reader, number), strings, allowed, number, PYPDF, proof)
            if page_text.pictures and (here or _occurs(page_text, strings)):
                if ocr is None:
                    proof.ocr_missing = True
                else:
                    seen = _ocr_text(page, page_text.pictures, ocr)
                    _count(seen, strings, allowed, number, OCR_CHECK, proof)
                    proof.ocr_pages.append(number)
    finally:
        doc.close()
    proof.checks = _checked(proof)
    return proof


def _checked(proof: Proof) -> list[str]:
    checks = [
        f"{proof.strings} redacted string(s) on {proof.pages} page(s) in the text read by PyMuPDF and by pypdf",
        "no character left under a box",
        "no metadata, XMP, annotations, form fields, attached files or JavaScript; one revision",
    ]
    if proof.ocr_pages:
        checks.append(f"OCR of the pictures on page(s) {', '.join(map(str, proof.ocr_pages))}")
    if proof.ocr_missing:
        checks.append("pictures NOT read by OCR: no OCR engine is available")
    return checks


def _structure(doc: Any, proof: Proof) -> None:
    from app.redaction.apply import _has_javascript

    problems = []
    if int(doc.version_count) > 1:
        problems.append("earlier revisions")
    if any(page.first_annot is not None or page.first_widget is not None for page in doc):
        problems.append("annotations")
    if doc.embfile_count():
        problems.append("attached files")
    if any(v for k, v in (doc.metadata or {}).items() if k not in ("format", "encryption")):
        problems.append("metadata")
    if doc.get_xml_metadata():
        problems.append("XMP metadata")
    if _has_javascript(doc):
        problems.append("JavaScript")
    for problem in problems:
        proof.survivors.append(Survivor(0, "", f"{STRUCTURE}: {problem} left"))


_STRING_RE = re.compile(rb"\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f\s]+>")
_MARKED_RE = re.compile(rb"/(?:ActualText|Alt|E)\s*(\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f\s]*>)")
_SKIPPED_STREAMS = ("/Image", "/Font", "/FontFile", "/FontFile2", "/FontFile3", "/XRef", "/ObjStm")


def _objects(doc: Any, strings: list[Sought], proof: Proof) -> None:
    """Every object's strings, and the streams that are not page text, fonts or pictures."""
    import pymupdf

    found: dict[str, int] = {}
    contents = {x for page in doc for x in page.get_contents()}
    for xref in range(1, doc.xref_length()):
        try:
            source = doc.xref_object(xref, compressed=False).encode("latin-1", "replace")
            texts = [_pdf_string(m.group(0)) for m in _STRING_RE.finditer(source)]
            if doc.xref_is_stream(xref):
                kind = doc.xref_get_key(xref, "Subtype")[1] if "/Subtype" in source.decode("latin-1") else ""
                kind = kind or doc.xref_get_key(xref, "Type")[1]
                data = doc.xref_stream(xref) or b""
                if xref in contents or kind == "/Form":
                    # page text is counted page by page; what hides in marked-content properties is not
                    texts += [_pdf_string(m.group(1)) for m in _MARKED_RE.finditer(data)]
                elif kind not in _SKIPPED_STREAMS and not _looks_binary(data):
                    texts.append(data.decode("utf-8", "replace"))
        except (pymupdf.FileDataError, RuntimeError, ValueError):
            continue
        blob = normal(" | ".join(texts))
        for s in strings:
            if s.pattern.search(blob):
                found[s.kind] = found.get(s.kind, 0) + 1
    for kind, n in found.items():
        proof.survivors.append(Survivor(0, kind, f"in {n} object(s) of the file", n))


def _looks_binary(data: bytes) -> bool:
    sample = data[:4096]
    return bool(sample) and sum(b < 9 or 13 < b < 32 for b in sample) > len(sample) // 10


def _pdf_string(raw: bytes) -> str:
    """A PDF string as text: literal (escapes undone) or hex, UTF-16 when it says so."""
    if raw.startswith(b"<"):
        digits = re.sub(rb"\s", b"", raw[1:-1])
        data = bytes.fromhex((digits + b"0" * (len(digits) % 2)).decode())
    else:
        body = raw[1:-1]
        data = re.sub(
            rb"\\([0-7]{1,3}|.)",
            lambda m: (
                bytes([int(m.group(1), 8) & 0xFF])
                if m.group(1)[:1].isdigit()
                else {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}.get(m.group(1), m.group(1))
            ),
            body,
            flags=re.S,
        )
    if data.startswith(b"\xfe\xff"):
        return data[2:].decode("utf-16-be", "replace")
    return data.decode("latin-1")


def _under_boxes(page: Any, redacted: list[Candidate], proof: Proof) -> None:
    """No character (but a label's) may touch an area whose text was removed."""
    import pymupdf

    if not redacted:
        return
    raw = page.get_text("rawdict", flags=pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_ACCURATE_BBOXES)
    for block in raw["blocks"]:
        for line in block.get("lines", []):
            for span in line["spans"]:
                if span.get("color") == LABEL_RGB and "helvetica" in str(span.get("font", "")).lower():
                    continue  # a label drawn on a box (white Helvetica: what was under it is gone)
                for ch in span["chars"]:
                    if ch["c"].isspace():
                        continue
                    box: Rect = (ch["bbox"][0], ch["bbox"][1], ch["bbox"][2], ch["bbox"][3])
                    hit = next((c for c in redacted for ink in c.ink if overlaps(box, ink)), None)
                    if hit is not None:
                        proof.survivors.append(Survivor(page.number + 1, hit.kind, UNDER_BOXES))
                        return


def _count(
    text: str, strings: list[Sought], allowed: dict[tuple[int, int], int], number: int, check: str, proof: Proof
) -> None:
    flat, _where = flatten(text)
    for k, s in enumerate(strings):
        n = len(s.pattern.findall(flat))
        extra = n - allowed.get((number, k), 0)
        if extra > 0:
            proof.survivors.append(Survivor(number, s.kind, check, extra))


def _occurs(page: PageText, strings: list[Sought]) -> bool:
    flat, _where = flatten(page.text)
    return any(s.pattern.search(flat) for s in strings)


def _ocr_text(page: Any, pictures: list[Rect], ocr: OcrEngine) -> str:
    lines = []
    for area in pictures:
        image, _back = render_area(page, area)
        lines += [line.text for line in ocr.read(image)]
    return "\n".join(lines)


def _pypdf_reader(path: str) -> Any:
    import logging

    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings about odd fonts are not ours to show
    return PdfReader(path)


def _pypdf_text(reader: Any, number: int) -> str:
    try:
        return str(reader.pages[number - 1].extract_text() or "")
    except Exception as exc:  # pypdf cannot read what MuPDF wrote: say so rather than pass unchecked
        raise RedactionFailed(f"page {number}: pypdf cannot read the redacted copy ({exc}); nothing was saved") from exc


def read_pages(doc: Any, ocr: OcrEngine | None, progress: Any = None) -> list[PageText]:
    """Every page's text (and its pictures' words, with an OCR engine) of a prepared working copy."""
    out = []
    for index in range(doc.page_count):
        if progress is not None:
            progress(index + 1, doc.page_count)
        out.append(read_page(doc[index], ocr, number=index + 1))
    return out
