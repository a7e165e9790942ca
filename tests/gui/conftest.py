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
    """A question and an answer with citations, stored and grounded through app/ as ChatService does
    (the demo model cannot be relied on to cite)."""
    from app.conversations import Conversations
    from app.grounding import Sources, ground_answer

    conversations = Conversations(ctx.db)
    conversation = conversations.create(document_ids, title or question)
    conversations.add_message(conversation, "user", question)
    grounded = ground_answer(answer, Sources.load(ctx, document_ids))
    message = conversations.add_message(
        conversation, "assistant", "", model=model, completion_tokens=42, generate_ms=900.0
    )
    conversations.update_message(
        message,
        claims=[v.to_dict() for v in grounded.claims],
        text=answer,
        citations=[c.to_dict() for c in grounded.citations],
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
                # A link may wrap onto the next line: take a point inside it that really is the link.
                for offset in (fragment.length() // 2, *range(fragment.length())):
                    cursor = QTextCursor(transcript.document())
                    cursor.setPosition(fragment.position() + offset)
                    transcript.setTextCursor(cursor)
                    transcript.ensureCursorVisible()
                    rect = transcript.cursorRect(cursor)
                    point = rect.center() + type(rect.center())(2, 0)
                    if transcript.anchorAt(point) == href:
                        return point
                raise AssertionError(f"the link {href} is not under any of its characters")
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
