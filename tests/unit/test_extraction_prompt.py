"""The words of one extraction request: field blocks, word-search hints, chosen pages, the design key."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.context import AppContext
from app.engine.documents import prompt_documents
from app.extraction.prompt import (
    FieldAsk,
    Look,
    PageChoice,
    ask_field,
    choose_pages,
    design_key,
    extraction_messages,
    field_block,
    look_messages,
    pages_of,
    search_words,
)
from app.extraction.templates import TemplateField, TemplateStore
from app.store.search import Passage
from assets import read_text
from inference.chat_format import Message
from inference.prompt import build_messages
from tests.fixtures.pdfs import make_text_pdf

LAW = TemplateField("governing_law", "Governing Law", "Which law governs.", search="governed laws construed")
AUDIT = TemplateField("audit_rights", "Audit Rights", "A party may audit books.", "yes_no", "audit inspect books")


def test_field_blocks_ask_for_the_evidence_first() -> None:
    text = field_block(FieldAsk(LAW, "A word search found likely passages on [p. 4]."))
    assert text.startswith('Now for the table, "governing_law": Governing Law\nWhat counts as the Governing Law: Which')
    assert text.index('"evidence"') < text.index('"page"') < text.index('"answer"') < text.index("not stated")
    clause = field_block(FieldAsk(AUDIT))
    assert "(a kind of clause)" in clause and clause.index('"clause"') < clause.index('"present"')
    assert "{hints}" not in clause and "\n\n" not in clause  # no empty hint line
    # A user's field text is never read as a placeholder.
    odd = field_block(FieldAsk(TemplateField("x", "{description}", "{name} {hints} {candidates}")))
    assert odd.startswith(
        'Now for the table, "x": {description}\nWhat counts as the {description}: {name} {hints} {candidates}'
    )


def test_a_clause_is_picked_from_the_passages_the_search_offers() -> None:
    offered = (Passage(2, None, "The Supplier may audit the books"), Passage(5, "v", "Audit fees are paid"))
    ask = FieldAsk(AUDIT, candidates=offered)
    text = field_block(ask)
    assert ask.choosing and not FieldAsk(AUDIT).choosing
    assert '(1) [p. 2] "The Supplier may audit the books"\n(2) [p. v] "Audit fees are paid"' in text
    assert text.index('"passage"') < text.index('"present"') and "0 if none" in text
    # A short answer picks too: the passage's number, then (after 0 only) the copied evidence, then the answer.
    law = field_block(FieldAsk(LAW, candidates=offered))
    assert FieldAsk(LAW, candidates=offered).choosing and '(2) [p. v] "Audit fees are paid"' in law
    assert law.index('"stated"') < law.index('"passage"') < law.index('"evidence"') < law.index('"answer"')
    assert "0 if none" in law


def test_passages_are_offered_or_the_words_are_said_to_be_nowhere(ctx: AppContext, tmp_path: Path) -> None:
    pdf = make_text_pdf(tmp_path / "c.pdf", ["Fees.", "Payment terms.", "This Agreement is governed by Texas law."])
    doc = ctx.library.add(pdf).document.id
    assert ask_field(ctx, doc, LAW).candidates == (Passage(3, "3", "This Agreement is governed by Texas law."),)
    assert ask_field(ctx, doc, LAW, PageChoice((1, 2), 3)).hint == (
        "A word search for words such a passage uses (governed, laws, construed) found none."
    )
    assert ask_field(ctx, doc, LAW, hints=False) == FieldAsk(LAW)
    nowhere = ask_field(ctx, doc, AUDIT)
    assert nowhere.hint.endswith("(audit, inspect, books) found none.") and not nowhere.choosing
    assert search_words(TemplateField("k", "Cap On Liability", "The maximum amount of a party's liability.")) == [
        "cap",
        "liability",
        "maximum",
        "amount",
    ]


def test_a_short_answer_is_offered_the_opening_first(ctx: AppContext, tmp_path: Path) -> None:
    """Names, parties and dates stand in a contract's opening, which BM25 ranks low among short
    passages: it comes first when it uses one of the field's words, and is never offered twice."""
    opening = "SUPPLY AGREEMENT\nThis Supply Agreement is made between Acme LLC and Beta Inc. on 1 May 2020."
    pages = [opening, "Each party may end it.", "The parties agree that Acme LLC delivers parts."]
    doc = ctx.library.add(make_text_pdf(tmp_path / "s.pdf", pages)).document.id
    parties = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review").fields[1]
    offered = ask_field(ctx, doc, parties).candidates
    assert offered[0] == Passage(1, "1", " ".join(opening.split()))
    assert sorted(p.page for p in offered) == [1, 2, 3]  # the opening's own snippet is not offered again
    assert ask_field(ctx, doc, LAW).candidates == ()  # the opening holds none of its words
    assert ask_field(ctx, doc, parties, PageChoice((2, 3), 3)).candidates[0].page != 1  # not among the pages read


def test_the_request_starts_with_the_chat_prefix_and_names_its_pages(ctx: AppContext, tmp_path: Path) -> None:
    pages = ["Fees are due monthly.", "Delivery is free.", "Prices are fixed.", "", "Notices go by mail."]
    pages[3] = "The Supplier may audit the books of the Customer."
    doc = ctx.library.add(make_text_pdf(tmp_path / "long.pdf", pages)).document
    asks = [ask_field(ctx, doc.id, AUDIT), ask_field(ctx, doc.id, LAW)]
    whole = extraction_messages(prompt_documents(ctx, [doc.id]), asks)
    assert "[p. 5]" in whole[0].content
    assert '(1) [p. 4] "The Supplier may audit the books of the Customer."' in whole[-1].content
    assert "(governed, laws, construed) found none" in whole[-1].content
    choice = choose_pages(ctx, doc.id, [AUDIT], budget_tokens=40)
    assert choice.partial and choice.pages is not None and 1 in choice.pages and 4 in choice.pages
    assert choice.note().startswith(f"only {len(choice.pages)} of 5 pages (")
    read = prompt_documents(ctx, [doc.id], pages=pages_of(doc.id, choice))
    partial = extraction_messages(read, [FieldAsk(AUDIT)], choice)
    system = partial[0].content
    assert "[p. 4]" in system and "[p. 5]" not in system and "chosen by word search" in system
    assert PageChoice().note() == "" and not PageChoice().partial
    # The runner measures the prompt with no page at all before it chooses: that must render too.
    assert PageChoice((), 5).note().startswith("only 0 of 5 pages (none), chosen by word search")


def test_a_long_document_is_read_from_its_opening_then_by_word_search(
    ctx: AppContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The term and its renewal stand early in a contract; riders at the back repeat the search's words
    and win the word search. The opening pages (up to a share of the budget) are read first."""
    from app.extraction import prompt

    filler = "The Franchisee shall operate the business in accordance with the manual. " * 5
    pages = [f"FRANCHISE AGREEMENT {filler}", f"Term. The term is ten years. You may renew once. {filler}"]
    pages += [f"{filler}" for _ in range(3, 9)]
    pages += [f"State rider: renewal, renewal notice, renewal of the franchise, renewal fee. {filler}"] * 12
    doc = ctx.library.add(make_text_pdf(tmp_path / "franchise.pdf", pages)).document
    renewal = TemplateField("renewal_term", "Renewal Term", "How long it renews for.", search="renew renewal")
    per_page = doc.token_estimate / len(pages)
    budget = int(per_page * 14.5)  # about 13 of 20 pages fit; 15% of that holds the first page and one more
    today = choose_pages(ctx, doc.id, [renewal], budget)
    assert today.pages is not None and today.pages[:2] == (1, 2) and len(today.pages) >= 10
    assert set(today.pages[2:]) < set(range(9, 21))  # then the word search's pages, the riders
    monkeypatch.setattr(prompt, "OPENING_SHARE", 0.0)  # the word search alone: the riders, not the term
    searched = choose_pages(ctx, doc.id, [renewal], budget)
    assert searched.pages is not None and 1 in searched.pages and 2 not in searched.pages


def test_a_short_answer_is_asked_plainly_first_then_its_form_follows(ctx: AppContext, tmp_path: Path) -> None:
    doc = ctx.library.add(make_text_pdf(tmp_path / "law.pdf", ["This Agreement is governed by the laws of Texas."]))
    documents = prompt_documents(ctx, [doc.document.id])
    asked = replace(LAW, question="Which law governs this agreement?")
    look = look_messages(documents, asked)
    assert [m.role for m in look] == ["system", "user"] and look[-1].content == "Which law governs this agreement?"
    # The chat's very prefix: instructions and the document, nothing of the extraction in it.
    chat = build_messages(read_text("prompts", "answer.md"), documents, [], "x")
    assert look[0] == chat[0]
    answered = Look(asked.plain_question, "Texas law governs it [p. 1].")
    form = extraction_messages(documents, [ask_field(ctx, doc.document.id, asked)], None, answered)
    assert [m.role for m in form] == ["system", "user", "assistant", "user"]
    assert form[:3] == [*look, Message("assistant", "Texas law governs it [p. 1].")]
    assert form[-1].content.startswith("Answer from the document above.") and '"governing_law"' in form[-1].content
    # A field without a question of its own is asked from its name and description.
    assert LAW.plain_question == "What does this document state as its governing law (Which law governs)?"


def test_design_key_follows_the_prompt_files(monkeypatch: pytest.MonkeyPatch) -> None:
    import app.extraction.prompt as prompt

    before = design_key()
    assert before.startswith(f"v{prompt.DESIGN_VERSION}-") and design_key() == before
    original = prompt.read_text
    monkeypatch.setattr(prompt, "read_text", lambda *a: original(*a) + ("!" if a[-1] == "extract_field.md" else ""))
    assert design_key() != before


def test_contract_review_marks_short_answers_and_yes_no_clauses(ctx: AppContext) -> None:
    template = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
    short = [f.name for f in template.fields if not f.yes_no]
    assert short == [
        "Document Name",
        "Parties",
        "Agreement Date",
        "Effective Date",
        "Expiration Date",
        "Renewal Term",
        "Notice Period To Terminate Renewal",
        "Governing Law",
    ]
    assert sum(f.yes_no for f in template.fields) == 33 and all(f.search for f in template.fields)
    assert replace(template.fields[0], kind="yes_no").yes_no
