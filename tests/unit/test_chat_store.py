"""What ChatService stores about a finished answer, checked against what the contract really says
(the demo model rarely cites, so the e2e test cannot be relied on to exercise citations)."""

from __future__ import annotations

from pathlib import Path

from app.chat import ChatService
from app.context import AppContext
from app.engine.documents import read_documents
from inference.events import GenerationStats
from tests.fixtures.pdfs import GOVERNING_LAW_PAGE


def test_a_finished_answer_is_stored_with_checked_citations(ctx: AppContext, contract_pdf: Path) -> None:
    doc = ctx.library.add(contract_pdf).document
    service = ChatService(ctx)  # no engine is started: nothing here generates
    documents = read_documents(ctx, [doc.id])
    exchange = service.begin(documents, "Which law governs?", conversation_id=None, label="m", sha256=None, think=False)
    assert service.conversations.message(exchange.answer_id).status == "incomplete"
    answer = (
        f'It is governed by "the laws of the State of Delaware" [p. {GOVERNING_LAW_PAGE}]. '
        'Payment is due "within ten days" [p. 9].'
    )
    stats = GenerationStats(900, 0, 30, 100.0, 900.0, 4096, "eos")
    stored = service.finish(exchange.answer_id, documents, answer, "", stats)
    assert stored.status == "complete" and stored.text == answer and stored.completion_tokens == 30
    by_text = {c["text"]: c for c in stored.citations}
    law = by_text[f"[p. {GOVERNING_LAW_PAGE}]"]
    assert law["valid"] is True and law["quote_found"] is True  # the contract says so on that page
    assert by_text["[p. 9]"]["valid"] is False  # a four-page contract has no page 9
    verdicts = [c["verdict"] for c in stored.claims]
    assert verdicts[0] == "quoted" and verdicts[1] != "quoted"
    entries = [e for e in ctx.audit.entries() if e.action == "question"]
    assert [e.documents for e in entries] == [[doc.sha256]]  # on record before the model sees it


def test_why_nothing_was_drafted_is_kept_with_the_answer(ctx: AppContext, contract_pdf: Path) -> None:
    doc = ctx.library.add(contract_pdf).document
    service = ChatService(ctx)
    documents = read_documents(ctx, [doc.id])
    exchange = service.begin(documents, "Which law governs?", conversation_id=None, label="m", sha256=None, think=False)
    note = "no drafts: checking 2 guesses costs 2.9x writing one token on this computer"
    stats = GenerationStats(900, 0, 30, 100.0, 900.0, 4096, "eos", draft_note=note)
    service.finish(exchange.answer_id, documents, "Delaware.", "", stats)
    reread = ChatService(ctx.reopen()).conversations.message(exchange.answer_id)
    assert (reread.drafted_tokens, reread.draft_note) == (0, note)
