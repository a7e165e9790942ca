"""Prompt lookup drafts and the pace that decides when drafting pays (no model needed)."""

from __future__ import annotations

import pytest

from inference.drafters import PromptLookup
from inference.speculative import Pace

DOC = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]  # "documents": the stable prefix
IMAGE = [-5, -6, -7]  # an image's positions


def test_lookup_copies_what_followed_the_longest_match() -> None:
    lookup = PromptLookup()
    lookup.sync([*DOC, 1, 2, 12, 13], n_stable=len(DOC))  # the answer so far ends with "12 13"
    draft, n, start = lookup.propose(14, 4)  # pending "14": "12 13 14" occurred in the documents
    assert (draft, n, start) == ([15, 16, 17, 18], 3, 5)
    assert lookup.propose(14, 2)[0] == [15, 16]  # never longer than asked
    assert lookup.propose(99, 4) == ([], 0, -1)  # nothing like it before


def test_lookup_prefers_the_most_recent_occurrence_and_follows_the_answer() -> None:
    lookup = PromptLookup()
    lookup.sync([*DOC, 12, 13, 50, 51, 12], n_stable=len(DOC))
    assert lookup.propose(13, 3)[0] == [50, 51, 12]  # after "12 13" the answer went on with 50 51, not 14
    lookup.extend([13, 50])  # the answer repeats itself
    assert lookup.propose(51, 2)[0] == [12, 13]


def test_a_new_question_forgets_the_last_answer_but_keeps_the_documents() -> None:
    lookup = PromptLookup()
    lookup.sync([*DOC, 12, 13, 50, 51], n_stable=len(DOC))
    tables = lookup._base_tables
    lookup.sync([*DOC, 7, 12], n_stable=len(DOC))
    assert lookup._base_tables is tables  # the documents' index is reused, not rebuilt
    assert lookup.propose(13, 2)[0] == [14, 15]  # the old answer's "12 13 -> 50" is gone


def test_image_positions_never_match() -> None:
    lookup = PromptLookup()
    lookup.sync([*IMAGE, 1, 2, *IMAGE, 1], n_stable=0)
    assert lookup.propose(2, 4)[0] == []  # "1 2" is followed by an image: nothing to copy
    lookup.sync([1, 2, 3, *IMAGE, 1], n_stable=0)
    assert lookup.propose(2, 4)[0] == [3]  # the copy stops before the image


def _measured(pace: Pace, single: float = 0.05, base: float = 0.08, per_token: float = 0.02) -> None:
    pace.decoded(1, single)
    for n in (3, 5, 9):
        pace.decoded(n, base + per_token * n)


def test_the_fitted_batch_cost_is_what_was_measured() -> None:
    pace = Pace(8)
    _measured(pace)
    line = pace.fit.line(0.0)
    assert line is not None
    assert line[0] == pytest.approx(0.08) and line[1] == pytest.approx(0.02)


def test_long_drafts_when_they_are_accepted_none_when_they_are_not() -> None:
    pace = Pace(16)
    _measured(pace)
    for _ in range(20):
        pace.checked("lookup+", 8, 8)
    assert pace.length("lookup+", 16) >= 8  # nearly always right: check many at once
    for _ in range(30):
        pace.checked("lookup2", 4, 0)
    assert pace.length("lookup2", 16) == 3  # turned down: the first refusal still probes, briefly...
    assert pace.length("lookup2", 16) == 0  # ...then waits


def test_probing_a_turned_down_drafter_costs_little() -> None:
    """Drafts never accepted, a cost curve like Gemma's on a CPU: the extra time stays under 3%."""
    pace = Pace(8)
    _measured(pace)
    single, line = 0.05, (0.08, 0.02)
    spent = plain = 0.0
    tokens = 0
    while tokens < 4000:
        k = pace.length("lookup3", 8)
        if k:
            spent += line[0] + line[1] * (k + 1)
            pace.checked("lookup3", k, 0)
        else:
            spent += single
            pace.decoded(1, single)
        plain += single
        tokens += 1
    assert spent / plain < 1.03


def test_a_drafter_turned_down_comes_back_when_it_starts_to_hit() -> None:
    pace = Pace(8)
    _measured(pace)
    for _ in range(30):
        pace.checked("mtp", 4, 0)
    lengths = []
    for _ in range(600):
        k = pace.length("mtp", 8)
        if k:
            pace.checked("mtp", k, k)  # from now on every draft is right
        else:
            pace.decoded(1, 0.05)
        lengths.append(k)
    assert lengths[-1] > 3  # back to full drafts
