"""The redline (with its summary, when one was written) as a PDF and as a Word document.

The PDF is the Markdown typeset, deletions struck through in red and insertions in bold green. The
Word document holds the same header and summary, then the new version's whole text with every change
as a real tracked change (w:ins / w:del, author "Folio compare"): Word and LibreOffice show them as
revisions, and accepting them all gives the new version. A moved clause carries a comment saying where
it was (Word's own move marks would need the old place kept too).
"""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.compare.markdown import NOTE, change_text, summary, to_markdown
from app.compare.redline import Redline
from app.compare.tracked import tracked_paragraphs

if TYPE_CHECKING:
    from app.compare.summary import Summary

AUTHOR = "Folio compare"
FORMATS = ("md", "pdf", "docx")
_PDF_CSS = "s { color: #b00000; } strong { color: #006000; }"
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # characters an XML document cannot hold


def redline_bytes(fmt: str, redline: Redline, written: Summary | None = None) -> bytes:
    if fmt == "pdf":
        return redline_pdf(redline, written)
    if fmt == "docx":
        return redline_docx(redline, written)
    return to_markdown(redline, written).encode("utf-8")


def redline_pdf(redline: Redline, written: Summary | None = None) -> bytes:
    from app.export import html_pdf, markdown_html

    return html_pdf(markdown_html(to_markdown(redline, written), strikethrough=True), _PDF_CSS)


def redline_docx(redline: Redline, written: Summary | None = None) -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.author = AUTHOR
    document.add_heading(_xml(f"Redline: {redline.old.title} → {redline.new.title}"), level=0)
    document.add_paragraph(_xml(f"Old: {redline.old.reference} {redline.old.title}"))
    document.add_paragraph(_xml(f"New: {redline.new.reference} {redline.new.title}"))
    document.add_paragraph(summary(redline))
    document.add_paragraph(NOTE)
    if written is not None:
        _summary(document, redline, written)
    document.add_heading("The new version, every change tracked", level=1)
    stamp = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    revision = 0
    for pieces in tracked_paragraphs(redline):
        paragraph = document.add_paragraph()
        for n, piece in enumerate(pieces):
            if n and piece.kind != "note":
                paragraph.add_run(" ")  # between pieces, outside any revision
            if piece.kind == "same":
                paragraph.add_run(_xml(piece.text))
            elif piece.kind == "note":  # a comment, not text: accepting every change still gives the new version
                anchor = paragraph.runs[-1] if paragraph.runs else paragraph.add_run("")
                document.add_comment(anchor, text=_xml(piece.text), author=AUTHOR, initials="FC")
            else:
                revision += 1
                _tracked(paragraph, piece.kind, _xml(piece.text), revision, stamp)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _summary(document: Any, redline: Redline, written: Summary) -> None:
    from app.citations.verdicts import mark

    document.add_heading("Summary of the material changes", level=1)
    document.add_paragraph(_xml(f"Written by {written.model_label}. D1 is the old version, D2 the new one."))
    if written.note:
        document.add_paragraph(written.note)
    for part in written.parts:
        if part.title:
            document.add_heading(_xml(part.title), level=2)
        for line in part.text.splitlines():
            if line.strip():
                document.add_paragraph(_xml(line))
        for claim in part.claims:
            shown = mark(claim, 2)
            if shown is not None:
                document.add_paragraph(_xml(f"{shown}: {' '.join(str(claim['text']).split())}"), style="List Bullet")
    other = written.other(redline)
    document.add_heading("Other changes", level=1)
    document.add_paragraph(f"{len(other)} of the {len(redline.changes)} changes are not mentioned above.")
    for k in other:
        document.add_paragraph(_xml(change_text(redline.changes[k])), style="List Bullet")


def _tracked(paragraph: Any, kind: str, text: str, revision: int, stamp: str) -> None:
    """A run inside w:ins or w:del: a revision Word shows, accepts and rejects (python-docx has no API)."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    wrapper = OxmlElement("w:ins" if kind == "inserted" else "w:del")
    wrapper.set(qn("w:id"), str(revision))
    wrapper.set(qn("w:author"), AUTHOR)
    wrapper.set(qn("w:date"), stamp)
    run = OxmlElement("w:r")
    body = OxmlElement("w:t" if kind == "inserted" else "w:delText")
    body.set(qn("xml:space"), "preserve")
    body.text = text
    run.append(body)
    wrapper.append(run)
    paragraph._p.append(wrapper)


def _xml(text: str) -> str:
    return _NOT_XML.sub("", text)
