from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, starter_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QMessageBox

    from app.context import open_app
    from ui.main_window import MainWindow

    warnings: list[str] = []
    # A modal dialog would block the offscreen test; record what the user would have been told.
    monkeypatch.setattr(QMessageBox, "warning", lambda _parent, _title, text, *a, **k: warnings.append(text))
    ctx = open_app()
    win = MainWindow(ctx)
    win.warnings = warnings  # type: ignore[attr-defined]
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()
    ctx.close()


def store_cited_answer(
    ctx,
    document_ids: list[int],
    answer: str,
    question: str = "Which law governs?",
    title: str | None = None,
    model: str = "Gemma 3 270m (Q4_K_M) - demo model",
) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """A question and an answer with citations, stored and checked through app/ as ChatService does
    (the demo model cannot be relied on to cite)."""
    from app.chat import document_indexes
    from app.citations import check, find_citations
    from app.conversations import Conversations

    conversations = Conversations(ctx.db)
    conversation = conversations.create(document_ids, title or question)
    conversations.add_message(conversation, "user", question)
    citations = check(find_citations(answer), document_indexes(ctx, document_ids))
    message = conversations.add_message(
        conversation,
        "assistant",
        answer,
        citations=[c.to_dict() for c in citations],
        model=model,
        completion_tokens=42,
        generate_ms=900.0,
    )
    return conversation, message


def anchor_point(transcript, href: str):  # type: ignore[no-untyped-def]
    """The on-screen point of a link in the transcript, to click it like a user would."""
    from PySide6.QtGui import QTextCursor

    block = transcript.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().anchorHref() == href:
                cursor = QTextCursor(transcript.document())
                cursor.setPosition(fragment.position() + fragment.length() // 2)
                transcript.ensureCursorVisible()
                transcript.setTextCursor(cursor)
                return transcript.cursorRect(cursor).center()
            it += 1
        block = block.next()
    raise AssertionError(f"no link {href} in the transcript")


def char_format_at(transcript, href: str):  # type: ignore[no-untyped-def]
    block = transcript.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            if it.fragment().charFormat().anchorHref() == href:
                return it.fragment().charFormat()
            it += 1
        block = block.next()
    raise AssertionError(f"no link {href} in the transcript")
