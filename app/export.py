"""Work product out of Folio: extraction tables (CSV, XLSX, JSON), conversations (Markdown, PDF), redlines
(Markdown, PDF, .docx), checks (findings as JSON or CSV, key dates as an .ics calendar or CSV) and
(through `Exporter.checked`) redacted copies that must pass a check before they are kept.

Every export names the documents with their sha256 and the model with its sha256, so a reader can
tell exactly what was read by what. Files are written atomically and never replace an existing
file unless the caller says so (the CLI's --force, the window's "Replace?" question). Every export
is recorded in the audit log.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import os
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import __version__
from app.clock import now_iso
from app.errors import FolioError
from app.store.audit import audited_settings
from common.files import atomic_write_bytes, synced_temp

if TYPE_CHECKING:
    from app.checks.report import CheckReport, Finding
    from app.compare.redline import Redline
    from app.compare.summary import Summary
    from app.compare.tracked import Paragraph
    from app.context import AppContext
    from app.extraction.review import Review
    from app.extraction.runner import Cell, ExtractionTable
    from app.playbook.report import TextBlock
    from app.playbook.review import PlaybookReview
    from app.store.conversations import ConversationRow, MessageRow

TABLE_FORMATS = ("csv", "xlsx", "json")
CONVERSATION_FORMATS = ("md", "pdf")
MAX_NAME_CHARS = 120
_WINDOWS_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}
# Column suffixes of the wide CSV: one group of columns per field. The model's answer and its
# evidence come first; a reviewer's decision and value stand beside them, never in their place.
CSV_PARTS = ("", " | check", " | confidence", " | quote", " | where", " | flags", " | review", " | reviewed value")
# What makes a spreadsheet read a cell as a formula (OWASP, CSV injection): '=HYPERLINK(...)' in a
# contract or in a model's answer must not run when the table is opened.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class ExportResult:
    path: Path
    fmt: str
    sha256: str
    size_bytes: int


class FileExists(FolioError):
    pass


# -- files ---------------------------------------------------------------------------------------
def safe_filename(name: str, extension: str) -> str:
    """A file name that is valid on Windows, macOS and Linux, made from a title."""
    text = unicodedata.normalize("NFKC", name)
    text = re.sub(r'[<>:"/\\|?*\x00-\x1f\x7f]+', " ", text)
    text = " ".join(text.split()).strip(" .")
    text = text[:MAX_NAME_CHARS].rstrip(" .")
    if not text or text.split(".")[0].lower() in _WINDOWS_RESERVED:
        text = f"folio-{text}" if text else "folio-export"
    return f"{text}.{extension.lstrip('.')}"


def write_new(path: Path, data: bytes, *, overwrite: bool = False) -> None:
    """Write a whole file atomically; refuse to replace an existing one unless overwrite is set."""
    if overwrite:
        atomic_write_bytes(path, data)
        return
    if path.exists():
        raise FileExists(f"{path} already exists; choose another name or replace it (--force)")
    tmp = synced_temp(path, data)
    try:
        place(tmp, path, overwrite=False)
    finally:
        tmp.unlink(missing_ok=True)


def place(tmp: Path, path: Path, *, overwrite: bool) -> None:
    """Put a finished temp file (beside `path`) in place: a rename over the old file when replacing
    it, else a hard link that fails if the name appeared meanwhile (never a silent replace)."""
    if overwrite:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except FileExistsError as exc:
        raise FileExists(f"{path} already exists; choose another name or replace it (--force)") from exc
    except OSError:
        if path.exists():  # a file system without hard links (FAT on a USB stick)
            raise FileExists(f"{path} already exists; choose another name or replace it (--force)") from None
        os.replace(tmp, path)


def format_of(path: Path, allowed: tuple[str, ...], fmt: str | None = None) -> str:
    chosen = (fmt or path.suffix.lstrip(".")).lower()
    if chosen == "markdown":
        chosen = "md"
    if chosen not in allowed:
        raise FolioError(f"cannot export to {path.name}: use one of {', '.join('.' + a for a in allowed)}")
    return chosen


# -- extraction tables ---------------------------------------------------------------------------
def cell_status(cell: Cell | None) -> str:
    """What was checked about a cell, in words: its grounding verdict, or why it has no value."""
    from app.extraction.cells import BAD_OUTPUT, CUT_OFF

    if cell is None:
        return "pending"
    if not cell.found:
        if set(cell.flags) & {CUT_OFF, BAD_OUTPUT}:
            return "no answer"
        return "absent" if cell.yes_no else "not stated"
    return cell.verdict_text or "unchecked"


def review_columns(review: Review | None, cell: Cell | None) -> list[str]:
    """The reviewer's decision and the value it leaves (a correction, the accepted answer, or none)."""
    if review is None:
        return ["", ""]
    return [review.decision, review.final_value(cell.display if cell is not None else "")]


def _table_meta(table: ExtractionTable) -> dict[str, Any]:
    run = table.run
    return {
        "run_id": run.id,
        "template": run.template.key,
        "template_name": run.template.name,
        "template_version": run.template.version,
        "template_sha256": run.template_sha256,
        "model": run.model,
        "model_sha256": run.model_sha256,
        "design": run.design,
        "matter": run.matter,
        "created_at": run.created_at,
        "exported_at": now_iso(),
        "folio_version": __version__,
        "settings": run.settings,
    }


def table_json(table: ExtractionTable) -> bytes:
    payload = {
        "run": _table_meta(table),
        "fields": [{"key": f.key, "name": f.name, "description": f.description} for f in table.fields],
        "documents": [
            {"id": d.id, "title": d.title, "sha256": d.sha256, "source_path": d.source_path} for d in table.documents
        ],
        "cells": [
            cell.to_dict()
            | {
                "status": cell_status(cell),
                "confidence_word": cell.sureness,
                "review": _review_dict(table.review(d.id, f.key)),
            }
            for d in table.documents
            for f in table.fields
            if (cell := table.cell(d.id, f.key)) is not None
        ],
    }
    return (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _review_dict(review: Review | None) -> dict[str, Any] | None:
    return dataclasses.asdict(review) if review is not None else None


def looks_like_formula(text: str) -> bool:
    return text.startswith(FORMULA_STARTS)


def csv_text(text: str) -> str:
    """OWASP's rule for CSV: a leading apostrophe marks the cell as text, so no spreadsheet runs it as a
    formula; the text itself is kept as it was."""
    return "'" + text if looks_like_formula(text) else text


def confidence_text(cell: Cell | None) -> str:
    """'check (0.64)': the decision's confidence in a word and its number; '' when it was not scored."""
    if cell is None or cell.confidence is None:
        return ""
    return f"{cell.sureness} ({cell.confidence:.2f})"


def _cell_columns(cell: Cell | None, review: Review | None) -> list[str]:
    if cell is None:
        return ["", "pending", "", "", "", "", *review_columns(review, cell)]
    return [
        cell.display,
        cell_status(cell),
        confidence_text(cell),
        cell.quote,
        cell.anchor_text,
        ";".join(cell.flags),
        *review_columns(review, cell),
    ]


def table_csv(table: ExtractionTable) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    header = ["Document", "Document sha256", *(f.name + part for f in table.fields for part in CSV_PARTS)]
    writer.writerow([csv_text(h) for h in header])  # field names come from user templates
    for d in table.documents:
        row = [d.title, d.sha256]
        for f in table.fields:
            row += _cell_columns(table.cell(d.id, f.key), table.review(d.id, f.key))
        writer.writerow([csv_text(value) for value in row])
    return _csv_bytes(out)


def _text_cell(ws: Any, row: int, column: int, value: Any) -> Any:
    cell = ws.cell(row=row, column=column, value=value)
    if isinstance(value, str):
        cell.data_type = "s"  # stored as text: never a formula, whatever the document says ('=HYPERLINK(...)')
        if looks_like_formula(value):
            # Excel's own "text" mark (the apostrophe it shows in the formula bar): editing the cell
            # keeps it text too, and the value shown stays exactly the document's words.
            cell.quotePrefix = True
    return cell


def _xlsx_note(cell: Cell, review: Review | None) -> str:
    if not cell.found:
        note = f"no answer: {', '.join(cell.flags)}" if cell.flags else cell_status(cell)
    else:
        note = f'"{cell.quote}" {cell.anchor_text}\n{cell_status(cell)}'
        note += f" ({', '.join(cell.flags)})" if cell.flags else ""
    if cell.confidence is not None:
        note += f"\nconfidence: {confidence_text(cell)}"
    if review is not None:
        note += f"\nreview: {review.decision} by {review.reviewer} {review.at}"
        if review.decision == "corrected":
            note += f": {review.value}"
    return note


def table_xlsx(table: ExtractionTable) -> bytes:
    from openpyxl import Workbook
    from openpyxl.comments import Comment
    from openpyxl.styles import Alignment, Font, PatternFill

    from app.extraction.cells import ADDED, PARTLY, SUPPORTED, UNSUPPORTED, WRONG_PAGE

    fills = {
        "bad": PatternFill("solid", fgColor="F8D7DA"),
        "elsewhere": PatternFill("solid", fgColor="FFF3CD"),
        "missing": PatternFill("solid", fgColor="E9ECEF"),
        "reviewed": PatternFill("solid", fgColor="D1E7DD"),
    }
    bold = Font(bold=True)
    wb = Workbook()
    ws = wb.active
    ws.title = "Table"
    reviewed = wb.create_sheet("Reviewed")  # the values in force after review, beside the model's (Table)
    for sheet in (ws, reviewed):
        for col, head in enumerate(["Document", "Document sha256", *(f.name for f in table.fields)], start=1):
            _text_cell(sheet, 1, col, head).font = bold
    for r, d in enumerate(table.documents, start=2):
        for sheet in (ws, reviewed):
            _text_cell(sheet, r, 1, d.title)
            _text_cell(sheet, r, 2, d.sha256)
        for c, f in enumerate(table.fields, start=3):
            cell = table.cell(d.id, f.key)
            review = table.review(d.id, f.key)
            target = _text_cell(ws, r, c, cell.display if cell else "")
            target.alignment = Alignment(wrap_text=True, vertical="top")
            final = review.final_value(cell.display if cell else "") if review else (cell.display if cell else "")
            after = _text_cell(reviewed, r, c, final)
            after.alignment = Alignment(wrap_text=True, vertical="top")
            if review is not None:
                after.fill = fills["reviewed"] if review.decision != "rejected" else fills["bad"]
                after.comment = Comment(f"{review.decision} by {review.reviewer} {review.at}", "Folio")
            if cell is None:
                target.fill = fills["missing"]
                continue
            target.comment = Comment(_xlsx_note(cell, review), "Folio")
            if not cell.found:
                target.fill = fills["bad"] if cell.flags else fills["missing"]
            elif cell.verdict == UNSUPPORTED:
                target.fill = fills["bad"]
            elif cell.verdict in (SUPPORTED, WRONG_PAGE, ADDED, PARTLY):
                target.fill = fills["elsewhere"]
    for sheet in (ws, reviewed):
        sheet.freeze_panes = "C2"
        sheet.column_dimensions["A"].width = 32
    ev = wb.create_sheet("Evidence")
    heads = ["Document", "Document sha256", "Field key", "Field", "Found", "Value", "Check", "Quote", "Where",
             "Page", "Label", "Time (s)", "Passage", "Quote score", "Flags", "Review", "Reviewed value", "Reviewer",
             "Reviewed at", "Confidence", "Confidence (number)", "P(yes)", "Line", "Decided by"]  # fmt: skip
    for col, head in enumerate(heads, start=1):
        _text_cell(ev, 1, col, head).font = bold
    row = 2
    for d in table.documents:
        for f in table.fields:
            cell = table.cell(d.id, f.key)
            if cell is None:
                continue
            review = table.review(d.id, f.key)
            values = [d.title, d.sha256, f.key, f.name, cell.found, cell.display, cell_status(cell), cell.quote,
                      cell.anchor_text, cell.page, cell.label, cell.t_seconds, cell.passage, cell.quote_score,
                      ";".join(cell.flags), *review_columns(review, cell),
                      review.reviewer if review else "", review.at if review else "", cell.sureness,
                      cell.confidence, cell.score, cell.threshold, cell.decided_by]  # fmt: skip
            for col, value in enumerate(values, start=1):
                _text_cell(ev, row, col, value)
            row += 1
    ev.freeze_panes = "A2"
    about = wb.create_sheet("Run")
    meta = _table_meta(table)
    meta["settings"] = json.dumps(meta["settings"])
    for r, (key, value) in enumerate(meta.items(), start=1):
        _text_cell(about, r, 1, key).font = bold
        _text_cell(about, r, 2, value)
    r = len(meta) + 2
    _text_cell(about, r, 1, "Documents").font = bold
    for i, d in enumerate(table.documents, start=r + 1):
        _text_cell(about, i, 1, d.title)
        _text_cell(about, i, 2, d.sha256)
        _text_cell(about, i, 3, d.source_path)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


# -- conversations -------------------------------------------------------------------------------
def _citation_note(c: dict[str, Any]) -> str:
    # A page that exists is not a check of what the sentence says: that is the claim's verdict below.
    parts = [c["text"]]
    parts.append("page exists" if c.get("valid") else "page not in the document")
    if c.get("quote_found") is True:
        parts.append("quote found")
    elif c.get("quote_found") is False:
        parts.append("quote NOT found")
    return " - ".join(parts)


def _claim_notes(m: MessageRow, documents: int) -> list[tuple[str, str, str]]:
    """(mark, sentence, what was checked) for every claim that gets a mark."""
    from app.citations.verdicts import explain, mark

    out = []
    for c in m.claims:
        shown = mark(c, documents)
        if shown is not None:
            out.append((shown, " ".join(str(c["text"]).split()), explain(c, documents)))
    return out


@dataclass(frozen=True)
class ConversationExport:
    conversation: ConversationRow
    messages: list[MessageRow]
    documents: list[tuple[str, str, str]]  # title, sha256, source path
    exported_at: str
    matter: str = ""  # the name of the matter the conversation belongs to

    @property
    def models(self) -> list[tuple[str, str]]:
        seen: dict[str, str] = {}
        for m in self.messages:
            if m.model and m.model_sha256:
                seen.setdefault(m.model_sha256, m.model)
        return [(label, sha) for sha, label in seen.items()]


def load_conversation(ctx: AppContext, conversation_id: int) -> ConversationExport:
    from app.store.conversations import Conversations

    convs = Conversations(ctx.db)
    conv = convs.get(conversation_id)
    docs = []
    for doc_id in conv.document_ids:
        d = ctx.library.get(doc_id)
        docs.append((d.title, d.sha256, d.source_path))
    matter = ""
    if conv.matter_id is not None:
        from app.store.matters import Matters

        matter = Matters(ctx.db).by_id(conv.matter_id).name
    return ConversationExport(conv, convs.messages(conv.id), docs, now_iso(), matter)


def conversation_markdown(data: ConversationExport) -> str:
    lines = [f"# {data.conversation.title}", ""]
    lines.append(f"Exported {data.exported_at} by Folio {__version__}. Conversation {data.conversation.id}.")
    if data.matter:
        lines += ["", f"Matter: {data.matter}"]
    lines += ["", "## Documents", ""]
    for i, (title, sha, source) in enumerate(data.documents, start=1):
        lines.append(f"{i}. **{title}** - sha256 `{sha}` - {source}")
    if data.models:
        lines += ["", "## Models", ""]
        lines += [f"- {label} - sha256 `{sha}`" for label, sha in data.models]
    lines += ["", "## Conversation", ""]
    for m in data.messages:
        who = "You" if m.role == "user" else f"Folio ({m.model})"
        lines.append(f"### {who} - {m.created_at}")
        lines.append("")
        lines.append(m.text or "_(no text)_")
        lines.append("")
        if m.role == "assistant":
            notes = _claim_notes(m, len(data.documents))
            if notes:
                from app.citations.verdicts import summary

                lines.append(f"Checked sentence by sentence ({summary(m.claims)}):")
                # Plain text like the answer above it: a Markdown file stays readable in any editor.
                lines += [f"- **{mark}** {text} - {why}" for mark, text, why in notes]
                lines.append("")
            if m.citations:
                lines.append("Citations:")
                lines += [f"- {_citation_note(c)}" for c in m.citations]
                lines.append("")
            if m.status != "complete":
                lines += [f"_Status: {m.status}{' - ' + m.error if m.error else ''}_", ""]
    return "\n".join(lines).rstrip() + "\n"


def markdown_html(markdown: str, *, strikethrough: bool = False) -> str:
    """Markdown as HTML for the PDF, rendered by markdown-it (CommonMark; ~~struck~~ words when asked,
    as a redline writes its deletions). The answers in it are the model's untrusted output: raw HTML is
    shown as text, and links and images are not followed (an image could name any file on this
    computer), so they stay as their words."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).disable(["image", "link", "autolink"])
    if strikethrough:
        md.enable("strikethrough")
    return md.render(markdown)


_PDF_CSS = """
* { font-family: sans-serif; }
body { font-size: 10pt; }
h1 { font-size: 16pt; } h2 { font-size: 13pt; } h3 { font-size: 11pt; }
code { font-family: monospace; font-size: 8pt; }
li { font-size: 9pt; }
"""


def conversation_pdf(data: ConversationExport) -> bytes:
    """The Markdown export typeset: one rendering of the answers (their own Markdown included) for both."""
    return html_pdf(markdown_html(conversation_markdown(data)))


def html_pdf(html: str, css: str = "") -> bytes:
    """HTML typeset on A4 pages by PyMuPDF's Story."""
    import pymupdf

    story = pymupdf.Story(html=html, user_css=_PDF_CSS + css)
    out = io.BytesIO()
    writer = pymupdf.DocumentWriter(out)
    page = pymupdf.paper_rect("a4")
    frame = pymupdf.Rect(page.x0 + 54, page.y0 + 54, page.x1 - 54, page.y1 - 54)
    more = True
    while more:
        device = writer.begin_page(page)
        more, _ = story.place(frame)
        story.draw(device)
        writer.end_page()
    writer.close()
    return out.getvalue()


# -- redlines (app/compare) ----------------------------------------------------------------------
# The redline (with its summary, when one was written) as Markdown, as a PDF (the Markdown typeset,
# deletions struck through in red, insertions in bold green) and as a Word document: the same header
# and summary, then the new version's whole text with every change as a real tracked change (w:ins /
# w:del by "Folio compare"). Word and LibreOffice show them as revisions, and accepting them all gives
# the new version. A moved clause carries a comment saying where it was (Word's own move marks would
# need the old place kept too).
REDLINE_AUTHOR = "Folio compare"
REDLINE_FORMATS = ("md", "pdf", "docx")
AUDIT_FORMATS = ("jsonl", "csv")
_REDLINE_CSS = "s { color: #b00000; } strong { color: #006000; }"
_NOT_IN_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # characters an XML document cannot hold


def redline_bytes(fmt: str, redline: Redline, written: Summary | None = None) -> bytes:
    from app.compare.markdown import to_markdown

    if fmt == "pdf":
        return redline_pdf(redline, written)
    if fmt == "docx":
        return redline_docx(redline, written)
    return to_markdown(redline, written).encode("utf-8")


def redline_pdf(redline: Redline, written: Summary | None = None) -> bytes:
    from app.compare.markdown import to_markdown

    return html_pdf(markdown_html(to_markdown(redline, written), strikethrough=True), _REDLINE_CSS)


def redline_docx(redline: Redline, written: Summary | None = None) -> bytes:
    import docx

    from app.compare.markdown import NOTE, summary
    from app.compare.tracked import tracked_paragraphs

    document = docx.Document()
    document.core_properties.author = REDLINE_AUTHOR
    document.add_heading(_xml_text(f"Redline: {redline.old.title} → {redline.new.title}"), level=0)
    document.add_paragraph(_xml_text(f"Old: {redline.old.reference} {redline.old.title}"))
    document.add_paragraph(_xml_text(f"New: {redline.new.reference} {redline.new.title}"))
    document.add_paragraph(summary(redline))
    document.add_paragraph(NOTE)
    if written is not None:
        _redline_summary(document, redline, written)
    document.add_heading("The new version, every change tracked", level=1)
    _write_tracked(document, tracked_paragraphs(redline), REDLINE_AUTHOR)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _write_tracked(
    document: Any,
    paragraphs: list[Paragraph],
    author: str,
    comments: dict[int, str] | None = None,
    first: int = 1,
    *,
    spaced: bool = True,
    shared: dict[int, int] | None = None,
    marks: bool = False,
) -> None:
    """Paragraphs of pieces as Word paragraphs: unchanged words as runs, insertions and deletions as
    revisions by `author`, a note as a comment on the run before it; `comments` (change number -> text):
    a comment around each such change's revisions, and (`shared`: change -> owner) around the owner's
    first revision for a change that has none of its own. Revision ids count from `first`. Pieces are
    joined by a space unless `spaced` is false (pieces that carry their own spacing, cut from the text as
    it is). With `marks`, a paragraph that is all deletion (or all insertion) has a paragraph mark tracked
    as deleted (inserted) too, so accepting (rejecting) every change leaves no empty paragraph."""
    from datetime import UTC, datetime

    stamp = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    revision = first - 1
    initials = "".join(w[0] for w in author.split()).upper()
    tracked_marks = _tracked_marks(paragraphs) if marks else {}
    carried: list[Any] = []  # comment ends to open the next paragraph with: after a tracked paragraph mark
    for k, pieces in enumerate(paragraphs):
        paragraph = document.add_paragraph()
        for element in carried:
            paragraph._p.append(element)
        carried = []
        spans: dict[int, list[Any]] = {}
        for n, piece in enumerate(pieces):
            if piece.kind == "break":  # a heading on its own line, as the document prints it
                paragraph.add_run("").add_break()
                continue
            if spaced and n and piece.kind != "note" and pieces[n - 1].kind != "break":
                paragraph.add_run(" ")  # between pieces, outside any revision
            if piece.kind == "same":
                paragraph.add_run(_xml_text(piece.text))
            elif piece.kind == "note":  # a comment, not text: accepting every change still gives the new version
                anchor = paragraph.runs[-1] if paragraph.runs else paragraph.add_run("")
                document.add_comment(anchor, text=_xml_text(piece.text), author=author, initials=initials)
            else:
                revision += 1
                wrapper = _tracked(paragraph, piece.kind, _xml_text(piece.text), revision, stamp, author)
                if comments is not None and piece.change in comments:
                    spans.setdefault(piece.change, []).append(wrapper)
        for kind in tracked_marks.get(k, ()):
            revision += 1
            _tracked_mark(paragraph, kind, revision, stamp, author)
        ranges = [(c, w[0], w[-1]) for c, w in spans.items()]
        ranges += [(c, spans[o][0], spans[o][0]) for c, o in (shared or {}).items() if o in spans]
        closing = paragraph._p[-1] if len(paragraph._p) else None  # the paragraph's last revision or run
        for change, start, end in ranges:
            ends = _comment_around(document, start, end, _xml_text(comments[change]), author, initials)  # type: ignore[index]
            if end is closing and any(_gone(pieces, kind) for kind in tracked_marks.get(k, ())):
                carried += ends  # the paragraph goes with its own mark: the range holds the mark too


def _tracked_marks(paragraphs: list[Paragraph]) -> dict[int, list[str]]:
    """Paragraph -> the revisions of its paragraph mark ('ins', 'del'): one mark goes for each paragraph
    that is empty once every change is rejected (accepted), so no empty paragraph is left. Taking its
    own mark joins the paragraph to the next one, taking the mark before joins the previous one to it:
    either leaves its neighbour's text alone. The document's last mark cannot go, so a run of such
    paragraphs at the end takes the marks before them (Word's own way when the end of a document is
    deleted or typed); and a mark is tracked as both only when nothing else will do, since LibreOffice
    reads such a mark as deleted only."""
    out: dict[int, list[str]] = {}
    last = len(paragraphs) - 1
    for kind in ("ins", "del"):
        taken: set[int] = set()
        for k in range(last, -1, -1):  # from the end, so a run there shifts back one mark each
            if not _gone(paragraphs[k], kind):
                continue
            free = [m for m in (k, k - 1) if 0 <= m < last and m not in taken]
            mark = next((m for m in free if m not in out), free[0] if free else None)
            if mark is not None:
                taken.add(mark)
                out.setdefault(mark, []).append(kind)
    return out


def _gone(pieces: Paragraph, kind: str) -> bool:
    """The paragraph is all insertion ('ins') or all deletion ('del'): empty once that is rejected or
    accepted."""
    return bool(pieces) and all(p.kind == ("inserted" if kind == "ins" else "deleted") for p in pieces)


def _tracked_mark(paragraph: Any, kind: str, revision: int, stamp: str, author: str) -> None:
    """The paragraph mark itself as a revision (w:pPr/w:rPr/w:del or w:ins; python-docx has no API)."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    properties = paragraph._p.get_or_add_pPr()
    run_properties = properties.find(qn("w:rPr"))
    if run_properties is None:
        run_properties = OxmlElement("w:rPr")
        properties.append(run_properties)  # last in w:pPr: our paragraphs have no w:sectPr or w:pPrChange
    attrs = {qn("w:id"): str(revision), qn("w:author"): author, qn("w:date"): stamp}
    run_properties.append(OxmlElement(f"w:{kind}", attrs=attrs))  # 'ins' comes first: the schema's order


def _comment_around(document: Any, first: Any, last: Any, text: str, author: str, initials: str) -> list[Any]:
    """A Word comment whose range holds the revisions from `first` to `last` (python-docx anchors
    comments on plain runs only; a change's runs sit inside w:del and w:ins). Returns the range's end
    and the comment's reference run, which the caller may move on past a tracked paragraph mark."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    comment = document.comments.add_comment(text=text, author=author, initials=initials)
    number = str(comment.comment_id)
    start = OxmlElement("w:commentRangeStart", attrs={qn("w:id"): number})
    end = OxmlElement("w:commentRangeEnd", attrs={qn("w:id"): number})
    first.addprevious(start)
    last.addnext(end)
    reference = OxmlElement("w:r")._new_comment_reference_run(comment.comment_id)
    end.addnext(reference)
    return [end, reference]


def _redline_summary(document: Any, redline: Redline, written: Summary) -> None:
    from app.citations.verdicts import mark
    from app.compare.markdown import change_text

    document.add_heading("Summary of the material changes", level=1)
    document.add_paragraph(_xml_text(f"Written by {written.model_label}. D1 is the old version, D2 the new one."))
    if written.note:
        document.add_paragraph(written.note)
    for part in written.parts:
        if part.title:
            document.add_heading(_xml_text(part.title), level=2)
        for line in part.text.splitlines():
            if line.strip():
                document.add_paragraph(_xml_text(line))
        for claim in part.claims:
            shown = mark(claim, 2)
            if shown is not None:
                line = f"{shown}: {' '.join(str(claim['text']).split())}"
                document.add_paragraph(_xml_text(line), style="List Bullet")
    other = written.other(redline)
    document.add_heading("Other changes", level=1)
    document.add_paragraph(f"{len(other)} of the {len(redline.changes)} changes are not mentioned above.")
    for k in other:
        document.add_paragraph(_xml_text(change_text(redline.changes[k])), style="List Bullet")


def _tracked(paragraph: Any, kind: str, text: str, revision: int, stamp: str, author: str = REDLINE_AUTHOR) -> Any:
    """A run inside w:ins or w:del: a revision Word shows, accepts and rejects (python-docx has no API)."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    wrapper = OxmlElement("w:ins" if kind == "inserted" else "w:del")
    wrapper.set(qn("w:id"), str(revision))
    wrapper.set(qn("w:author"), author)
    wrapper.set(qn("w:date"), stamp)
    run = OxmlElement("w:r")
    for n, line in enumerate(text.split("\n")):  # a line break as Word's own, as add_run writes it outside
        if n:
            run.append(OxmlElement("w:br"))
        body = OxmlElement("w:t" if kind == "inserted" else "w:delText")
        body.set(qn("xml:space"), "preserve")
        body.text = line
        run.append(body)
    wrapper.append(run)
    paragraph._p.append(wrapper)
    return wrapper


def _xml_text(text: str) -> str:
    return _NOT_IN_XML.sub("", text)


# -- playbook reviews (app/playbook) ------------------------------------------------------------------
# A review as a report (Markdown, or the same typeset as a PDF) and as a Word file: the report's findings,
# then the contract's text with the standard wording proposed as real tracked changes by "Folio playbook"
# (the clause deleted, the wording inserted) and a comment on each change giving the rule and the reason.
PLAYBOOK_AUTHOR = "Folio playbook"
REVIEW_FORMATS = ("md", "pdf", "docx")
# Revision ids start well above the comment ids python-docx gives (from 0), so no two annotations share one.
_FIRST_REVISION = 1000


def review_bytes(fmt: str, review: PlaybookReview, blocks: Sequence[TextBlock]) -> bytes:
    from app.playbook.report import markdown

    if fmt == "docx":
        return review_docx(review, blocks)
    if fmt == "pdf":
        return html_pdf(markdown_html(markdown(review)))
    return markdown(review).encode("utf-8")


def review_docx(review: PlaybookReview, blocks: Sequence[TextBlock]) -> bytes:
    import docx

    from app.playbook.report import markdown, tracked_edits

    edits = tracked_edits(review, blocks)
    document = docx.Document()
    document.core_properties.author = PLAYBOOK_AUTHOR
    document.add_heading(_xml_text(f"Playbook review: {review.title}"), level=0)
    report = markdown(review).split("\n## ", 1)[0]  # the header and the table of findings
    for line in report.splitlines()[2:]:
        if line.startswith("- "):
            document.add_paragraph(_xml_text(line[2:]), style="List Bullet")
    rules = {r.key: r for r in review.playbook.rules}
    table = document.add_table(rows=1, cols=4)
    for cell, title in zip(table.rows[0].cells, ("Rule", "Verdict", "Where", "Reason"), strict=True):
        cell.text = title
    for f in review.findings:
        cells = table.add_row().cells
        for cell, text in zip(cells, (rules[f.rule_key].name, f.verdict_text, f.where or "-", f.reason), strict=True):
            cell.text = _xml_text(text)
    document.add_heading("The contract, with the proposed changes tracked", level=1)
    missing = len(edits.comments) - edits.placed - edits.unplaced
    after = [f"{missing} missing clause(s)" if missing else "",
             f"{edits.unplaced} clause(s) Folio could not place in the text" if edits.unplaced else ""]  # fmt: skip
    if any(after):  # a missing clause is added, not lost: said apart from one Folio failed to find
        document.add_paragraph(f"The proposed wording for {' and '.join(a for a in after if a)} follows the text.")
    _write_tracked(document, edits.paragraphs, PLAYBOOK_AUTHOR, edits.comments, first=_FIRST_REVISION, spaced=False,
                   shared=edits.shared, marks=True)  # fmt: skip
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


# -- checks (app/checks) -------------------------------------------------------------------------
# The key dates of several documents as a calendar (.ics, RFC 5545, written by the icalendar package)
# and as CSV; the findings of their checks as JSON and CSV. Each key date is one all-day event named for
# what falls due and the document; its description says the document, the page the date rests on and
# how it was computed. A notice deadline carries an alarm some days before it (a reminder in time to
# act, not on the day). UIDs are stable for the same document, kind and date, so a calendar imported
# again updates its events rather than doubling them.
DEFAULT_ALARM_DAYS = 14
PRODUCT_ID = f"-//Folio//Folio {__version__}//EN"
KEY_DATE_FORMATS = ("ics", "csv")
CHECK_FORMATS = ("json", "csv")
KEY_DATE_COLUMNS = ["document", "sha256", "date", "what", "how computed", "where", "page", "source"]
FINDING_COLUMNS = ["document", "sha256", "section", "kind", "status", "problem", "text", "note", "where", "page",
                   "value", "how", "points to", "quote"]  # fmt: skip


def _key_date_rows(reports: Sequence[CheckReport]) -> list[tuple[CheckReport, Finding]]:
    rows = [(r, f) for r in reports for f in r.key_dates()]
    return sorted(rows, key=lambda rf: (rf[1].value, rf[0].title))


def key_dates_ics(reports: Sequence[CheckReport], *, alarm_days: int = DEFAULT_ALARM_DAYS,
                  stamp: datetime | None = None) -> bytes:  # fmt: skip
    from icalendar import Alarm, Calendar, Event

    from app.checks.dates import EXPIRY, NOTICE, RENEWAL

    summary = {EXPIRY: "Expires", RENEWAL: "Renews", NOTICE: "Notice deadline"}
    calendar = Calendar()
    calendar.add("prodid", PRODUCT_ID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("x-wr-calname", "Key dates (Folio)")
    stamp = stamp or datetime.now(UTC).replace(microsecond=0)
    for report, finding in _key_date_rows(reports):
        day = date.fromisoformat(finding.value)
        event = Event()
        event.add("uid", f"{report.sha256[:24]}-{finding.kind.replace(' ', '-')}-{day.isoformat()}@folio")
        event.add("dtstamp", stamp)
        event.add("dtstart", day)
        event.add("dtend", day + timedelta(days=1))
        event.add("summary", f"{summary.get(finding.kind, finding.kind)}: {report.title}")
        event.add("description", _description(report, finding))
        event.add("categories", ["Folio key date"])
        event.add("transp", "TRANSPARENT")
        if finding.kind == NOTICE:
            alarm = Alarm()
            alarm.add("action", "DISPLAY")
            alarm.add("description", f"In {alarm_days} days: {finding.text} ({report.title})")
            alarm.add("trigger", timedelta(days=-alarm_days))
            event.add_component(alarm)
        calendar.add_component(event)
    return calendar.to_ical()


def _description(report: CheckReport, finding: Finding) -> str:
    lines = [finding.text + ".", f"Document: {report.title} (sha256 {report.sha256[:16]}…)"]
    if finding.cited:
        lines.append(f"Where: {finding.cited}")
    lines.append(f"How: {finding.how}")
    lines.append("Computed by Folio from the contract's own terms; check it against the document before relying on it.")
    return "\n".join(lines)


def key_dates_csv(reports: Sequence[CheckReport]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(KEY_DATE_COLUMNS)
    for report, f in _key_date_rows(reports):
        row = [report.title, report.sha256, f.value, f.text, f.how, f.cited, f.page or "", report.inputs_from]
        writer.writerow([csv_text(str(v)) for v in row])
    return _csv_bytes(out)


def checks_json(reports: Sequence[CheckReport]) -> bytes:
    data = {"exported_by": f"Folio {__version__}", "documents": [r.to_dict() for r in reports]}
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def checks_csv(reports: Sequence[CheckReport]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(FINDING_COLUMNS)
    for r in reports:
        for f in r.findings:
            row = [r.title, r.sha256, f.section, f.kind, f.shown_status, "yes" if f.problem else "", f.text, f.note,
                   f.cited, f.page or "", f.value, f.how, f.target_cited, f.quote]  # fmt: skip
            writer.writerow([csv_text(str(v)) for v in row])
    return _csv_bytes(out)


def _csv_bytes(out: io.StringIO) -> bytes:
    # UTF-8 with a byte order mark: Excel otherwise reads it as the local code page.
    return ("\ufeff" + out.getvalue()).encode("utf-8")


# -- the service ---------------------------------------------------------------------------------
class Exporter:
    def __init__(self, ctx: AppContext) -> None:
        self.ctx = ctx

    def _finish(self, path: Path, fmt: str, data: bytes, overwrite: bool, audit: dict[str, Any]) -> ExportResult:
        """The file and its audit entry, both or neither: an export that cannot be recorded (a library
        locked by another Folio, a full disk) leaves no file behind."""
        return self.checked(path, fmt, data, overwrite=overwrite, audit=audit, check=lambda _written: {})

    def redaction_plan(
        self, path: Path, data: bytes, *, document_sha256: str, candidates: int, overwrite: bool = False
    ) -> ExportResult:
        """A redaction plan (`folio redact --save-plan`): it names what is to be removed, so it is as
        sensitive as the document and recorded like any export."""
        audit = {
            "what": "redaction plan",
            "candidates": candidates,
            "documents": [document_sha256],
            "model_sha256": None,
        }
        return self._finish(path, "json", data, overwrite, audit)

    def checked(
        self,
        path: Path,
        fmt: str,
        data: bytes,
        *,
        overwrite: bool,
        audit: dict[str, Any],
        check: Callable[[Path], dict[str, Any]],
        record: Callable[[str], dict[str, Any]] | None = None,
    ) -> ExportResult:
        """An export that must pass a check of the written file before anyone sees it.

        The bytes go to a temp file beside `path`; `check(temp)` reads that file as it will be and
        raises to refuse it (then nothing is left behind). What it returns joins the audit entry. Then,
        in one transaction, `record(sha256)` stores what the caller keeps about the export (its return
        value joins the audit entry too), the audit entry is written, and the file is put in place: a
        failure anywhere leaves neither the file nor the rows."""
        if path.exists() and not overwrite:
            raise FileExists(f"{path} already exists; choose another name or replace it (--force)")
        digest = hashlib.sha256(data).hexdigest()
        tmp = synced_temp(path, data)
        placed = False
        try:
            checked = check(tmp)
            try:
                with self.ctx.db.atomic():
                    kept = record(digest) if record is not None else {}
                    self.ctx.audit.record(
                        "export",
                        documents=audit.pop("documents"),
                        model_sha256=audit.pop("model_sha256"),
                        settings=audited_settings(self.ctx.settings),
                        details={
                            **audit,
                            **checked,
                            **kept,
                            "path": str(path),
                            "format": fmt,
                            "sha256": digest,
                            "bytes": len(data),
                        },
                    )
                    place(tmp, path, overwrite=overwrite)
                    placed = True
            except BaseException:
                if placed:  # the transaction failed after the file went in place: take it back out
                    path.unlink(missing_ok=True)
                raise
        finally:
            tmp.unlink(missing_ok=True)
        self.ctx.audit.sync_head()
        return ExportResult(path, fmt, digest, len(data))

    def table(
        self,
        run_id: int,
        path: Path,
        *,
        fmt: str | None = None,
        document_ids: list[int] | None = None,
        overwrite: bool = False,
    ) -> ExportResult:
        from app.extraction.runner import load_table

        chosen = format_of(path, TABLE_FORMATS, fmt)
        table = load_table(self.ctx, run_id, document_ids)
        data = {"csv": table_csv, "xlsx": table_xlsx, "json": table_json}[chosen](table)
        return self._finish(
            path,
            chosen,
            data,
            overwrite,
            {
                "what": "extraction table",
                "run_id": run_id,
                "matter": table.run.matter,
                "documents": [d.sha256 for d in table.documents],
                "model_sha256": table.run.model_sha256,
            },
        )

    def conversation(
        self, conversation_id: int, path: Path, *, fmt: str | None = None, overwrite: bool = False
    ) -> ExportResult:
        chosen = format_of(path, CONVERSATION_FORMATS, fmt)
        data = load_conversation(self.ctx, conversation_id)
        content = conversation_markdown(data).encode("utf-8") if chosen == "md" else conversation_pdf(data)
        models = data.models
        return self._finish(
            path,
            chosen,
            content,
            overwrite,
            {
                "what": "conversation",
                "conversation_id": conversation_id,
                "matter": data.matter,
                "documents": [sha for _t, sha, _p in data.documents],
                "model_sha256": models[-1][1] if models else None,
            },
        )

    def redline(
        self,
        redline: Redline,
        path: Path,
        *,
        fmt: str | None = None,
        written: Summary | None = None,
        overwrite: bool = False,
    ) -> ExportResult:
        """A comparison's redline (with the model's summary when there is one) as Markdown, PDF or a
        Word file with tracked changes."""
        chosen = format_of(path, REDLINE_FORMATS, fmt)
        versions = [redline.old, redline.new]
        return self._finish(
            path,
            chosen,
            redline_bytes(chosen, redline, written),
            overwrite,
            {
                "what": "redline",
                "versions": [f"{v.reference} {v.title}" for v in versions],
                "changes": len(redline.changes),
                "documents": [],
                "model_sha256": None,
                "summary_by": written.model_label if written is not None else None,
            },
        )

    def review(self, review_id: int, path: Path, *, fmt: str | None = None, overwrite: bool = False) -> ExportResult:
        """A playbook review as a Markdown or PDF report, or a Word file proposing the standard wording as
        tracked changes (the accepted findings, or every one that falls short when none is reviewed)."""
        from app.playbook.report import TextBlock
        from app.playbook.review import load_review, model_sha

        chosen = format_of(path, REVIEW_FORMATS, fmt)
        review = load_review(self.ctx, review_id)
        blocks = [TextBlock(s.page, s.text) for s in self.ctx.library.segments(review.document_id) if s.text.strip()]
        return self._finish(
            path,
            chosen,
            review_bytes(chosen, review, blocks),
            overwrite,
            {
                "what": "playbook review",
                "review_id": review_id,
                "playbook": review.playbook.key,
                "proposed_edits": len(review.proposed()),
                "matter": review.matter,
                "documents": [review.sha256],
                "model_sha256": model_sha(review.model_sha256),
            },
        )

    def audit_log(self, path: Path, *, fmt: str | None = None, overwrite: bool = False) -> ExportResult:
        """The audit log as JSON Lines or CSV; the export itself is its last entry but one (the entry
        recording it comes after the bytes written)."""
        chosen = format_of(path, AUDIT_FORMATS, fmt)
        data = self.ctx.audit.export(chosen)
        return self._finish(
            path,
            chosen,
            data,
            overwrite,
            {"what": "audit log", "entries": len(self.ctx.audit.entries()), "documents": [], "model_sha256": None},
        )

    def checks(
        self,
        document_ids: list[int],
        path: Path,
        *,
        fmt: str | None = None,
        overwrite: bool = False,
        what: str = "checks",
        alarm_days: int = DEFAULT_ALARM_DAYS,
    ) -> ExportResult:
        """The checks of these documents (`what` 'checks': every finding, JSON or CSV) or their key dates
        ('key dates': a calendar .ics or CSV). Stored results are used when they still hold."""
        from app.checks.service import Checker

        allowed = KEY_DATE_FORMATS if what == "key dates" else CHECK_FORMATS
        chosen = format_of(path, allowed, fmt)
        if not document_ids:
            raise FolioError("no document selected")
        checker = Checker(self.ctx)
        reports = [checker.check(d) for d in dict.fromkeys(document_ids)]
        if what == "key dates":
            data = key_dates_ics(reports, alarm_days=alarm_days) if chosen == "ics" else key_dates_csv(reports)
        else:
            data = checks_json(reports) if chosen == "json" else checks_csv(reports)
        details: dict[str, Any] = {
            "what": what,
            "check_runs": [r.run_id for r in reports],
            "documents": [r.sha256 for r in reports],
        }
        if what == "key dates":
            details["key_dates"] = sum(len(r.key_dates()) for r in reports)
        return self._finish(path, chosen, data, overwrite, {**details, "model_sha256": None})

    def default_name(self, *, run_id: int | None = None, conversation_id: int | None = None, fmt: str) -> str:
        if conversation_id is not None:
            from app.store.conversations import Conversations

            title = Conversations(self.ctx.db).get(conversation_id).title
            return safe_filename(f"Conversation {conversation_id} - {title}", fmt)
        from app.extraction.runner import load_run_info

        info = load_run_info(self.ctx, run_id or 0)
        return safe_filename(f"Extraction {info.id} - {info.template.name}", fmt)
