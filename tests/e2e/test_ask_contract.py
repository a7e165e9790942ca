"""End to end with the REAL starter model: add a contract, ask, and find it all in SQLite."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from app.citations.grounding import FOUND, VERDICTS
from app.citations.verdicts import mark
from app.context import open_app
from tests.conftest import run_folio
from tests.fixtures.pdfs import GOVERNING_LAW_PAGE

pytestmark = pytest.mark.e2e


def test_cli_add_ask_show_conversation(starter_home: Path, contract_pdf: Path) -> None:
    code, out, err = run_folio("add", str(contract_pdf))
    assert code == 0, err
    assert "added: #1 Master Services Agreement (4 pages" in out

    code, out, err = run_folio("ask", str(contract_pdf), "Which law governs this agreement?")
    assert code == 0, err
    assert "Demo model" in err  # the starter model is always labelled as a demo

    db = sqlite3.connect(starter_home / "data" / "folio.sqlite3")
    db.row_factory = sqlite3.Row
    messages = db.execute("SELECT * FROM messages ORDER BY seq").fetchall()
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["text"] == "Which law governs this agreement?"
    reply = messages[1]
    answer = reply["text"]
    assert answer and out.startswith(answer)  # the answer streams first, the verdicts follow it
    assert reply["status"] == "complete"
    assert reply["prompt_tokens"] > 300 and 0 < reply["completion_tokens"] <= 48
    assert reply["prefill_ms"] > 0 and reply["generate_ms"] > 0
    assert "demo model" in reply["model"]
    assert len(reply["model_sha256"]) == 64

    # Whatever the demo model wrote, what is stored about it must be true of the contract itself.
    pages = {n: " ".join(contract_text(contract_pdf, n).lower().split()) for n in range(1, 5)}
    for cite in json.loads(reply["citations"]):
        assert answer[cite["start"] : cite["end"]] == cite["text"]
        numbers = [int(label) for label in cite["labels"] if label.isdigit()]
        exists = (
            cite["kind"] == "page" and numbers == [int(x) for x in cite["labels"]] and all(1 <= n <= 4 for n in numbers)
        )
        assert cite["valid"] == exists, cite
        if cite["quote"] and cite["valid"] and " ".join(cite["quote"].lower().split()) in pages[numbers[0]]:
            assert cite["quote_found"] is True
    claims = db.execute("SELECT * FROM claims WHERE message_id = ? ORDER BY seq", [reply["id"]]).fetchall()
    assert claims, "every answer is split into claims, each with a verdict"
    for claim in claims:
        assert answer[claim["char_start"] : claim["char_end"]] == claim["text"]
        assert claim["verdict"] in VERDICTS
        if claim["verdict"] in FOUND:
            assert claim["page"] in pages and claim["passage"].lower() in pages[claim["page"]], dict(claim)
        else:
            assert claim["page"] is None or claim["reason"] == "not_checkable"
    shown = [c for c in claims if mark(dict(c)) is not None]
    assert out.count("\n  ") >= len(shown)  # one footer line per checked claim
    conv_id = reply["conversation_id"]
    db.close()

    code, out, err = run_folio("show-conversation", str(conv_id))
    assert code == 0, err
    assert "Which law governs this agreement?" in out
    assert answer.splitlines()[0] in out
    assert "tokens:" in out

    code, out, err = run_folio("ask", "--conversation", str(conv_id), "Who are the parties?", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["conversation_id"] == conv_id and result["answer"]
    assert [c["text"] for c in result["claims"]] == [result["answer"][c["start"] : c["end"]] for c in result["claims"]]
    assert all(c["verdict"] in VERDICTS and c["explanation"] for c in result["claims"])
    assert sum(result["counts"].values()) == sum(1 for c in result["claims"] if c["mark"])


def contract_text(pdf: Path, page: int) -> str:
    """The page's text as PyMuPDF reads it from the file: an oracle apart from the library's copy."""
    import pymupdf

    with pymupdf.open(pdf) as doc:
        return str(doc[page - 1].get_text())


def test_follow_up_continues_the_conversation(starter_home: Path, contract_pdf: Path) -> None:
    from app.chat import ChatService
    from app.engine.documents import prompt_documents
    from app.engine.progress import Progress

    ctx = open_app()
    service = ChatService(ctx)
    try:
        doc = ctx.library.add(contract_pdf).document
        blocks = prompt_documents(ctx, [doc.id])[0].blocks
        law_block = next(b for b in blocks if "State of Delaware" in b.text)
        assert law_block.marker == f"[p. {GOVERNING_LAW_PAGE}]"
        events: list[object] = []
        first = service.ask([doc.id], "Which law governs this agreement?", on_event=events.append)
        assert any(isinstance(e, Progress) and e.reading for e in events)
        second = service.ask([], "And how long is the term?", conversation_id=first.conversation_id)
        assert second.conversation_id == first.conversation_id
        assert [m.role for m in service.conversations.messages(first.conversation_id)] == [
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        # The follow-up prompt carried the first exchange, so it is longer than the first prompt.
        assert (second.prompt_tokens or 0) > (first.prompt_tokens or 0)
    finally:
        service.close()
        ctx.close()
