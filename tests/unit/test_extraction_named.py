"""A value the document must call by its name (issue 19): an effective date is a date called effective."""

from __future__ import annotations

import dataclasses

from app.citations.grounding import Sources
from app.extraction.cells import MOVED, NOT_NAMED, OFFERED, Cell
from app.extraction.named import named_in, named_or_not_stated, named_words, with_naming_evidence
from app.extraction.templates import TemplateField

WORDS = named_words("effective commence")
# Sentences as CUAD's contracts have them (Bellring, GAINSCO, VIVINT, Fuse), with the page's line breaks.
MADE_EFFECTIVE = 'It is made this first day of July, 2017 (the\n"Effective Date") between Heritage and Premier.'
ENTERED_EFFECTIVE = (
    "This Sponsorship Agreement is entered into effective January 1, 2010 by and between Racing and GAINSCO."
)
ANOTHER_AGREEMENTS_DATE = (
    "This Agreement will become effective on the\nEffective Date, and will continue until the\nexpiration of the "
    '"Sales Term" as that term is\ndefined in the Sales Dealer Agreement dated as of\nAugust 16, 2017 between Vivint.'
)
MADE_ONLY = (
    "This Agreement is made on 29 March 2018 between Signature Orthopaedics Pty Ltd and CPM Medical Consultants."
)


def test_a_date_counts_only_where_a_sentence_calls_it_effective_near_it() -> None:
    assert named_in([MADE_EFFECTIVE], "July 1, 2017", WORDS)
    assert named_in(["Recitals.", ENTERED_EFFECTIVE], "1 January 2010", WORDS)
    assert not named_in([ANOTHER_AGREEMENTS_DATE], "August 16, 2017", WORDS)  # 'effective' is 25 words away
    assert not named_in([MADE_ONLY], "March 29, 2018", WORDS)  # the date, but never called effective
    assert not named_in([MADE_EFFECTIVE], "July 2, 2017", WORDS)  # called effective, but another day
    # One sentence: the word in the next sentence does not name this date.
    assert not named_in(
        ["It is dated July 1, 2017. The effective date is set out in Schedule 1."], "July 1, 2017", WORDS
    )


def test_a_duration_or_a_plain_value_is_matched_too() -> None:
    renews = named_words("renew extend")
    assert named_in(["It renews for successive periods of one (1) year each."], "1 year", renews)
    assert not named_in(["The initial term is one (1) year."], "1 year", renews)
    assert named_in(["It is extended upon written request."], "upon written request", renews)


def test_a_cell_the_document_never_names_so_becomes_not_stated_and_keeps_the_answer() -> None:
    field = TemplateField("effective_date", "Effective Date", named_by="effective commence")
    cell = Cell(1, "effective_date", True, "March 29, 2018", MADE_ONLY, "1", page=1, verdict="quoted", passage="x")
    changed = named_or_not_stated(cell, field, [MADE_ONLY])
    assert not changed.found and changed.display == "not stated" and changed.flags == (NOT_NAMED,)
    assert (changed.value, changed.quote, changed.page, changed.verdict) == ("March 29, 2018", MADE_ONLY, 1, "")
    assert named_or_not_stated(cell, field, [MADE_ONLY, "It commences on 29 March 2018."]) == cell
    assert named_or_not_stated(cell, TemplateField("effective_date", "Effective Date"), [MADE_ONLY]) == cell


def test_a_value_without_a_date_is_matched_by_its_names_stemmed() -> None:
    law = named_words("govern constru")
    # The page ends after 'Ohio'; 'law' is the next page's first word.
    cut = "This agreement shall be governed by and construed in accordance with Ohio"
    assert named_in([cut], "Ohio law", law)
    incorporated = "Xiamen Mask Co., Ltd., a company organized under the laws of the People's Republic of China."
    assert not named_in([incorporated], "the laws of the People's Republic of China", law)
    renews = named_words("renew extend indefinite")
    assert named_in(["It continues for one year and indefinitely after that until terminated."], "indefinite", renews)


def test_a_clause_judged_present_counts_only_when_its_quote_uses_the_clauses_words() -> None:
    insurance = TemplateField("insurance", "Insurance", kind="yes_no", named_by="insur")
    audit = "Racing shall obtain and maintain comprehensive automobile liability insurance."
    cell = Cell(1, "insurance", True, "yes", audit, "2", page=2, verdict="quoted", yes_no=True)
    assert named_or_not_stated(cell, insurance, [audit]) == cell
    preamble = "This Agreement is made as of this 14th day of March, 2011 by and between NCM and Network Affiliate."
    quoted_preamble = dataclasses.replace(cell, quote=preamble)
    absent = named_or_not_stated(quoted_preamble, insurance, [preamble])
    assert not absent.found and absent.display == "No" and absent.value == "no" and absent.flags == (NOT_NAMED,)
    assert absent.quote == preamble  # what the model quoted stays for a reviewer


def test_a_value_quoted_from_elsewhere_opens_on_the_sentence_that_calls_it_so() -> None:
    # CHIPMOS: 'Taiwan' quoted from the preamble's addresses, the governing-law clause on another page.
    preamble = "ChipMOS TECHNOLOGIES INC., a company incorporated in Taiwan, and Tsinghua Unigroup Ltd."
    clause = "This Agreement shall be governed by, and construed in accordance with the laws of Taiwan."
    sources = Sources.from_pages([preamble, "Payment is due in 30 days.", f"Notices go by mail. {clause}"])
    law = TemplateField("governing_law", "Governing Law", named_by="govern constru")
    cell = Cell(1, "governing_law", True, "Taiwan", preamble, "1", page=1, verdict="quoted", passage=preamble,
                flags=(OFFERED,))  # fmt: skip
    moved = with_naming_evidence(cell, law, sources)
    assert (moved.found, moved.value, moved.quote, moved.page, moved.verdict) == (True, "Taiwan", clause, 3, "quoted")
    assert moved.flags == (MOVED,)  # the offered passage is no longer the evidence
    # A quote that calls it so already, a field without words, and a value no sentence names stay as they are.
    assert with_naming_evidence(dataclasses.replace(cell, quote=clause, page=3), law, sources).quote == clause
    assert with_naming_evidence(cell, TemplateField("governing_law", "Governing Law"), sources) == cell
    assert with_naming_evidence(dataclasses.replace(cell, value="Delaware"), law, sources).quote == preamble
