"""Word documents (.docx) -> flowing text in reading order: headings, clauses with the numbers Word
shows ('12.3', '4(a)'), tables as Markdown, footnotes, and tracked changes and comments marked
with their authors. Each paragraph, table or heading is one unit, cited by its clause number
(`[§ 12.3]`) or, unnumbered, by its paragraph number (`[¶ 41]`); see ingest.document.Anchor.

Library: python-docx (MIT). Compared on the same LibreOffice-written contract (the one
tests/unit/test_ingest_word.py converts), the three candidates gave:
- python-docx 1.2: paragraphs and tables in body order, styles, tables cell by cell, comments with
  their authors (its comments API). Its paragraph text drops tracked insertions and deletions, and
  it neither computes list numbers nor reads footnotes.
- docx2python 3.7: numbers lists its own way ('1)', 'a)') instead of Word's level text ('1.1'),
  takes insertions in and deletions out without a mark or an author, and failed to read that
  file's comments; tables come out as loose lines.
- mammoth 1.13: renumbers lists as Markdown ('1.' for Word's '1.1'), same silent acceptance of
  tracked changes, no comments by default, tables dropped from its Markdown.
No library exposes tracked changes with their authors or Word's own clause numbers, so those are
read from python-docx's element tree (its lxml elements; the package is never unzipped by hand):
the numbering definitions (w:abstractNum levels: start, format, level text; w:num overrides),
w:ins / w:del with w:author, and footnote / endnote references, whose parts are parsed with
python-docx's own parse_xml.

Marks in the text, each kept inline where it happens:
    [+ inserted by Alice Counsel: sixty (60) +]   [- deleted by Bob Partner: thirty (30) -]
    [^1] (a footnote reference; the footnote follows its paragraph)
A comment follows the paragraph it ends in: [comment by Carol Reviewer on "sixty (60) days": ...].
"""

from __future__ import annotations

import contextlib
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.document import Anchor, Document, Page, Segment
from ingest.errors import CorruptFile, TooLarge
from ingest.limits import Limits

# Unzipped XML beyond this is refused before parsing: a few MB of ZIP can expand to gigabytes.
MAX_UNZIPPED_BYTES = 512 * 1024**2
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_INSERTED = re.compile(r"\[\+ inserted by [^:\]]*: (.*?) \+\]", re.DOTALL)
_DELETED = re.compile(r"\[- deleted by [^:\]]*: .*? -\]", re.DOTALL)
_LEADING_WORD = re.compile(r"^(?:article|section|clause|schedule|part|chapter|art\.|sec\.)\s+(?=\w)", re.IGNORECASE)


def accepted_text(text: str) -> str:
    """The text as it reads with every tracked change accepted (insertions kept, deletions gone)."""
    return _INSERTED.sub(r"\1", _DELETED.sub("", text))


def read_docx(path: Path, document: Document, *, limits: Limits) -> None:
    import docx

    _check_unzipped_size(path)
    try:
        word = docx.Document(str(path))
        units = _Reader(word).units()
        title = _title(word)
    except (TooLarge, CorruptFile):
        raise
    except Exception as exc:  # python-docx and lxml raise many types for damaged packages
        raise CorruptFile(f"{path.name}: the Word file is damaged and cannot be read ({_short(exc)})") from exc
    for number, unit in enumerate(units, start=1):
        anchor = Anchor(page=number, label=unit.label or None, unit="paragraph")
        document.pages.append(Page(number=number, label=unit.label, width=0.0, height=0.0))
        document.segments.extend(Segment(kind="text", anchor=anchor, text=text, role=role) for role, text in unit.parts)
    headings = [u.parts[0][1] for u in units if u.parts and u.parts[0][0] == "heading"]
    document.title = title or (headings[0] if headings else path.stem)


def _title(word: Any) -> str:
    """The title in the file's properties, when it has them: asked for absent ones, python-docx makes
    up defaults (title 'Word Document')."""
    from docx.opc.constants import RELATIONSHIP_TYPE as RT

    if not any(rel.reltype == RT.CORE_PROPERTIES for rel in word.part.package.rels.values()):
        return ""
    return (word.core_properties.title or "").strip()


def _check_unzipped_size(path: Path) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            unzipped = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptFile(f"{path.name}: the Word file is damaged and cannot be read ({_short(exc)})") from exc
    if unzipped > MAX_UNZIPPED_BYTES:
        raise TooLarge(
            f"{path.name}: the Word file unpacks to {unzipped / 1024**2:,.0f} MB, over the limit of "
            f"{MAX_UNZIPPED_BYTES / 1024**2:,.0f} MB (a possible decompression bomb)"
        )


@dataclass
class _Unit:
    label: str  # clause number ('12.3') or ''
    parts: list[tuple[str, str]] = field(default_factory=list)  # (role, text): the unit, then its notes


class _Reader:
    def __init__(self, word: Any) -> None:
        self.word = word
        self.numbering = _Numbering(word)
        self.marks: dict[tuple[str, str], str] = {}  # notes are numbered in the order they are referenced
        self.comments = {str(c.comment_id): c for c in _comments(word)}
        self.open_comments: dict[str, list[str]] = {}
        self.commented: dict[str, str] = {}  # comment id -> the text it is about, once its range closed
        self.notes = {kind: self._notes(kind) for kind in ("footnote", "endnote")}

    def units(self) -> list[_Unit]:
        from docx.table import Table

        units: list[_Unit] = []
        for block in self.word.iter_inner_content():
            if isinstance(block, Table):
                markdown = self._table(block)
                if markdown:
                    units.append(_Unit("", [("table", markdown)]))
                continue
            unit = self._paragraph(block)
            if unit is not None:
                units.append(unit)
        return units

    def _paragraph(self, paragraph: Any) -> _Unit | None:
        walk = _Walk(self)
        walk.children(paragraph._p)
        text = _tidy("".join(walk.out))
        ended = [cid for cid in walk.ended if cid in self.comments]
        if not text and not ended:
            return None
        number, label = self.numbering.number(paragraph)
        style = (paragraph.style.name or "") if paragraph.style is not None else ""
        heading = style.lower().startswith(("heading", "title")) and bool(text)
        shown = f"{number} {text}".strip() if number else text
        unit = _Unit(label, [("heading" if heading else "body", shown)] if shown else [])
        for cid in ended:
            comment = self.comments[cid]
            about = _tidy(self.commented.get(cid, ""))
            on = f' on "{_shorten(about)}"' if about else ""
            author = (comment.author or "").strip() or "unknown author"
            unit.parts.append(("comment", f"[comment by {author}{on}: {_tidy(comment.text)}]"))
        for kind, note_id in walk.notes:
            note = self.notes[kind].get(note_id)
            if note:
                unit.parts.append(("footnote", f"[^{self.mark(kind, note_id)}] {note}"))
        return unit

    def _notes(self, kind: str) -> dict[str, str]:
        """Footnotes or endnotes by id, their text read like body paragraphs (changes marked)."""
        from docx.opc.constants import RELATIONSHIP_TYPE as RT
        from docx.oxml.parser import parse_xml

        reltype = RT.FOOTNOTES if kind == "footnote" else RT.ENDNOTES
        try:
            part = self.word.part.part_related_by(reltype)
        except KeyError:
            return {}
        out: dict[str, str] = {}
        for note in parse_xml(part.blob).iterchildren(_W + kind):
            if note.get(_W + "type") in ("separator", "continuationSeparator", "continuationNotice"):
                continue
            texts = []
            for p in note.iterchildren(_W + "p"):
                walk = _Walk(self)
                walk.children(p)
                texts.append(_tidy("".join(walk.out)))
            out[note.get(_W + "id", "")] = " ".join(t for t in texts if t)
        return out

    def mark(self, kind: str, note_id: str) -> str:
        """The note's number as Word shows it: footnotes 1, 2, 3 and endnotes i, ii, iii by first reference."""
        key = (kind, note_id)
        if key not in self.marks:
            count = sum(1 for k, _ in self.marks if k == kind) + 1
            self.marks[key] = str(count) if kind == "footnote" else _roman(count).lower()
        return self.marks[key]

    def _table(self, table: Any) -> str:
        rows: list[list[str]] = []
        for row in table.rows:
            cells: list[str] = []
            seen: list[Any] = []
            for cell in row.cells:
                if any(cell._tc is s for s in seen):  # a merged cell is listed once per grid column
                    continue
                seen.append(cell._tc)
                texts = []
                for paragraph in cell.paragraphs:
                    walk = _Walk(self)
                    walk.children(paragraph._p)
                    texts.append(_tidy("".join(walk.out)))
                cells.append(" ".join(t for t in texts if t).replace("|", "\\|").replace("\n", " "))
            if any(cells):
                rows.append(cells)
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join(lines)


class _Walk:
    """One paragraph's inline content in order: runs, hyperlinks, fields, content controls, tracked
    insertions and deletions (marked with their authors), note references, comment ranges."""

    def __init__(self, reader: _Reader) -> None:
        self.reader = reader
        self.out: list[str] = []
        self.notes: list[tuple[str, str]] = []
        self.ended: list[str] = []

    def text(self, value: str) -> None:
        self.out.append(value)
        for pieces in self.reader.open_comments.values():
            pieces.append(value)

    def children(self, element: Any) -> None:
        for child in element:
            tag = _local(child.tag)
            if tag == "r":
                self.run(child, deleted=False)
            elif tag in ("ins", "moveTo", "del", "moveFrom"):
                self.change(child, inserted=tag in ("ins", "moveTo"))
            elif tag in ("hyperlink", "smartTag", "fldSimple", "customXml", "sdt", "sdtContent", "dir", "bdo"):
                self.children(child)
            elif tag == "commentRangeStart":
                self.reader.open_comments.setdefault(child.get(_W + "id", ""), [])
            elif tag == "commentRangeEnd":
                self.close_comment(child.get(_W + "id", ""))

    def change(self, element: Any, *, inserted: bool) -> None:
        inner = _Walk(self.reader)
        inner.notes, inner.ended = self.notes, self.ended
        for child in element:
            if _local(child.tag) == "r":
                inner.run(child, deleted=not inserted)
            else:
                inner.children([child])
        body = _tidy("".join(inner.out))
        if not body:
            return
        author = (element.get(_W + "author") or "").strip() or "unknown author"
        if inserted:
            self.out.append(f"[+ inserted by {author}: {body} +]")
            for pieces in self.reader.open_comments.values():
                pieces.append(body)
        else:
            self.out.append(f"[- deleted by {author}: {body} -]")

    def run(self, run: Any, *, deleted: bool) -> None:
        for child in run:
            tag = _local(child.tag)
            if tag == "t" or (tag == "delText" and deleted):
                self.text(child.text or "")
            elif tag == "tab":
                self.text("\t")
            elif tag in ("br", "cr"):
                self.text("\n")
            elif tag == "noBreakHyphen":
                self.text("-")
            elif tag in ("footnoteReference", "endnoteReference"):
                kind = "footnote" if tag == "footnoteReference" else "endnote"
                note_id = child.get(_W + "id", "")
                self.notes.append((kind, note_id))
                self.text(f"[^{self.reader.mark(kind, note_id)}]")
            elif tag == "commentReference":
                self.close_comment(child.get(_W + "id", ""))

    def close_comment(self, cid: str) -> None:
        if cid in self.ended:
            return
        pieces = self.reader.open_comments.pop(cid, None)
        if pieces is not None:
            self.reader.commented[cid] = "".join(pieces)
        self.ended.append(cid)


class _Numbering:
    """The numbers Word draws in front of list paragraphs, from the numbering definitions: each
    abstract list counts its levels (a level restarts after any higher one), w:num instances may
    restart a level (w:startOverride), and a level's text ('%1.%2', '(%3)') shows the counters."""

    def __init__(self, word: Any) -> None:
        from docx.opc.constants import RELATIONSHIP_TYPE as RT

        self.root: Any = None
        with contextlib.suppress(KeyError, AttributeError):
            self.root = word.part.part_related_by(RT.NUMBERING).element
        self.styles = word.styles
        self.counters: dict[str, list[int | None]] = {}
        self.overridden: set[tuple[str, int]] = set()
        self.last_label: dict[tuple[str, int], str] = {}

    def number(self, paragraph: Any) -> tuple[str, str]:
        """(the number as shown, the clause label for citations) of a paragraph, ('', '') if none."""
        if self.root is None:
            return "", ""
        found = self._num_pr(paragraph)
        if found is None:
            return "", ""
        num_id, level = found
        num = self._one(f'./w:num[@w:numId="{num_id}"]')
        if num is None:
            return "", ""
        abstract_id = self._val(num, "./w:abstractNumId")
        abstract = self._abstract(abstract_id)
        if abstract is None or abstract_id is None:
            return "", ""
        levels = {int(lvl.get(_W + "ilvl", "0")): lvl for lvl in _xpath(abstract, "./w:lvl")}
        for override in _xpath(num, "./w:lvlOverride"):
            own = _xpath(override, "./w:lvl")
            if own:
                levels[int(override.get(_W + "ilvl", "0"))] = own[0]
        definition = levels.get(level)
        if definition is None:
            return "", ""
        counters = self.counters.setdefault(abstract_id, [None] * 9)
        start_of = {k: int(self._val(v, "./w:start") or 0) for k, v in levels.items()}
        override = self._override(num, level)
        if override is not None and (num_id, level) not in self.overridden:
            self.overridden.add((num_id, level))
            counters[level] = override - 1
        current = counters[level]
        counters[level] = (current if current is not None else start_of.get(level, 0) - 1) + 1
        for deeper in range(level + 1, len(counters)):
            counters[deeper] = None
        for higher in range(level):
            if counters[higher] is None:
                counters[higher] = start_of.get(higher, 0)
        fmt = self._val(definition, "./w:numFmt") or "decimal"
        if fmt in ("bullet", "none"):
            return ("" if fmt == "none" else (self._val(definition, "./w:lvlText") or "•")), ""
        legal = _xpath(definition, "./w:isLgl")
        text = self._val(definition, "./w:lvlText") or f"%{level + 1}."

        def shown(match: re.Match[str]) -> str:
            index = int(match.group(1)) - 1
            value = counters[index] if 0 <= index < len(counters) else None
            lvl = levels.get(index)
            kind = "decimal" if legal or lvl is None else (self._val(lvl, "./w:numFmt") or "decimal")
            return _format(value or 0, kind)

        visible = re.sub(r"%([1-9])", shown, text).strip()
        piece = _LEADING_WORD.sub("", visible).strip().rstrip(".:").strip()
        if re.fullmatch(r"[A-Za-z0-9]{1,6}\)", piece):
            piece = f"({piece[:-1]})"
        refers_up = any(f"%{k}" in text for k in range(1, level + 1))
        parent = self.last_label.get((abstract_id, level - 1), "") if level > 0 and not refers_up else ""
        label = f"{parent}{piece}" if parent and piece.startswith("(") else (f"{parent}.{piece}" if parent else piece)
        label = label if re.search(r"\w", label) else ""
        self.last_label[(abstract_id, level)] = label
        return visible, label

    def _num_pr(self, paragraph: Any) -> tuple[str, int] | None:
        """(numId, level) from the paragraph, else from its style or the styles it is based on."""
        p_pr = paragraph._p.pPr
        num_pr = p_pr.numPr if p_pr is not None else None
        if num_pr is not None and num_pr.numId is not None:
            level = num_pr.ilvl.val if num_pr.ilvl is not None else 0
            num_id = str(num_pr.numId.val)
            return None if num_id == "0" else (num_id, int(level))
        style = paragraph.style
        while style is not None:
            s_pr = style.element.pPr
            num_pr = s_pr.numPr if s_pr is not None else None
            if num_pr is not None and num_pr.numId is not None:
                num_id = str(num_pr.numId.val)
                level = num_pr.ilvl.val if num_pr.ilvl is not None else self._style_level(num_id, style.style_id)
                return None if num_id == "0" else (num_id, int(level))
            style = style.base_style
        return None

    def _style_level(self, num_id: str, style_id: str) -> int:
        """The level whose w:pStyle names this style (heading styles linked to outline numbering)."""
        num = self._one(f'./w:num[@w:numId="{num_id}"]')
        abstract = self._abstract(self._val(num, "./w:abstractNumId")) if num is not None else None
        if abstract is not None:
            for lvl in _xpath(abstract, "./w:lvl"):
                if self._val(lvl, "./w:pStyle") == style_id:
                    return int(lvl.get(_W + "ilvl", "0"))
        return 0

    def _abstract(self, abstract_id: str | None) -> Any:
        if abstract_id is None:
            return None
        abstract = self._one(f'./w:abstractNum[@w:abstractNumId="{abstract_id}"]')
        link = self._val(abstract, "./w:numStyleLink") if abstract is not None else None
        if link:  # the list's definition lives with a numbering style
            style = next((s for s in self.styles if s.style_id == link), None)
            p_pr = style.element.pPr if style is not None else None
            if p_pr is not None and p_pr.numPr is not None and p_pr.numPr.numId is not None:
                num = self._one(f'./w:num[@w:numId="{p_pr.numPr.numId.val}"]')
                target = self._val(num, "./w:abstractNumId") if num is not None else None
                if target and target != abstract_id:
                    return self._one(f'./w:abstractNum[@w:abstractNumId="{target}"]')
        return abstract

    def _override(self, num: Any, level: int) -> int | None:
        for override in _xpath(num, f'./w:lvlOverride[@w:ilvl="{level}"]'):
            value = self._val(override, "./w:startOverride")
            if value is not None:
                return int(value)
        return None

    def _one(self, xpath: str) -> Any:
        found = _xpath(self.root, xpath)
        return found[0] if found else None

    @staticmethod
    def _val(element: Any, xpath: str) -> str | None:
        found = _xpath(element, xpath)
        return found[0].get(_W + "val") if found else None


def _format(value: int, kind: str) -> str:
    if kind in ("lowerLetter", "upperLetter"):
        n = max(1, value)
        letters = chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)  # Word repeats: y, z, aa, bb
        return letters if kind == "lowerLetter" else letters.upper()
    if kind in ("lowerRoman", "upperRoman"):
        roman = _roman(max(1, value))
        return roman if kind == "upperRoman" else roman.lower()
    if kind == "decimalZero":
        return f"{value:02d}"
    return str(value)


def _roman(value: int) -> str:
    out = ""
    for number, letters in (
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ):
        while value >= number:
            out += letters
            value -= number
    return out


def _comments(word: Any) -> list[Any]:
    from docx.opc.constants import RELATIONSHIP_TYPE as RT

    try:
        word.part.part_related_by(RT.COMMENTS)
    except KeyError:
        return []  # asking python-docx for comments would add an empty comments part
    return list(word.comments)


def _xpath(element: Any, expr: str) -> list[Any]:
    """XPath with the w: prefix on any element of the tree (python-docx's own classes and plain ones)."""
    from lxml import etree

    return etree._Element.xpath(element, expr, namespaces={"w": _W[1:-1]})


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _tidy(text: str) -> str:
    lines = [" ".join(line.replace("\t", " ").split()) for line in text.replace("\x00", "").splitlines()]
    return "\n".join(line for line in lines if line).strip()


def _shorten(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:120]
