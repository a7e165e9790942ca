"""The transcript on its own: untrusted model text stays text, thinking folds, a streamed answer is
appended piece by piece and ends up exactly as the stored message renders."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QUrl

from app.store.conversations import MessageRow
from ui.transcript import Transcript, _commit_point

pytestmark = pytest.mark.gui


def _message(mid: int, role: str, text: str, **extra: object) -> MessageRow:
    values: dict[str, object] = {
        "id": mid,
        "conversation_id": 1,
        "seq": mid,
        "role": role,
        "text": text,
        "thinking": "",
        "citations": [],
        "model": "test model",
        "model_sha256": None,
        "prompt_tokens": None,
        "completion_tokens": None,
        "cached_tokens": None,
        "prefill_ms": None,
        "generate_ms": None,
        "status": "complete",
        "error": None,
        "created_at": "",
    }
    values.update(extra)
    return MessageRow(**values)  # type: ignore[arg-type]


def _anchors(transcript: Transcript) -> list[str]:
    found = []
    block = transcript.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isAnchor():
                found.append(fmt.anchorHref())
            it += 1
        block = block.next()
    return found


def _rules(transcript: Transcript) -> list[int]:
    from PySide6.QtGui import QTextFormat

    rules, block = [], transcript.document().begin()
    while block.isValid():
        if block.blockFormat().hasProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth):
            rules.append(block.blockNumber())
        block = block.next()
    return rules


def test_model_output_cannot_link_load_or_inject(qtbot) -> None:  # type: ignore[no-untyped-def]
    transcript = Transcript()
    qtbot.addWidget(transcript)
    evil = (
        "Click [here](http://evil.example/steal) or [this](file:///etc/passwd).\n\n"
        "![pixel](file:///etc/passwd) <b>bold?</b> <img src=x onerror=alert(1)>\n\n"
        "Forged: [\\[p. 1\\]](folio://0000000000000000/cite/2/0)"
    )
    transcript.show_messages([_message(1, "user", "**not bold** [x](http://a)"), _message(2, "assistant", evil)], [5])
    anchors = _anchors(transcript)
    assert anchors and all(a.startswith(transcript._prefix) and "/copy/" in a for a in anchors)  # only "Copy"
    text = transcript.toPlainText()
    assert "<b>bold?</b>" in text and "**not bold**" in text  # shown literally, not as markup
    assert "evil.example" not in transcript.toHtml() and "/etc/passwd" not in transcript.toHtml().replace(
        "file:///etc/passwd", ""
    )
    assert transcript.loadResource(2, QUrl("file:///etc/passwd")) is None
    clicked: list[object] = []
    transcript.citation_clicked.connect(clicked.append)
    transcript.anchorClicked.emit(QUrl("folio://0000000000000000/cite/2/0"))
    transcript.anchorClicked.emit(QUrl("http://evil.example/steal"))
    assert clicked == []


def test_thinking_folds_and_unfolds(qtbot) -> None:  # type: ignore[no-untyped-def]
    transcript = Transcript()
    qtbot.addWidget(transcript)
    answer = _message(2, "assistant", "The answer.", thinking="First I read clause 7.\nThen clause 8.")
    transcript.show_messages([_message(1, "user", "q"), answer], [])
    assert "Thinking (8 words)" in transcript.toPlainText() and "clause 7" not in transcript.toPlainText()
    think = next(a for a in _anchors(transcript) if "/think/" in a)
    transcript.anchorClicked.emit(QUrl(think))
    assert "First I read clause 7." in transcript.toPlainText() and "▾ Thinking" in transcript.toPlainText()
    transcript.anchorClicked.emit(QUrl(think))
    assert "clause 7" not in transcript.toPlainText()


def test_streamed_answer_is_appended_in_pieces_and_ends_as_stored(qtbot) -> None:  # type: ignore[no-untyped-def]
    transcript = Transcript()
    qtbot.addWidget(transcript)
    transcript.show_messages([_message(1, "user", "earlier"), _message(2, "assistant", "earlier answer")], [])
    transcript.begin_answer("Which law?", [])
    assert transcript.is_live and "Which law?" in transcript.toPlainText()
    paragraphs = [f"Paragraph {i} says something about clause {i}." for i in range(30)]
    code = "```\nx = 1\n\ny = 2\n```"
    body = "\n\n".join([*paragraphs[:15], code, *paragraphs[15:]])
    transcript.append_text("thinking", "Let me look. ")
    qtbot.waitUntil(lambda: "Thinking…" in transcript.toPlainText(), timeout=2000)
    for i in range(0, len(body), 7):
        transcript.append_text("answer", body[i : i + 7])
        if i % 140 == 0:
            qtbot.wait(5)
    qtbot.waitUntil(lambda: "Paragraph 29" in transcript.toPlainText(), timeout=3000)
    live = transcript._live
    assert live is not None and 0 < live.committed < len(body)  # finished paragraphs were appended for good
    assert len(transcript.render_ms) >= 3
    stored = _message(4, "assistant", body, thinking="Let me look. ", completion_tokens=300, generate_ms=2000.0)
    transcript.finish_answer(stored, _message(3, "user", "Which law?"))
    assert not transcript.is_live
    full = Transcript()
    qtbot.addWidget(full)
    full.show_messages(transcript.messages, [])
    assert transcript.toPlainText() == full.toPlainText()  # the same as rendering it all at once
    assert _rules(transcript) == _rules(full) == [2, 6, 9]  # the lines between messages too
    assert transcript.toPlainText().count("earlier answer") == 1


def test_commit_point_never_splits_a_code_block() -> None:
    text = "Intro.\n\n```\na\n\nb\n```\n\nTail being written"
    cut = _commit_point(text, 0)
    assert text[:cut].endswith("```\n\n") and "Tail" not in text[:cut]
    assert _commit_point("no break yet", 0) == 0
    long_line = "word " * 400 + "\nmore"
    assert _commit_point(long_line, 0) == long_line.index("\n") + 1


def test_failed_answer_shows_in_place(qtbot) -> None:  # type: ignore[no-untyped-def]
    transcript = Transcript()
    qtbot.addWidget(transcript)
    transcript.begin_answer("q?", [])
    transcript.append_text("answer", "partial")
    transcript.fail_answer("the model ran out of memory")
    text = transcript.toPlainText()
    assert "Could not answer: the model ran out of memory" in text and not transcript.is_live


def test_the_footer_shows_how_many_drafted_tokens_were_accepted(qtbot) -> None:  # type: ignore[no-untyped-def]
    transcript = Transcript()
    qtbot.addWidget(transcript)
    drafted = _message(2, "assistant", "Either party may terminate.", completion_tokens=40, generate_ms=2000.0,
                       drafted_tokens=32, accepted_tokens=27)  # fmt: skip
    plain = _message(4, "assistant", "No drafts here.", completion_tokens=5, generate_ms=500.0, drafted_tokens=0,
                     accepted_tokens=0)  # fmt: skip
    older = _message(6, "assistant", "Stored before drafting existed.", completion_tokens=5, generate_ms=500.0)
    transcript.show_messages([_message(1, "user", "q"), drafted, _message(3, "user", "q"), plain,
                              _message(5, "user", "q"), older], [1])  # fmt: skip
    text = transcript.toPlainText()
    assert "40 tokens in 2.0 s · drafts 84% accepted (27 of 32)" in text
    assert text.count("accepted") == 1  # nothing claimed where nothing was drafted or recorded


def test_the_footer_says_why_nothing_was_drafted(qtbot) -> None:  # type: ignore[no-untyped-def]
    transcript = Transcript()
    qtbot.addWidget(transcript)
    note = "no drafts: checking 2 guesses costs 2.9x writing one token on this computer"
    plain = _message(2, "assistant", "No drafts here.", completion_tokens=5, generate_ms=500.0, drafted_tokens=0,
                     accepted_tokens=0, draft_note=note)  # fmt: skip
    transcript.show_messages([_message(1, "user", "q"), plain], [1])
    assert f"5 tokens in 0.5 s · {note}" in transcript.toPlainText()
