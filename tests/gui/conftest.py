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


SAMPLE_CELLS = {  # what a model might answer about tests.fixtures.pdfs' contract: grounded for real when stored
    "document_name": {"evidence": "This Master Services Agreement is entered into by Northwind Analytics LLC",
                      "page": "1", "answer": "Master Services Agreement"},
    "parties": {"evidence": 'entered into by Northwind Analytics LLC (the "Provider") and Contoso Legal Partners LLP '
                '(the "Client")', "page": "1",
                "answer": "Northwind Analytics LLC (Provider) and Contoso Legal Partners LLP (Client)"},
    "agreement_date": {"evidence": "Contoso Legal Partners LLP (the \"Client\") on March 3, 2025.", "page": "1",
                       "answer": "March 3, 2025"},
    "expiration_date": {"evidence": "This Agreement starts on the Effective Date and runs for two (2) years.",
                        "page": "2", "answer": "two (2) years"},
    "governing_law": {"evidence": "governed by and construed in accordance with the laws of the State of Delaware",
                      "page": "4", "answer": "Delaware"},
    "termination_for_convenience": {"clause": "Either party may terminate for convenience on ninety (90) days "
                                    "written notice.", "page": "3", "present": "yes"},
    "cap_on_liability": {"clause": "Neither party's total liability shall exceed the fees paid in the twelve (12) "
                         "months before the claim.", "page": "3", "present": "yes"},
    "insurance": {"clause": "The Provider shall maintain professional liability insurance of 2,000,000 US dollars.",
                  "page": "3", "present": "yes"},
}  # fmt: skip


def store_sample_cells(ctx, document_id: int, label: str = "sample answers stored for this picture") -> int:  # type: ignore[no-untyped-def]
    """A contract_review run whose answers are SAMPLE_CELLS ('not stated' / absent for the other fields),
    grounded and stored through app/ as a run does; the run's model line says they are samples."""
    from app.extraction import ExtractionService
    from app.extraction_cells import cell_from_answer
    from app.extraction_prompt import FieldAsk
    from inference.events import GenerationStats

    service = ExtractionService(ctx)
    template = service.templates.get("contract_review")
    run = service.start_run(template, [document_id], resume=False)
    sources = service.chat.sources([document_id])
    raw = {
        f.key: SAMPLE_CELLS.get(f.key)
        or ({"clause": "", "present": "no"} if f.yes_no else {"evidence": "", "answer": "not stated"})
        for f in template.fields
    }
    cells = [cell_from_answer(document_id, FieldAsk(f), raw[f.key], sources) for f in template.fields]
    service._store(run, cells, raw, GenerationStats(900, 0, 40, 100.0, 900.0, 4096, "eos"))
    with ctx.db.atomic():
        ctx.db.execute("UPDATE extraction_runs SET model = ?, status = 'complete' WHERE id = ?", [label, run])
    return run


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
