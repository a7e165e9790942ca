"""Showing untrusted Markdown (model answers, which documents can steer) without letting it act.

Qt renders Markdown with HTML off (MarkdownNoHTML): '<script>' or '<img onerror=...>' stay text.
That leaves Markdown's own links and images: `[click](http://...)`, `![](file:///...)`, autolinks.
SafeTextBrowser loads no resource at all (no file, no qrc, no URL: an answer cannot make the window
read a local file or show a remote "pixel"), and after every render it turns any link that is not a
Folio anchor (folio:... or #...) back into plain text and any image into a short text note.
Tooltips holding model output go through plain_tooltip().
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import Qt, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QTextBrowser

FOLIO_SCHEME = "folio"  # links Folio itself puts in a transcript, e.g. folio:cite/3 (never from the model)
IMAGE_NOTE = "[image not shown]"


def plain_tooltip(text: str) -> str:
    """Untrusted text for a tooltip. Qt renders a tooltip that looks like HTML as HTML (and would load
    an <img src="file:..."> in it); this makes it HTML whose every character is shown as written."""
    return Qt.convertFromPlainText(text, Qt.WhiteSpaceMode.WhiteSpaceNormal)


def is_folio_anchor(href: str) -> bool:
    return href.startswith(("#", f"{FOLIO_SCHEME}:"))


class SafeTextBrowser(QTextBrowser):
    """A QTextBrowser for untrusted text: never follows or loads anything by itself."""

    def __init__(self) -> None:
        super().__init__()
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        return None  # no images or style sheets from anywhere: the transcript is text


def defuse(document: QTextDocument, keep: Callable[[str], bool] = is_folio_anchor, start: int = 0) -> None:
    """From position `start` on, make every link `keep` refuses plain text and replace every image
    with a note."""
    links: list[tuple[int, int, QTextCharFormat]] = []
    images: list[tuple[int, int]] = []
    block = document.findBlock(start)
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.isValid() and fragment.position() + fragment.length() > start:
                fmt = fragment.charFormat()
                span = (fragment.position(), fragment.position() + fragment.length())
                if fmt.isImageFormat():
                    images.append(span)
                elif (fmt.isAnchor() or fmt.anchorHref()) and not keep(fmt.anchorHref()):
                    links.append((*span, fmt))
            it += 1
        block = block.next()
    cursor = QTextCursor(document)
    for first, end, fmt in links:
        cursor.setPosition(first)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        fmt.setAnchor(False)
        fmt.setAnchorHref("")
        fmt.setAnchorNames([])
        fmt.setFontUnderline(False)
        fmt.clearForeground()
        cursor.setCharFormat(fmt)
    for first, end in reversed(images):  # from the end, so earlier positions stay valid
        cursor.setPosition(first)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(IMAGE_NOTE, QTextCharFormat())
