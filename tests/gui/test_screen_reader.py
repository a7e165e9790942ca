"""Screen readers: read through Qt's accessibility tree (what NVDA, VoiceOver and Orca are given),
every control of the window has a name and a description, symbol buttons are named in words, and an
answer's checks, an extraction cell's verdict and a change in the Compare window are said in words."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from PySide6.QtGui import QAccessible, QAccessibleInterface
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QProgressBar,
    QWidget,
)

pytestmark = pytest.mark.gui
CONTROLS = (QAbstractButton, QLineEdit, QAbstractScrollArea, QAbstractSpinBox, QComboBox, QProgressBar)
Text = QAccessible.Text


def tree(top: QWidget) -> Iterator[QAccessibleInterface]:
    """Every shown node under `top`'s accessible interface, depth first."""
    stack = [QAccessible.queryAccessibleInterface(top)]
    while stack:
        node = stack.pop()
        if node is None or not node.isValid() or node.state().invisible:
            continue
        yield node
        stack += [node.child(i) for i in range(node.childCount())]


def controls(top: QWidget) -> list[tuple[QWidget, QAccessibleInterface]]:
    found = []
    for node in tree(top):
        widget = node.object()
        if isinstance(widget, CONTROLS) and widget.isVisible() and not widget.objectName().startswith("qt_"):
            found.append((widget, node))
    return found


def said(node: QAccessibleInterface) -> str:
    """All a screen reader is given for a node: its name, its description and its text."""
    text = node.textInterface()
    body = text.text(0, text.characterCount()) if text is not None else ""
    return " ".join((node.text(Text.Name), node.text(Text.Description), body))


def test_every_control_has_a_name_and_a_description(answered) -> None:  # type: ignore[no-untyped-def]
    window = answered
    found = controls(window)
    assert len(found) >= 15
    nameless = [f"{type(w).__name__}({w.objectName()})" for w, node in found if not node.text(Text.Name).strip()]
    assert nameless == []
    undescribed = [node.text(Text.Name) for _, node in found if not node.text(Text.Description).strip()]
    assert undescribed == []
    names = {node.text(Text.Name) for _, node in found}
    # The viewer's symbol buttons are said in words, never as ◀ ▶ − +.
    assert {"Previous page", "Next page", "Zoom out", "Zoom in", "Library", "Question", "Conversation"} <= names
    assert not names & {"◀", "▶", "−", "+"}
    # The document's title: the whole of it, even where the label shows it cut in the middle.
    title = QAccessible.queryAccessibleInterface(window.viewer.title)
    assert title.text(Text.Name) == f"Document: {window.viewer.doc.title}"


def test_each_check_of_an_answer_is_said_in_words(answered) -> None:  # type: ignore[no-untyped-def]
    from tests.gui.conftest import ANSWERED

    window = answered
    transcript = window.chat.transcript
    spoken = said(QAccessible.queryAccessibleInterface(transcript)).replace("\u00a0", " ")
    message = next(m for m in reversed(transcript.messages) if m.role == "assistant")
    marks = [t.mark for t in transcript.claims_of(message.id).values()]
    assert len(marks) == 3
    for mark in marks:
        words = re.sub(r"[^\w.: ]", "", mark).strip()  # the mark without its symbol
        assert re.search(r"[A-Za-z]{5,}", words), mark  # a word says the verdict, not the symbol alone
        assert words in spoken, mark
    assert "found on p. 4" in spoken and "added by Folio: p. 2" in spoken and "unsupported" in spoken
    assert "1 wrong page · 1 source added by Folio · 1 unsupported" in spoken
    assert ANSWERED.split(" [p. 1]")[0] in spoken


def test_extraction_cells_and_compared_changes_are_said_in_words(answered, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from app.compare.redline import compare
    from app.compare.versions import version_from_library
    from tests.fixtures.answers import store_sample_cells
    from tests.fixtures.contract_versions import edited_contract
    from ui.compare_view import CompareView

    window = answered
    doc = window.viewer.doc
    view = window.work_menu.show_table(store_sample_cells(window.ctx, doc.id))
    table = QAccessible.queryAccessibleInterface(view.view)
    assert table.role() == QAccessible.Role.Table
    nodes = [table.child(i) for i in range(table.childCount())]  # scrolled out of view too
    cells = [n for n in nodes if n.role() == QAccessible.Role.Cell]
    headers = {n.text(Text.Name) for n in nodes if n.role() == QAccessible.Role.ColumnHeader}
    assert "Governing Law" in headers
    (law,) = [c for c in cells if c.text(Text.Name).startswith("Delaware")]
    assert re.search(r"(quoted|supported) p\. 4", law.text(Text.Name)), law.text(Text.Name)
    # Its description: the quote, what was checked and where, for the reader who cannot hover.
    assert "State of Delaware" in law.text(Text.Description) and "p. 4" in law.text(Text.Description)
    view.window().close()

    old, new = edited_contract(tmp_path)
    ids = [window.ctx.library.add(p).document.id for p in (old, new)]
    compared = CompareView(window.ctx, "msa-v1", "msa-v2", window)
    compared.show_redline(compare(version_from_library(window.ctx, ids[0]), version_from_library(window.ctx, ids[1])))
    compared.show()
    changes = QAccessible.queryAccessibleInterface(compared.changes)
    items = [changes.child(i).text(Text.Name) for i in range(changes.childCount())]
    assert any("12,500" in i and "15,000" in i for i in items), items
    for side in (compared.old_view, compared.new_view):
        node = QAccessible.queryAccessibleInterface(side)
        assert "struck through" in node.text(Text.Description)
    compared.close()


def test_the_dialogs_name_and_describe_every_control_too(answered) -> None:  # type: ignore[no-untyped-def]
    from app.playbook.book import PlaybookStore
    from ui.compare_view import CompareView
    from ui.extraction_runner import ExtractionRunDialog
    from ui.playbook_view import PlaybookReviewView
    from ui.settings_dialog import SettingsDialog

    window = answered
    book = PlaybookStore.for_config(window.ctx.paths.config_dir).get("commercial_contract")
    for top in (
        SettingsDialog(window.ctx, window),
        CompareView(window.ctx, "msa-v1", "msa-v2", window),
        ExtractionRunDialog(window.ctx, "Contract review", 2, window),
        PlaybookReviewView(window.ctx, book, "msa-v1", window),
    ):
        top.show()
        found = controls(top)
        assert len(found) >= 4, type(top).__name__
        missing = [
            f"{type(top).__name__}: {type(w).__name__} {node.text(Text.Name)!r}"
            for w, node in found
            if not node.text(Text.Name).strip() or not node.text(Text.Description).strip()
        ]
        assert missing == []
        top.close()
