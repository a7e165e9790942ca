"""Words a file holds where no reader of the page sees them, read out so the candidate finder can list
them: a comment's note, an attached file, the document properties, JavaScript, a bookmark, a marked-
content property (ActualText, Alt, E) and an earlier revision kept by an incremental update. The
text of the page itself that nobody sees (invisible, in a switched-off layer, outside the page) is read
by app/redaction/apply.py's `prepare` as it removes it; white text and text under a picture stay in
the page and are marked by app/redaction/pagetext.py.

Why list what is removed anyway: the copy loses all of it whatever the user decides (apply.py), but a
user who cannot see an address hidden in a note cannot know the original leaks it, nor check the
proof looks for it. A hidden place's candidate has no box: accepting it adds its words to what the
proof searches the copy for.

Everything here only reads the working copy (before `prepare` changes it) and the original's bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Where a candidate was found, as the candidate list says it ('' is on the page as shown).
WHITE_TEXT = "white text"
UNDER_IMAGE = "under an image"
INVISIBLE = "invisible text"
HIDDEN_LAYER = "in a hidden layer"
OFF_PAGE = "outside the page"
MARKED_TEXT = "in a marked-content property (ActualText, Alt)"
ANNOTATION = "in an annotation"
FORM_FIELD = "in a form field"
ATTACHED = "in an attached file"
PROPERTIES = "in the document properties"
XMP = "in the XMP metadata"
JAVASCRIPT = "in JavaScript"
BOOKMARK = "in a bookmark"
REVISION = "in an earlier revision"

FILE_PAGE = 0  # a place that belongs to the file, not to one page


@dataclass(frozen=True)
class HiddenText:
    page: int  # 1-based; FILE_PAGE for the file's own objects (properties, attachments, bookmarks)
    where: str  # one of the places above
    text: str  # lines joined by '\n', as page text is


def collect(doc: Any, original: bytes | None, password: str | None) -> list[HiddenText]:
    """Every hidden place's words in an unprepared working copy (and its earlier revisions, read from
    `original`, the file's bytes)."""
    found: list[HiddenText] = []
    found += _annotations(doc)
    found += _marked_text(doc)
    found += _file_objects(doc)
    if original is not None and int(doc.version_count) > 1:
        found += _revisions(doc, original, password)
    return [h for h in found if h.text.strip()]


def spans_text(spans: list[dict[str, Any]], keep: Any = None) -> str:
    """The characters of MuPDF text-trace spans as lines (a new line where the baseline moves, a space
    where a gap is wider than a quarter of the font size); `keep(char)` picks characters."""
    out: list[str] = []
    last: tuple[float, float, float] | None = None  # baseline y, right edge, size of the last char kept
    for span in spans:
        size = float(span.get("size", 10.0)) or 10.0
        for char in span["chars"]:
            if keep is not None and not keep(char):
                continue
            code, _glyph, origin, bbox = char[0], char[1], char[2], char[3]
            if last is not None:
                if abs(origin[1] - last[0]) > last[2] / 2:
                    out.append("\n")
                elif bbox[0] - last[1] > size / 4 and out and out[-1] != " ":
                    out.append(" ")
            out.append(chr(code) if code > 0 else "\ufffd")
            last = (origin[1], bbox[2], size)
    return "".join(out)


def _annotations(doc: Any) -> list[HiddenText]:
    """What annotations and form fields hold besides what they show: a comment's note, its author
    and subject, an attached file, a field's value. (What they show is baked into the page and read
    there; the candidate finder drops a hidden copy of words the page shows.)"""

    out: list[HiddenText] = []
    for page in doc:
        number = page.number + 1
        for annot in page.annots() or []:
            info = annot.info or {}
            words = [str(info.get(k) or "") for k in ("content", "title", "subject")]
            out.append(HiddenText(number, ANNOTATION, "\n".join(w for w in words if w)))
            if annot.type[1] == "FileAttachment":
                try:
                    out.append(HiddenText(number, ATTACHED, file_text(annot.get_file())))
                except Exception:  # a damaged attachment: nothing readable to list
                    continue
        for widget in page.widgets() or []:
            values = [widget.field_value, *(widget.choice_values or [])]
            out.append(HiddenText(number, FORM_FIELD, "\n".join(str(v) for v in values if v not in (None, ""))))
    return out


def _marked_text(doc: Any) -> list[HiddenText]:
    """ActualText, Alt and E of marked content: in a page's content streams or its forms (that page),
    or in a property list kept as an object (the file)."""
    from app.redaction.pdf_strings import marked_strings

    out: list[HiddenText] = []
    seen: set[int] = set()
    for page in doc:
        streams = list(page.get_contents())
        streams += [x[0] for x in page.get_xobjects() if x[0] > 0 and _is_form(doc, x[0])]
        texts = []
        for xref in streams:
            seen.add(xref)
            texts += [pdf_text(s) for s in marked_strings(doc.xref_stream(xref) or b"")]
        out.append(HiddenText(page.number + 1, MARKED_TEXT, "\n".join(texts)))
    for xref in range(1, doc.xref_length()):
        if xref in seen:
            continue
        try:
            if doc.xref_is_stream(xref):
                continue
            keys: list[tuple[str, str]] = [tuple(doc.xref_get_key(xref, k)) for k in ("ActualText", "Alt", "E")]
        except Exception:  # a damaged object holds nothing we can read
            continue
        out.append(HiddenText(FILE_PAGE, MARKED_TEXT, "\n".join(value for kind, value in keys if kind == "string")))
    return out


def _is_form(doc: Any, xref: int) -> bool:
    try:
        return bool(doc.xref_get_key(xref, "Subtype")[1] == "/Form")
    except Exception:  # a damaged object is not a form we can read
        return False


def _file_objects(doc: Any) -> list[HiddenText]:
    """The document properties, XMP, attached files (with their names and descriptions), JavaScript
    and bookmark titles."""
    out: list[HiddenText] = []
    meta = doc.metadata or {}
    out.append(HiddenText(FILE_PAGE, PROPERTIES, "\n".join(str(v) for k, v in meta.items() if v and k != "format")))
    xmp = doc.get_xml_metadata() or ""
    out.append(HiddenText(FILE_PAGE, XMP, re.sub(r"<[^>]*>", "\n", xmp)))
    for name in doc.embfile_names():
        try:
            info = doc.embfile_info(name)
            words = [str(info.get(k) or "") for k in ("filename", "ufilename", "desc")]
            out.append(HiddenText(FILE_PAGE, ATTACHED, "\n".join([*words, file_text(doc.embfile_get(name))])))
        except Exception:  # a damaged attachment: nothing readable to list
            continue
    scripts = []
    for xref in range(1, doc.xref_length()):
        try:
            kind, value = doc.xref_get_key(xref, "JS")
            if kind == "string":
                scripts.append(value)
            elif kind == "xref":
                script = doc.xref_stream(int(value.split()[0])) or b""
                scripts.append(script.decode("utf-8", "replace"))
        except Exception:  # a damaged object holds nothing we can read
            continue
    out.append(HiddenText(FILE_PAGE, JAVASCRIPT, "\n".join(scripts)))
    out.append(HiddenText(FILE_PAGE, BOOKMARK, "\n".join(str(t[1]) for t in doc.get_toc(simple=True))))
    return out


def _revisions(doc: Any, original: bytes, password: str | None) -> list[HiddenText]:
    """The lines of each earlier revision's pages that the file's last revision no longer prints.

    MuPDF counts a file's revisions (`version_count`) but opens only the last; an earlier one is the
    file up to that revision's end-of-file marker, which MuPDF opens as a PDF of its own."""
    import pymupdf

    ends = [m.end() for m in re.finditer(rb"%%EOF", original)]
    earlier = ends[-int(doc.version_count) : -1]
    now = {line.strip() for page in doc for line in page.get_text().splitlines()}
    out: list[HiddenText] = []
    for end in earlier:
        try:
            old: Any = pymupdf.open(stream=original[:end], filetype="pdf")
        except Exception:  # a revision MuPDF cannot open on its own: nothing to read in it
            continue
        try:
            if old.needs_pass and not old.authenticate(password or ""):
                continue
            for page in old:
                lines = [line for line in page.get_text().splitlines() if line.strip() and line.strip() not in now]
                out.append(HiddenText(page.number + 1, REVISION, "\n".join(lines)))
        finally:
            old.close()
    return out


def file_text(data: bytes) -> str:
    """An attached file's words: a PDF's text, or the bytes of a text file; nothing for other files."""
    import pymupdf

    if data.startswith(b"%PDF"):
        try:
            with pymupdf.open(stream=data, filetype="pdf") as attached:
                return "\n".join(attached[i].get_text() for i in range(attached.page_count))
        except Exception:  # an attached PDF MuPDF cannot open: nothing readable
            return ""
    sample = data[:4096]
    if sum(b < 9 or 13 < b < 32 for b in sample) > len(sample) // 10:
        return ""  # not text (a picture, a Word file): not read
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def pdf_text(data: bytes) -> str:
    """A PDF text string's bytes as text: UTF-16 when its mark says so, else PDFDocEncoding (read as
    Latin-1, which agrees with it on every letter and digit)."""
    if data.startswith(b"\xfe\xff"):
        return data[2:].decode("utf-16-be", "replace")
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", "replace")
    return data.decode("latin-1")
