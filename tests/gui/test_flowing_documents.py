"""Word files and e-mails in the real window (offscreen): the library lists an e-mail's attachments
under it, the viewer shows the text with its clause and paragraph numbers, a [§ N] citation opens
its clause with the quote marked, an [attachment 1, p. 1] citation opens the attached PDF's page,
and an attachment link in the e-mail opens it; a scanned page's citation is marked from its OCR words."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.citations.targets import VERIFIED
from tests.fixtures.answers import anchor_point, store_cited_answer
from tests.fixtures.office import draft_email, python_docx_memo
from tests.gui import library_rows

pytestmark = pytest.mark.gui


def _click(transcript, href: str) -> None:  # type: ignore[no-untyped-def]
    point = anchor_point(transcript, href)
    QTest.mouseClick(transcript.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)


def test_email_with_attachments_in_the_library_and_the_viewer(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    mail = window.ctx.library.add(draft_email(tmp_path)).document
    window.refresh_library(select=mail.id)
    rows = library_rows.texts(window)
    assert rows[0].startswith("Draft MSA for review")
    assert "attachment 1 · " in rows[1] and "attachment 2 · Supply memo" in rows[2]
    assert len(rows) == 3  # the spreadsheet was not read: named in the e-mail, not in the library
    assert rows[1].startswith(" ") and rows[2].startswith(" ")  # indented under their e-mail
    # Every item has a drawable icon (emoji were empty boxes without an emoji font).
    assert all(not library_rows.index(window, i).data(Qt.ItemDataRole.DecorationRole).isNull() for i in range(3))

    viewer = window.viewer
    qtbot.waitUntil(lambda: viewer.doc is not None and viewer.doc.id == mail.id, timeout=5000)
    shown = viewer.flow.toPlainText()
    assert shown.startswith("¶ 1\nFrom: Alice Counsel <alice@firm.example>")
    assert "attachment 1: contract.pdf" in shown and "attachment 2: memo.docx" in shown
    assert "attachment 3: budget.xlsx (not read: " in shown
    assert viewer.page_label.text() == "¶ 1 of 4"

    # A citation into the attached PDF opens the PDF's page, drawn from the library's own copy.
    conversation, message = store_cited_answer(
        window.ctx, [mail.id], 'The notice: "notice period is ninety days" [attachment 1, p. 1].'
    )
    window.refresh_library(select=mail.id)
    qtbot.waitUntil(lambda: window.conversation_id == conversation, timeout=5000)
    links = window.chat.transcript.targets_of(message)
    (href,) = [h for h, t in links.items() if t.state == VERIFIED]
    pdf_id = window.ctx.library.attachments(mail.id)[0].document_id
    with qtbot.waitSignal(viewer.page_shown, timeout=15000) as opened:
        _click(window.chat.transcript, href)
    assert opened.args == [pdf_id, 1]
    qtbot.waitUntil(lambda: bool(viewer.canvas.highlights), timeout=15000)
    assert viewer.last is not None and viewer.last.content.pixels is not None  # drawn, not the stored text


def test_clause_citation_opens_the_word_file_at_its_clause_with_the_quote_marked(  # type: ignore[no-untyped-def]
    qtbot, window, tmp_path: Path
) -> None:
    doc = window.ctx.library.add(python_docx_memo(tmp_path / "memo.docx")).document
    conversation, message = store_cited_answer(
        window.ctx, [doc.id], 'Payment: "pays within thirty days of delivery" [§ 2].'
    )
    window.refresh_library(select=doc.id)
    qtbot.waitUntil(lambda: window.conversation_id == conversation, timeout=5000)
    viewer = window.viewer
    assert viewer.flow.toPlainText().startswith("¶ 1\nSupply memo\n§ 1\n1. The supplier delivers the goods.")
    (href,) = list(window.chat.transcript.targets_of(message))
    with qtbot.waitSignal(viewer.page_shown, timeout=5000) as shown:
        _click(window.chat.transcript, href)
    assert shown.args == [doc.id, 3]
    assert viewer.page_label.text() == "§ 2, ¶ 3 of 5"
    (selection,) = viewer.flow.extraSelections()
    assert selection.cursor.selectedText() == "pays within thirty days of delivery"
    assert not viewer.banner.isVisible()
