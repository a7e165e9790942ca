"""Prompt lookup drafts and the pace that decides when drafting pays (no model needed)."""

from __future__ import annotations

import itertools

import pytest

from inference.drafters import PromptLookup
from inference.speculative import Drafting, Pace

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
    line = pace.fit.line(0.05)
    assert line is not None
    assert line[0] == pytest.approx(0.08) and line[1] == pytest.approx(0.02)


def test_one_batch_length_is_extrapolated_through_the_one_token_decode() -> None:
    """A batch of 3 that cost 2.9 decodes (this CPU) says a batch of 9 costs about 8.6, not 4."""
    pace = Pace(8)
    pace.decoded(1, 1.0)
    pace.decoded(3, 2.9)
    line = pace.fit.line(pace.single_s)
    assert line is not None
    assert line[0] + line[1] * 9 == pytest.approx(8.6)


def test_long_drafts_when_they_are_accepted_none_when_they_are_not() -> None:
    pace = Pace(16)
    _measured(pace)
    for _ in range(20):
        pace.checked("lookup+", 8, 8)
    assert pace.length("lookup+", 16) >= 8  # nearly always right: check many at once
    for _ in range(30):
        pace.checked("lookup2", 4, 0)
    assert pace.length("lookup2", 16) == 0  # the batch cost is known: no probe is needed to say no


def test_nothing_is_drafted_before_a_batch_was_timed_and_the_credit_pays_for_the_probe() -> None:
    pace = Pace(8)
    assert pace.length("lookup+", 8) == 0  # not even a plain step timed
    plain = 0
    while pace.length("lookup+", 8) == 0:
        pace.decoded(1, 0.05)
        plain += 1
        assert plain < 1000
    # The probe's worst case (2 drafts at one decode each) is 2% of the plain time before it.
    assert plain == pytest.approx(2 / Pace.PROBE_SHARE, abs=2)
    assert pace.probing and pace.probes == 1


def test_guesses_that_could_never_pay_are_not_probed() -> None:
    pace = Pace(8)
    for _ in range(1000):
        pace.decoded(1, 0.05)
    for _ in range(30):
        pace.checked("lookup2", 4, 0)
    assert pace.length("lookup2", 8) == 0


def _answer_cost(pace: Pace, batch: tuple[float, float], accept: bool, tokens: int = 4000) -> float:
    """Time to write `tokens` with drafting, over the time without, for a batch cost line
    (seconds = a + b * n) and drafts that are always right or never."""
    single = 0.05
    spent = written = 0.0
    while written < tokens:
        k = pace.length("lookup3", 8)
        if k:
            seconds = batch[0] + batch[1] * (k + 1)
            pace.decoded(k + 1, seconds)
            pace.checked("lookup3", k, k if accept else 0)
            written += 1 + (k if accept else 0)
        else:
            seconds = single
            pace.decoded(1, single)
            written += 1
        spent += seconds
    return spent / (written * single)


def test_where_drafting_never_pays_it_costs_at_most_the_probes() -> None:
    """A CPU like this one (a batch costs ~one decode per token), drafts always right: still slower."""
    assert _answer_cost(Pace(8), (0.005, 0.05), accept=True) < 1.02
    assert _answer_cost(Pace(8), (0.005, 0.05), accept=False) < 1.02


def test_where_batches_are_cheap_right_drafts_pay() -> None:
    """A GPU-like machine (a batch of 9 costs 1.3 decodes): drafts that are right nearly double the speed."""
    pace = Pace(8)
    assert _answer_cost(pace, (0.045, 0.0025), accept=True) < 0.6
    assert pace.probes == 1  # one probe timed the batches; every later batch is paid by its own drafts


def test_guesses_not_checked_are_judged_by_the_tokens_written_next() -> None:
    drafting = Drafting(8)
    held = [*DOC, 1, 2, 3]
    drafting.begin(held, n_stable=len(DOC))
    pos = len(held)
    # The model quotes the documents; nothing is checked (no step timed yet), every guess is judged.
    for token in DOC:
        kind, drafts = drafting.propose(token, 8)
        assert (kind, drafts) == ("", [])
        drafting.decoded([token], pos)
        pos += 1
    assert drafting.pace.acceptance["lookup2"] > Pace.PRIOR_ACCEPTANCE["lookup2"]  # "11 12 ... 19": all right
    # The guess after "19" continues the same run ("1 2 3"); the model writes something else.
    drafting.propose(99, 8)
    assert drafting.pace.acceptance["lookup+"] < Pace.PRIOR_ACCEPTANCE["lookup+"]


def test_mtp_turned_down_comes_back_when_it_starts_to_hit() -> None:
    """MTP guesses cost a step of the MTP block to make, so they are scored only when checked: a
    drafter turned down is probed again now and then, and returns to full drafts once it hits."""
    pace = Pace(8)
    _measured(pace, single=0.05, base=0.045, per_token=0.0025)  # cheap batches
    for _ in range(30):
        pace.checked("mtp", 4, 0)
    lengths = []
    for _ in range(2000):
        k = pace.length("mtp", 8)
        if k:
            pace.decoded(k + 1, 0.045 + 0.0025 * (k + 1))
            pace.checked("mtp", k, k)  # from now on every draft is right
        else:
            pace.decoded(1, 0.05)
        lengths.append(k)
    assert lengths[-1] > 3  # back to full drafts


def test_the_note_says_why_nothing_was_drafted() -> None:
    pace = Pace(8)
    assert pace.idle_note() == "no drafts yet: Folio first times what checking guesses costs on this computer"
    pace.decoded(1, 1.0)
    pace.decoded(3, 2.9)  # this CPU: a check of 2 guesses costs nearly 3 tokens
    assert pace.idle_note() == "no drafts: checking 2 guesses costs 2.9x writing one token on this computer"
    cheap = Pace(8)
    _measured(cheap, single=0.05, base=0.045, per_token=0.0025)
    assert cheap.idle_note() == "no drafts: no guess was likely enough to pay"


def test_probes_grow_rare_where_drafting_never_pays() -> None:
    pace = Pace(8)
    lengths = []
    for _ in range(20000):
        k = pace.length("lookup+", 8)
        lengths.append(k)
        if k:
            pace.decoded(k + 1, 0.05 * (k + 1))  # a batch costs one decode per token
            pace.checked("lookup+", k, k)
        else:
            pace.decoded(1, 0.05)
    probes = [i for i, k in enumerate(lengths) if k]
    gaps = [b - a for a, b in itertools.pairwise(probes)]
    assert gaps == sorted(gaps) and gaps[-1] >= Pace.REPROBE_MAX  # 256, 512, ... then every 4096
    assert len(probes) < 12
