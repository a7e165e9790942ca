"""A short answer must be something the document holds: a value no page has is not stated.

Measured with the 1.5B on CUAD (issue 19): the prompt gives a document its file name as its title,
and the model read facts from it: '4/2/2018' as GOOSEHEAD's agreement date (the file is
GOOSEHEADINSURANCE,INC_04_02_2018-...), and the file name itself as Fuse's document name. Its quote
then was a real passage that did not hold the value. The check is deliberately loose (anywhere in
the document, dates and durations in any wording, words by stem anywhere): it only
catches a value that is not in the document at all, never one worded differently ('first day of
July, 2017' holds 'July 1, 2017').
"""

from __future__ import annotations

import dataclasses

from app.citations.grounding import Sources
from app.extraction.cells import NOT_HELD, Cell
from app.extraction.templates import TemplateField


def held_or_not_stated(cell: Cell, field: TemplateField, sources: Sources) -> Cell:
    """The cell as it is when the document holds its value (`Sources.anywhere`), else "not stated",
    flagged: the model's value and quote stay in the cell for a reviewer to see. A yes/no clause is
    not a value: its quote is checked against the document by grounding."""
    if field.yes_no or not cell.found or sources.anywhere(cell.value):
        return cell
    return dataclasses.replace(cell, found=False, verdict="", passage="", flags=(*cell.flags, NOT_HELD))
