"""A Word, text or e-mail document shown as text, each paragraph with the number it is cited by
(`§ 12.3`, `¶ 41`) in front; tracked changes coloured (insertions underlined, deletions struck out),
comments and footnotes set apart; an e-mail's attachments listed as links that open them.

Document text is untrusted: it is escaped into Qt's rich text, no resource is ever loaded, and the
only links are Folio's own (folio-doc:ID for an attachment).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextBrowser, QTextEdit

from app.store.library import Library, StoredAttachment, StoredSegment
from ingest.document import Anchor

_CHANGE = re.compile(r"\[([+-]) (inserted|deleted) by ([^:\]]*): (.*?) [+-]\]", re.DOTALL)
ROLE_STYLE = {
    "heading": "font-weight:600;",
    "comment": "color:#6b4f00;background:#fff4cc;",
    "footnote": "font-style:italic;",
    "email_headers": "background:palette(alternate-base);",
    "table": "font-family:monospace;white-space:pre;",
}
MARK = QColor(255, 213, 0, 140)


@dataclass(frozen=True)
class Unit:
    number: int  # the paragraph number
    label: str | None  # its clause number, if it has one
    parts: list[StoredSegment]

    @property
    def cited(self) -> str:
        return Anchor(page=self.number, label=self.label, unit="paragraph").cited()


def units_of(segments: list[StoredSegment]) -> list[Unit]:
    units: list[Unit] = []
    for seg in segments:
        if seg.page is None or not seg.text:
            continue
        if units and units[-1].number == seg.page:
            units[-1].parts.append(seg)
        else:
            units.append(Unit(seg.page, seg.label, [seg]))
    return units


class FlowText(QTextBrowser):
    attachment_opened = Signal(int)  # document id of an e-mail attachment the user clicked

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("flowText")
        self.setAccessibleName("Document text")
        self.setAccessibleDescription("A Word, text or e-mail document, paragraph by paragraph with its clause numbers")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._clicked)
        self.units: list[Unit] = []
        self._starts: dict[int, int] = {}  # paragraph number -> position of its text in the document
        self._base_size = self.font().pointSizeF()

    def show_document(self, library: Library, doc_id: int) -> None:
        self.units = units_of(library.segments(doc_id))
        attachments = library.attachments(doc_id)
        blocks = [self._unit_html(unit) for unit in self.units]
        if attachments:
            blocks.append(_attachments_html(attachments))
        self.setHtml("".join(blocks))
        self._starts = {}
        plain = self.toPlainText()
        at = 0
        for unit in self.units:
            found = plain.find(unit.cited, at)
            if found >= 0:
                self._starts[unit.number] = found
                at = found
        self.setExtraSelections([])

    def _unit_html(self, unit: Unit) -> str:
        parts = []
        for seg in unit.parts:
            style = ROLE_STYLE.get(seg.role, "")
            body = _changes_html(seg.text)
            parts.append(f'<div style="{style}">{body}</div>')
        number = html.escape(unit.cited)
        return (
            f'<p style="margin-top:6px;margin-bottom:0px;"><a name="u{unit.number}"></a>'
            f'<span style="color:palette(mid);">{number}</span></p>' + "".join(parts)
        )

    def go_to(self, number: int, quote: str | None = None, terms: tuple[str, ...] = ()) -> bool:
        """Scroll to a paragraph and mark the quote in it (or the search words); False if the quote
        is not in that paragraph's text."""
        self.setExtraSelections([])
        start = self._starts.get(number)
        if start is None:
            return False
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()
        self.scrollToAnchor(f"u{number}")
        end = self._end_of(number)
        text = self.toPlainText()
        spans: list[tuple[int, int]] = []
        if quote:
            match = _find_words(quote, text, start, end)
            if match is None:
                return False
            spans.append(match)
        for term in terms:
            word = term.strip('"').rstrip("*")
            if word:
                pattern = re.escape(word) + (r"\w*" if term.endswith("*") else r"\b")
                hits = re.finditer(r"\b" + pattern, text[start:end], re.IGNORECASE)
                spans += [(start + m.start(), start + m.end()) for m in hits]
        selections = []
        for first, last in spans:
            found = QTextCursor(self.document())
            found.setPosition(first)
            found.setPosition(last, QTextCursor.MoveMode.KeepAnchor)
            selection = QTextEdit.ExtraSelection()
            selection.cursor = found
            fmt = QTextCharFormat()
            fmt.setBackground(MARK)
            selection.format = fmt
            selections.append(selection)
        self.setExtraSelections(selections)
        return True

    def _end_of(self, number: int) -> int:
        later = [pos for n, pos in self._starts.items() if n > number]
        return min(later) if later else len(self.toPlainText())

    def zoom(self, factor: float) -> None:
        font = self.font()
        font.setPointSizeF(max(6.0, min(48.0, font.pointSizeF() * factor)))
        self.setFont(font)

    def reset_zoom(self) -> None:
        font = self.font()
        font.setPointSizeF(self._base_size)
        self.setFont(font)

    def _clicked(self, url: QUrl) -> None:
        if url.scheme() == "folio-doc" and url.path().isdigit():
            self.attachment_opened.emit(int(url.path()))


def _changes_html(text: str) -> str:
    """Escaped text with tracked changes coloured; the characters stay as they are stored, so the
    plain text (where quotes are found) is the stored text."""
    out: list[str] = []
    last = 0
    for match in _CHANGE.finditer(text):
        out.append(_escape(text[last : match.start()]))
        inserted = match.group(1) == "+"
        style = (
            "color:#166534;text-decoration:underline;" if inserted else "color:#b91c1c;text-decoration:line-through;"
        )
        out.append(f'<span style="{style}">{_escape(match.group(0))}</span>')
        last = match.end()
    out.append(_escape(text[last:]))
    return "".join(out)


def _escape(text: str) -> str:
    return html.escape(text).replace("\n", "<br/>")


def _attachments_html(attachments: list[StoredAttachment]) -> str:
    rows = []
    for a in attachments:
        name = html.escape(a.name)
        if a.document_id is not None:
            rows.append(f'<li>attachment {a.position}: <a href="folio-doc:{a.document_id}">{name}</a></li>')
        else:
            rows.append(f"<li>attachment {a.position}: {name} (not read: {html.escape(a.note)})</li>")
    return "<p><b>Attachments</b></p><ul>" + "".join(rows) + "</ul>"


def _find_words(quote: str, text: str, start: int, end: int) -> tuple[int, int] | None:
    """The quote's words in text[start:end] across any spacing and case; with tracked changes
    accepted when the plain text does not hold it."""
    words = [re.escape(w) for w in quote.split()]
    if not words:
        return None
    pattern = r"\s+".join(words)
    found = re.search(pattern, text[start:end], re.IGNORECASE)
    if found is None:
        # Quotes of the clause as it reads after the changes: allow a change mark between words.
        glue = r"(?:\s+|\s*\[[+-] (?:inserted|deleted) by [^:\]]*: |\s*[+-]\]\s*|\s*\[- deleted by [^\]]*-\]\s*)+"
        found = re.search(glue.join(words), text[start:end], re.IGNORECASE)
    return (start + found.start(), start + found.end()) if found else None
