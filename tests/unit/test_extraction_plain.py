"""Reading a plain answer: does it say the document does not state the field?"""

from __future__ import annotations

import pytest

from app.extraction.plain import says_not_stated


@pytest.mark.parametrize(
    "answer",
    [
        "The renewal term of this agreement is not specified in the document.",
        "Not specified in the documents.",
        "The documents do not mention a notice period.",
        "There is no renewal term; the agreement ends on December 31, 2010 [p. 2].",
        "The agreement doesn't say.",
        "",
        "N/A",
    ],
)
def test_answers_that_say_not_stated(answer: str) -> None:
    assert says_not_stated(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "The agreement renews for successive one-year terms [p. 3].",
        "This agreement is governed by the laws of the State of Texas [p. 5].",
        "Notice must be given not later than 90 days before the end of the term [p. 2].",  # 'not later'
        "January 1, 2010",
    ],
)
def test_answers_that_state_something(answer: str) -> None:
    assert not says_not_stated(answer)
