"""Search: FTS5 over document text and conversations, BM25 order, highlighted snippets, anchors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.context import AppContext
from app.errors import FolioError
from app.store.conversations import Conversations
from app.store.search import Search, fts_query
from tests.conftest import run_folio
from tests.fixtures.pdfs import GOVERNING_LAW_PAGE, make_text_pdf


def test_document_hits_have_anchors_and_highlighted_snippets(ctx: AppContext, contract_pdf: Path) -> None:
    doc = ctx.library.add(contract_pdf).document
    hits = Search(ctx.db).query("governed Delaware")
    assert hits, "expected a hit"
    top = hits[0]
    assert (top.kind, top.document_id, top.page, top.title) == ("document", doc.id, GOVERNING_LAW_PAGE, doc.title)
    words = [top.snippet[a:b] for a, b in top.highlights]
    assert "governed" in words and "Delaware" in words
    assert top.marked("<", ">").count("<") == len(top.highlights)
    assert top.anchor == f"#{doc.id} p. {GOVERNING_LAW_PAGE}"


def test_bm25_ranks_the_denser_match_first(ctx: AppContext, tmp_path: Path) -> None:
    filler = " ".join(["The parties agree to the schedule."] * 30)
    sparse = make_text_pdf(tmp_path / "sparse.pdf", [filler + " Indemnification applies once."])
    dense = make_text_pdf(
        tmp_path / "dense.pdf", ["Indemnification. The indemnification covers all indemnification claims."]
    )
    sparse_id = ctx.library.add(sparse).document.id
    dense_id = ctx.library.add(dense).document.id
    hits = Search(ctx.db).query("indemnification")
    assert [h.document_id for h in hits] == [dense_id, sparse_id]
    assert hits[0].score < hits[1].score  # SQLite's bm25(): lower is better


def test_conversations_are_searched_too(ctx: AppContext, contract_pdf: Path) -> None:
    doc = ctx.library.add(contract_pdf).document
    convs = Conversations(ctx.db)
    conv = convs.create([doc.id], "Termination question")
    convs.add_message(conv, "user", "Can the Client terminate for convenience?")
    msg = convs.add_message(conv, "assistant", "Yes, on ninety (90) days written notice [p. 3].")
    hits = Search(ctx.db).query("ninety days", documents=False)
    assert [(h.kind, h.conversation_id, h.message_id) for h in hits] == [("message", conv, msg)]
    assert hits[0].anchor == f"conversation {conv}, message {msg}"
    both = Search(ctx.db).query("ninety days")
    assert {h.kind for h in both} == {"document", "message"}


@pytest.mark.parametrize("query", ['"ninety', "-ninety", "ninety*", "(ninety)", "ninety^", "+ninety"])
def test_fts_syntax_in_user_input_is_just_text(ctx: AppContext, contract_pdf: Path, query: str) -> None:
    ctx.library.add(contract_pdf)
    hits = Search(ctx.db).query(query)  # no SQLite syntax error, and the word is searched as a word
    assert [(h.kind, h.page) for h in hits] == [("document", 3)]
    assert "ninety" in hits[0].snippet.lower()


@pytest.mark.parametrize("query", ["AND OR NOT", "NEAR(ninety", "text:ninety", "col:value", "a*b*"])
def test_fts_operators_alone_find_only_those_words(ctx: AppContext, contract_pdf: Path, query: str) -> None:
    ctx.library.add(contract_pdf)
    words = [w.lower() for w in re.findall(r"\w+", query)]
    for hit in Search(ctx.db).query(query):
        assert all(w in hit.snippet.lower() for w in words), hit


def test_query_building() -> None:
    assert fts_query('"laws of the State" delaw*') == '"laws of the State" "delaw"*'
    assert fts_query('say "AND" OR') == '"say" "AND" "OR"'
    with pytest.raises(FolioError):
        Search.query(Search(None), "  ** ")  # type: ignore[arg-type]


def test_cli_search(contract_pdf: Path) -> None:
    run_folio("add", str(contract_pdf))
    code, out, err = run_folio("search", "thirty days invoice")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("#1 p. 2 Master Services Agreement")
    assert "[thirty]" in out and "[invoice]" in out
    code, out, _ = run_folio("search", "zebra")
    assert code == 0 and out.strip() == "No matches."


def test_document_pages_rank_one_documents_pages(ctx: AppContext, tmp_path: Path) -> None:
    pages = ["Fees and payment.", "The Supplier may audit the books and records.", "Audit rights survive.", "Misc."]
    doc = ctx.library.add(make_text_pdf(tmp_path / "a.pdf", pages)).document.id
    other = ctx.library.add(make_text_pdf(tmp_path / "b.pdf", ["Audit audit audit books records."])).document.id
    search = Search(ctx.db)
    assert search.document_pages(doc, ["audit", "books", "records"]) == [2, 3]
    assert search.document_pages(doc, ["audit"], limit=1) in ([2], [3])
    assert search.document_pages(other, ["audit"]) == [1]
    assert search.document_pages(doc, ["escrow"]) == [] and search.document_pages(doc, ['"', "*"]) == []
    # The passages are the page's own words around the match, trimmed to the asked number of tokens.
    found = search.document_passages(doc, ["audit", "books"], limit=2, tokens=4)
    assert [p.page for p in found] == [2, 3] and found[0].text == "audit the books and"
    assert found[1].text == "Audit rights survive." and found[0].label == "2"
