"""Grounding against real stored documents: fixed answer texts (true, wrong page, uncited, invented,
paraphrased numbers and dates) over a generated contract in the library, and over CUAD contracts
from the shared corpus when it is there."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from app.citations.grounding import (
    ADDED,
    EXEMPT,
    QUOTED,
    SUPPORTED,
    UNSUPPORTED,
    WRONG_PAGE,
    Cited,
    Sources,
    ground_answer,
)
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
        # a part found, a part not (issue 29): the parties named in part are partly supported, with the
        # invented one named as missing (see test_a_sentence_is_judged_fact_by_fact)
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


def test_a_sentence_is_judged_fact_by_fact(contract: Sources) -> None:
    """What stands on the page is found there even when the sentence carries something that does not
    (an invented pointer, a party that is not in the contract); the mark names what was not found. A
    claim whose point is what is missing (another law, another amount) stays unsupported."""
    from app.citations.grounding import PARTLY
    from app.citations.verdicts import explain, mark

    (claim,) = ground_answer("The parties are Northwind Analytics LLC and Fabrikam Inc.", contract).claims
    g = claim.grounding
    assert g.verdict == PARTLY and g.page == 1 and "Fabrikam" in g.missing
    said = mark(claim.to_dict())
    assert said is not None and said.startswith("◐ partly p. 1") and "Fabrikam" in said
    assert "Not in the document at all" in explain(claim.to_dict()) and "Fabrikam" in explain(claim.to_dict())
    # A pointer the model invented beside a date the page holds.
    (claim,) = ground_answer(
        "The agreement was made on 3 March 2025, as indicated in Exhibit Q [p. 1].", contract
    ).claims
    assert claim.grounding.verdict == PARTLY and claim.grounding.page == 1 and "Exhibit" in claim.grounding.missing
    # The point of the claim is what is missing: unsupported, whatever else the page holds.
    for wrong in ("The agreement is governed by the laws of the State of Nevada [p. 4].",
                  "The Client pays a monthly fee of $15,000 [p. 2]."):  # fmt: skip
        (claim,) = ground_answer(wrong, contract).claims
        assert claim.grounding.verdict == UNSUPPORTED, wrong


def test_a_hyphenated_name_is_found_as_its_words() -> None:
    sources = Sources.from_pages(["NON-COMPETITION AGREEMENT\nThis Agreement is made by Acme Corp. and Beta LLC."])
    title = "The Non-Competition Agreement"
    assert sources.ground(title, quote="NON-COMPETITION AGREEMENT", cited=(Cited(page=1),)).verdict == QUOTED
    assert sources.ground("The Non-Solicitation Agreement", cited=(Cited(page=1),)).verdict == UNSUPPORTED


# -- real contracts (CUAD, ../shared/corpus) ----------------------------------------------------
GAINSCO = CORPUS / "contracts_pdf" / "GAINSCOINC_01_21_2010-EX-10.41-SPONSORSHIP AGREEMENT.PDF"
FUSE = CORPUS / "contracts_pdf" / "FuseMedicalInc_20190321_10-K_EX-10.43_11575454_EX-10.43_Distributor Agreement.pdf"


@functools.cache
def _cuad_pages(path: Path) -> tuple[str, ...]:
    from ingest.load import load

    document = load(path)
    pages: dict[int, list[str]] = {}
    for segment in document.segments:
        if segment.text and segment.anchor.page is not None:
            pages.setdefault(segment.anchor.page, []).append(segment.text)
    return tuple("\n".join(pages.get(n, [])) for n in range(1, document.page_count + 1))


def _page_with(pages: tuple[str, ...], words: str) -> int:
    from app.citations.quotes import normalize_for_match

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

    from app.store.conversations import Conversations

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


# -- Word files and e-mails: clauses, paragraphs and attachments --------------------------------
def test_word_clauses_ground_like_pages_with_tracked_changes_read_as_accepted(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The LibreOffice-written contract: clause 2.1's payment term was changed from thirty to sixty
    days with tracked changes; claims cite [§ 2.1] and get their verdicts by clause."""
    from app.citations.targets import claim_targets
    from app.citations.verdicts import mark
    from tests.fixtures.office import DELETED_BY, libreoffice_contract, soffice

    if soffice() is None:
        pytest.skip("LibreOffice not installed (apt-get install libreoffice-writer-nogui)")
    doc = ctx.library.add(libreoffice_contract(tmp_path)).document
    sources = Sources.load(ctx, [doc.id])
    clause = next(s.page for s in ctx.library.segments(doc.id) if s.label == "2.1")

    def grounded(answer: str) -> tuple[str, int | None, str, str | None]:
        (verdict,) = ground_answer(answer, sources).claims
        g = verdict.grounding
        return g.verdict, g.page, g.place, mark(verdict.to_dict())

    payable = "Invoices are payable within sixty (60) days of receipt"
    assert grounded(f"{payable} [§ 2.1].") == (SUPPORTED, clause, "§ 2.1", "✓ supported § 2.1")
    quoted = 'Invoices are payable "within sixty (60) days of receipt" [§ 2.1].'
    assert grounded(quoted)[:3] == (QUOTED, clause, "§ 2.1")
    assert grounded(f"{payable} [§ 1.1].") == (WRONG_PAGE, clause, "§ 2.1", "⚠ found on § 2.1")
    assert grounded(f"{payable}.")[:3] == (ADDED, clause, "§ 2.1")
    assert grounded(f"{payable} [¶ {clause}].")[:3] == (SUPPORTED, clause, "§ 2.1")
    # What was deleted, and by whom, is in the document too.
    assert grounded(f"{DELETED_BY} deleted thirty (30) [§ 2.1].")[0] == SUPPORTED
    assert grounded("Invoices are payable within ninety (90) days of receipt [§ 2.1].")[0] == UNSUPPORTED
    # The mark opens the clause with the passage to mark.
    (target,) = claim_targets([v.to_dict() for v in ground_answer(f"{payable} [§ 2.1].", sources).claims], [doc.id])
    assert target is not None and (target.document_id, target.page) == (doc.id, clause)
    assert "sixty (60) days of receipt" in target.passage


def test_an_emails_attachments_are_grounded_as_their_own_documents(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An e-mail with a PDF and a Word attachment: '[attachment 1, p. 1]' is the PDF's page 1,
    '[attachment 2, § 2]' the Word file's clause 2; the verdict opens the attachment itself."""
    from app.citations.targets import claim_targets
    from tests.fixtures.office import draft_email

    email = ctx.library.add(draft_email(tmp_path)).document
    parts = {a.position: a.document_id for a in ctx.library.attachments(email.id)}
    sources = Sources.load(ctx, [email.id])

    def grounded(answer: str) -> tuple[str, int | None, int | None, str]:
        (verdict,) = ground_answer(answer, sources).claims
        g = verdict.grounding
        return g.verdict, g.document_id, g.page, g.place

    notice = "The notice period is ninety days"
    page = next(s.page for s in ctx.library.segments(parts[1]) if "notice period" in s.text)
    assert grounded(f"{notice} [attachment 1, p. {page}].") == (SUPPORTED, parts[1], page, f"attachment 1, p. {page}")
    assert grounded(f"{notice}.")[:3] == (ADDED, parts[1], page)
    # A Word file has no pages: the citation points nowhere, and Folio shows where the sentence is.
    assert grounded(f"{notice} [attachment 2, p. {page}].")[:3] == (WRONG_PAGE, parts[1], page)
    buyer = "The buyer pays within thirty days of delivery"
    assert grounded(f"{buyer} [attachment 2, § 2].")[:2] == (SUPPORTED, parts[2])
    assert grounded(f"{buyer} [§ 2].")[0] == WRONG_PAGE  # the e-mail itself has no clause 2
    # The e-mail's own body, cited by paragraph.
    body = next(s.page for s in ctx.library.segments(email.id) if "sixty days" in s.text)
    said = f"Clause 2.1 now gives sixty days for payment [¶ {body}]."
    assert grounded(said) == (SUPPORTED, email.id, body, f"¶ {body}")
    claims = [v.to_dict() for v in ground_answer(f"{notice} [attachment 1, p. {page}].", sources).claims]
    (target,) = claim_targets(claims, [email.id])
    assert target is not None and (target.document_id, target.page) == (parts[1], page)
