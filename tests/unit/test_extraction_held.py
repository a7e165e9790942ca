"""A short answer the document does not hold is not stated (issue 19): facts read from the file name."""

from __future__ import annotations

from app.citations.grounding import Sources
from app.extraction.cells import NOT_HELD, Cell
from app.extraction.held import held_or_not_stated
from app.extraction.templates import TemplateField

# GOOSEHEAD's franchise agreement, as its first page has it: no date but the blanks to fill in.
FRANCHISE = (
    'THIS FRANCHISE AGREEMENT (the "Agreement") is made and entered into on ____________ (the "Effective Date") '
    "by and between Goosehead Insurance Agency, LLC, a Texas limited liability company, and the Franchisee."
)
BELLRING = 'It is made this first day of July, 2017 (the\n"Effective Date") between Heritage and Premier.'
RENEWS = "The Term continues for one (1) years and indefinitely after that until terminated by notice."


def held_in(pages: list[str], value: str) -> bool:
    return Sources.from_pages(pages).anywhere(value)


def test_a_value_counts_as_held_in_any_wording_on_any_page() -> None:
    assert held_in(["Recitals.", BELLRING], "July 1, 2017")  # a date in words
    assert held_in([RENEWS], "1 year") and held_in([RENEWS], "indefinite")  # a duration; a word by its stem
    assert held_in([FRANCHISE], "Goosehead Insurance Agency, LLC and the Franchisee")  # names in another order
    assert held_in([FRANCHISE], "Texas")


def test_a_date_or_a_name_from_the_file_name_is_not_held() -> None:
    # The file is GOOSEHEADINSURANCE,INC_04_02_2018-EX-10.6-Franchise Agreement.pdf.
    assert not held_in([FRANCHISE], "4/2/2018")
    assert not held_in([FRANCHISE], "GOOSEHEADINSURANCE,INC_04_02_2018-EX-10.6-Franchise Agreement")
    assert not held_in([BELLRING], "July 2, 2017")  # another day
    assert held_in([FRANCHISE], "12")  # nothing to look for: no grounds to drop it


def test_a_cell_the_document_does_not_hold_becomes_not_stated_and_keeps_the_answer() -> None:
    field = TemplateField("agreement_date", "Agreement Date")
    cell = Cell(1, "agreement_date", True, "4/2/2018", FRANCHISE, "1", page=1, verdict="supported", passage="x")
    changed = held_or_not_stated(cell, field, Sources.from_pages([FRANCHISE]))
    assert not changed.found and changed.display == "not stated" and changed.flags == (NOT_HELD,)
    assert (changed.value, changed.quote, changed.page, changed.verdict) == ("4/2/2018", FRANCHISE, 1, "")
    assert held_or_not_stated(cell, field, Sources.from_pages([FRANCHISE, "Dated April 2, 2018."])) == cell
    clause = TemplateField("insurance", "Insurance", kind="yes_no")
    present = Cell(1, "insurance", True, "yes", FRANCHISE, "1", page=1, verdict="quoted", yes_no=True)
    # A clause is grounded by its quote.
    assert held_or_not_stated(present, clause, Sources.from_pages([FRANCHISE])) == present
