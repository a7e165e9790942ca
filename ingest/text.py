"""Plain text and Markdown files -> paragraphs, cited like Word documents: a paragraph that starts
with a clause number ('12.3 The Supplier shall...', '## 5. Term', '(a) ...' under 12.3) is cited by
it (`[§ 12.3]`), any other by its paragraph number (`[¶ 41]`)."""

from __future__ import annotations

import re
from pathlib import Path

from ingest.document import Anchor, Document, Page, Segment
from ingest.errors import CorruptFile
from ingest.limits import Limits
from ingest.sniff import decode_text

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SETEXT = re.compile(r"^(=+|-+)\s*$")
_CLAUSE = re.compile(r"^(?:(?:section|article|clause)\s+)?(\d{1,3}(?:\.\d{1,3})*)[.)]?\s+\S", re.IGNORECASE)
_SUB_CLAUSE = re.compile(r"^\(([a-z]{1,2}|[ivxlc]{1,6}|\d{1,3})\)\s+\S", re.IGNORECASE)
# A file with fewer blank lines than this per line of text has one paragraph per line.
BLANK_LINES_PER_LINE = 1 / 20


def read_text_file(path: Path, document: Document, *, limits: Limits) -> None:
    text = decode_text(path.read_bytes())
    if text is None:
        raise CorruptFile(f"{path.name}: the file mixes text with binary data and cannot be read as text")
    markdown = document.mime == "text/markdown"
    last_clause = ""
    for number, (role, paragraph) in enumerate(split_paragraphs(text, markdown=markdown), start=1):
        label = ""
        clause = _CLAUSE.match(paragraph.lstrip("#").strip())
        sub = _SUB_CLAUSE.match(paragraph)
        if clause:
            label = last_clause = clause.group(1)
        elif sub and last_clause:
            label = f"{last_clause}({sub.group(1)})"
        document.pages.append(Page(number=number, label=label, width=0.0, height=0.0))
        anchor = Anchor(page=number, label=label or None, unit="paragraph")
        document.segments.append(Segment(kind="text", anchor=anchor, text=paragraph, role=role))
    if markdown:
        heading = next((s.text for s in document.segments if s.role == "heading"), "")
        document.title = heading.lstrip("#").strip() or path.stem


def split_paragraphs(text: str, *, markdown: bool = False) -> list[tuple[str, str]]:
    """(role, text) per paragraph: blank-line separated blocks; Markdown headings and tables apart."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "").split("\n")]
    filled = [line for line in lines if line.strip()]
    one_per_line = len(filled) > 40 and (len(lines) - len(filled)) < BLANK_LINES_PER_LINE * len(filled)
    out: list[tuple[str, str]] = []
    block: list[str] = []

    def flush() -> None:
        if block:
            joined = "\n".join(block).strip("\n")
            if joined.strip():
                out.append(("table" if markdown and joined.lstrip().startswith("|") else "body", joined))
            block.clear()

    for line in lines:
        if markdown and _HEADING.match(line):
            flush()
            out.append(("heading", line.strip()))
        elif markdown and _SETEXT.match(line) and block and len(block) == 1 and not block[0].startswith("|"):
            out.append(("heading", block[0].strip()))
            block.clear()
        elif not line.strip():
            flush()
        elif markdown and block and line.lstrip().startswith("|") != block[-1].lstrip().startswith("|"):
            flush()  # a table starts or ends without a blank line around it
            block.append(line)
        else:
            block.append(line)
            if one_per_line:
                flush()
    flush()
    return out
