"""Grounding against real stored documents: fixed answer texts (true, wrong page, uncited, invented,
paraphrased numbers and dates) over a generated contract in the library, and over CUAD contracts
from the shared corpus when it is there."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from app.grounding import ADDED, EXEMPT, QUOTED, SUPPORTED, UNSUPPORTED, WRONG_PAGE, Cited, Sources, ground_answer
from tests.conftest import CORPUS
from tests.fixtures.pdfs import GOVERNING_LAW_PAGE, make_contract_pdf

LAW = "The agreement is governed by the laws of the State of Delaware"


@pytest.fixture
def contract(ctx, tmp_path: Path) -> Sources:  # type: ignore[no-untyped-def]
    doc = ctx.library.add(make_contract_pdf(tmp_path / "contract.pdf")).document
    return Sources.load(ctx, [doc.id])


def verdicts(answer: str, sources: Sources) -> list[tuple[str, int | None]]:
    return [(v.grounding.verdict, v.grounding.page) for v in ground_answer(answer, sources).claims]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # the quoted words are on the cited page
        (
            'It is governed by Delaware law: "governed by and construed in accordance with the laws of the State '
            f'of Delaware" [p. {GOVERNING_LAW_PAGE}].',
            [(QUOTED, GOVERNING_LAW_PAGE)],
        ),
        # no quote: the cited page holds the facts; citations in words count as citations
        (f"{LAW} [p. {GOVERNING_LAW_PAGE}].", [(SUPPORTED, GOVERNING_LAW_PAGE)]),
        (f"{LAW}, as stated on page {GOVERNING_LAW_PAGE}.", [(SUPPORTED, GOVERNING_LAW_PAGE)]),
        ("Under Section 7, Delaware law governs.", [(SUPPORTED, GOVERNING_LAW_PAGE)]),
        # the cited page does not hold it, another does
        (f"{LAW} [p. 1].", [(WRONG_PAGE, GOVERNING_LAW_PAGE)]),
        # nothing cited: Folio attaches the page
        (f"{LAW}.", [(ADDED, GOVERNING_LAW_PAGE)]),
        # invented or altered facts: no page holds them
        ("The agreement is governed by the laws of the State of Nevada [p. 4].", [(UNSUPPORTED, None)]),
        ("The Client pays a monthly fee of $15,000 [p. 2].", [(UNSUPPORTED, None)]),
        ("It was entered into on March 4, 2025.", [(UNSUPPORTED, None)]),
        ("The parties are Northwind Analytics LLC and Fabrikam Inc.", [(UNSUPPORTED, None)]),
        # the same facts written another way: amounts, dates, durations, number words
        ("The Client pays a monthly fee of $12,500 [p. 2].", [(SUPPORTED, 2)]),
        ("The agreement was made on 3 March 2025. It is dated 3/3/25.", [(ADDED, 1), (ADDED, 1)]),
        ("Either party may terminate for convenience with 90 days' written notice.", [(ADDED, 3)]),
        ("Confidential information must be kept secret for five years after termination.", [(ADDED, 2)]),
        ("The agreement runs for 24 months.", [(ADDED, 3)]),
        # needs no source
        ("The agreement does not specify a renewal term. I hope this helps!", [(EXEMPT, None), (EXEMPT, None)]),
    ],
)
def test_fixed_answers_over_a_stored_contract(contract: Sources, answer: str, expected: list[tuple[str, int]]) -> None:
    assert verdicts(answer, contract) == expected


def test_a_quote_on_another_page_and_a_quote_that_is_nowhere(contract: Sources) -> None:
    moved = ground_answer('The fee is "a monthly fee of 12,500 US dollars" [p. 1].', contract).claims[0].grounding
    assert (moved.verdict, moved.page, moved.quote_found) == (WRONG_PAGE, 2, True)
    made_up = ground_answer(f'{LAW}: "Delaware courts shall have sole say" [p. 4].', contract).claims[0].grounding
    assert made_up.quote_found is False  # the facts still stand on p. 4; the misquote is on record
    assert (made_up.verdict, made_up.page) == (SUPPORTED, GOVERNING_LAW_PAGE)


def test_the_passage_is_the_page_text_and_says_what_was_checked(contract: Sources) -> None:
    result = ground_answer("The Client pays a monthly fee of $12,500 [p. 2].", contract).claims[0].grounding
    assert "12,500 US dollars" in result.passage and "$12,500" in result.checked
    page_text = next(u.text for u in contract.units if u.page == 2)
    assert " ".join(page_text.split()).find(result.passage) >= 0
    assert result.cited == ("[p. 2]",)


def test_a_cited_page_that_does_not_exist(contract: Sources) -> None:
    supported_elsewhere = ground_answer(f"{LAW} [p. 9].", contract).claims[0].grounding
    assert (supported_elsewhere.verdict, supported_elsewhere.page) == (WRONG_PAGE, GOVERNING_LAW_PAGE)
    nowhere = ground_answer("The agreement is governed by Nevada law [p. 9].", contract).claims[0].grounding
    assert (nowhere.verdict, nowhere.reason) == (UNSUPPORTED, "no_such_page")


def test_the_api_grounds_one_extraction_cell() -> None:
    pages = ["Cover page of the lease.", "The annual rent is two hundred thousand euros (EUR 200,000)."]
    sources = Sources.from_pages(pages)
    cell = sources.ground("EUR 200,000", context="Annual Rent", cited=(Cited(page=2, text="2"),))
    assert (cell.verdict, cell.page) == (SUPPORTED, 2)
    wrong = sources.ground("200,000 euros", context="Annual Rent", cited=(Cited(page=1),))
    assert (wrong.verdict, wrong.page) == (WRONG_PAGE, 2)
    quoted = sources.ground(
        "EUR 200,000", quote="The annual rent is two hundred thousand euros", cited=(Cited(page=2),)
    )
    assert quoted.verdict == QUOTED
    assert sources.ground("EUR 300,000", context="Annual Rent").verdict == UNSUPPORTED


# -- real contracts (CUAD, ../shared/corpus) ----------------------------------------------------
GAINSCO = CORPUS / "contracts_pdf" / "GAINSCOINC_01_21_2010-EX-10.41-SPONSORSHIP AGREEMENT.PDF"
FUSE = CORPUS / "contracts_pdf" / "FuseMedicalInc_20190321_10-K_EX-10.43_11575454_EX-10.43_Distributor Agreement.pdf"


@functools.cache
def _cuad_pages(path: Path) -> tuple[str, ...]:
    from ingest import load

    document = load(path)
    pages: dict[int, list[str]] = {}
    for segment in document.segments:
        if segment.text and segment.anchor.page is not None:
            pages.setdefault(segment.anchor.page, []).append(segment.text)
    return tuple("\n".join(pages.get(n, [])) for n in range(1, document.page_count + 1))


def _page_with(pages: tuple[str, ...], words: str) -> int:
    from app.quotes import normalize_for_match

    return next(i for i, text in enumerate(pages, start=1) if normalize_for_match(words) in normalize_for_match(text))


@pytest.mark.skipif(not GAINSCO.exists(), reason=f"the CUAD corpus is not at {CORPUS}")
def test_gainsco_the_governing_law_cited_on_the_first_page_is_found_on_its_real_page() -> None:
    """The case that opened issue 13: Texas is right, p. 1 is not where the clause is."""
    pages = _cuad_pages(GAINSCO)
    law_page = _page_with(pages, "internal laws of the State of Texas")
    assert law_page != 1
    sources = Sources.from_pages(list(pages))
    answer = (
        "The agreement is governed by the laws of the State of Texas [p. 1]. "
        "The term runs from January 1, 2010 through December 31, 2010. "
        "The agreement is governed by the laws of the State of New York [p. 1]. "
        "The sponsorship starts on 1/1/10."
    )
    assert verdicts(answer, sources) == [
        (WRONG_PAGE, law_page),
        (ADDED, _page_with(pages, "shall commence on January 1, 2010")),
        (UNSUPPORTED, None),
        (ADDED, _page_with(pages, "shall commence on January 1, 2010")),
    ]


@pytest.mark.skipif(not FUSE.exists(), reason=f"the CUAD corpus is not at {CORPUS}")
def test_fuse_dates_and_durations_written_otherwise() -> None:
    pages = _cuad_pages(FUSE)
    sources = Sources.from_pages(list(pages))
    term_page = _page_with(pages, "initial term of one (1) years")
    answer = (
        "The agreement is dated March 29, 2018 [p. 1].\n\n"
        "- The initial term is one year.\n"
        "- Either party may end it with 12 months' prior written notice.\n"
        "- Either party may end it with 6 months' prior written notice.\n"
        "- The agreement is governed by Ohio law.\n"
        "- The agreement is governed by Texas law."
    )
    assert verdicts(answer, sources) == [
        (SUPPORTED, 1),
        (ADDED, term_page),
        (ADDED, term_page),
        (UNSUPPORTED, None),
        (ADDED, _page_with(pages, "construed in accordance with Ohio law")),
        (UNSUPPORTED, None),
    ]


def test_verdicts_are_stored_with_the_message_and_read_back(ctx, contract: Sources) -> None:  # type: ignore[no-untyped-def]
    import json

    from app.conversations import Conversations

    answer = f"{LAW} [p. 1]. The Client pays $15,000 a month."
    grounded = ground_answer(answer, contract)
    conversations = Conversations(ctx.db)
    conversation = conversations.create(contract.document_ids, "t")  # type: ignore[arg-type]
    message = conversations.add_message(conversation, "assistant", "", status="incomplete")
    claims = [v.to_dict() for v in grounded.claims]
    conversations.update_message(message, claims=claims, text=answer, status="complete")
    stored = conversations.message(message)
    assert stored.claims == json.loads(json.dumps(claims))  # tuples come back as lists
    assert [c["verdict"] for c in stored.claims] == [WRONG_PAGE, UNSUPPORTED]
    assert stored.claims[1]["missing"] == ["$15,000"] and stored.claims[0]["quote_found"] is None
    conversations.update_message(message, claims=claims[:1])  # replaced, not added to
    assert len(conversations.message(message).claims) == 1
    conversations.delete(conversation)
    assert ctx.db.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
