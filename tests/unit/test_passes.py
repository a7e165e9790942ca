"""Reading beyond one context, the parts that need no model: page lists as people write them, windows
that cover every page, the footer's words, and a reply whose answers keep their checked claims."""

from __future__ import annotations

import itertools
import re

import pytest

from app.pages import page_ranges, parse_pages
from app.passes.coverage import CHOSEN, PASSES, SEARCHED, WHOLE, DocumentReading, footer
from app.passes.merge import Answer, Reply, naming_document
from app.passes.windows import choose_ranked, plan_windows


@pytest.mark.parametrize(
    ("spec", "pages"),
    [
        ("1-20,45", (*range(1, 21), 45)),
        ("7", (7,)),
        (" 3 - 5 , 1 ", (1, 3, 4, 5)),
        ("2,2,1-2", (1, 2)),
    ],
)
def test_page_lists_are_read_as_written(spec: str, pages: tuple[int, ...]) -> None:
    assert parse_pages(spec) == pages


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("20-1", "runs backwards"),
        ("0-3", "numbered from 1"),
        ("1-", "not a page or a range"),
        ("a", "not a page or a range"),
        ("1,,2", "not a page list"),
        ("", "not a page list"),
        ("1-3-5", "not a page or a range"),
    ],
)
def test_a_bad_page_list_is_refused_in_one_line(spec: str, said: str) -> None:
    with pytest.raises(ValueError, match=said) as raised:
        parse_pages(spec)
    assert "\n" not in str(raised.value)


def test_page_numbers_are_written_back_as_ranges() -> None:
    assert page_ranges([9, 1, 2, 3, 7, 10]) == "1-3, 7, 9-10"
    assert page_ranges([]) == "none"
    assert page_ranges(parse_pages("1-20,45")) == "1-20, 45"


def _windows(pages: list[int], tokens: dict[int, int], limit: int, bare: int = 100, estimate: float = 1.0):  # type: ignore[no-untyped-def]
    measured: list[tuple[int, ...]] = []

    def measure(window: tuple[int, ...]) -> int:
        measured.append(window)
        return bare + sum(tokens[p] for p in window)

    cost = {p: tokens[p] * estimate for p in pages}
    return plan_windows(pages, cost, limit - bare, measure, limit), measured


def test_windows_cover_every_page_in_order_with_one_page_of_overlap() -> None:
    pages = list(range(1, 31))
    planned, _ = _windows(pages, dict.fromkeys(pages, 50), limit=400)
    windows = planned.windows
    assert planned.too_long == ()
    assert windows[0][0] == 1 and windows[-1][-1] == 30
    for before, after in itertools.pairwise(windows):
        assert after[0] == before[-1]  # the overlap page
        assert list(after) == list(range(after[0], after[-1] + 1))  # consecutive pages
    assert all(100 + 50 * len(w) <= 400 for w in windows)
    assert sorted({p for w in windows for p in w}) == pages


def test_an_estimate_too_low_is_held_to_the_exact_count() -> None:
    pages = list(range(1, 13))
    planned, measured = _windows(pages, dict.fromkeys(pages, 100), limit=600, estimate=0.5)
    assert all(100 + 100 * len(w) <= 600 for w in planned.windows)
    assert sorted({p for w in planned.windows for p in w}) == pages
    assert len(measured) > len(planned.windows)  # windows were cut after counting


def test_a_page_longer_than_the_context_is_named_and_the_rest_still_read() -> None:
    pages = list(range(1, 9))
    tokens = dict.fromkeys(pages, 60) | {5: 900}
    planned, _ = _windows(pages, tokens, limit=400)
    assert planned.too_long == (5,)
    read = {p for w in planned.windows for p in w}
    assert read == set(pages) - {5}


def test_the_best_ranked_pages_that_fit_are_chosen_in_rank_order() -> None:
    ranked = [9, 3, 4, 12, 1]
    cost = {9: 100.0, 3: 500.0, 4: 100.0, 12: 100.0, 1: 100.0}
    assert choose_ranked(ranked, cost, 350, lambda chosen: True) == [9, 4, 12]
    assert choose_ranked(ranked, cost, 350, lambda chosen: len(chosen) <= 2) == [9, 4]


def _reading(**kw: object) -> DocumentReading:
    fields: dict[str, object] = {
        "doc_index": 1, "title": "Credit agreement", "unit": "page", "total": 30,
        "selection": tuple(range(1, 31)), "windows": ((*range(1, 13),), (*range(12, 24),), (*range(23, 31),)),
        "how": PASSES, "done": 3,
    }  # fmt: skip
    return DocumentReading(**(fields | kw))  # type: ignore[arg-type]


def test_the_footer_says_exactly_what_was_read() -> None:
    assert footer([_reading()]) == "Read: pages 1-30 in 3 passes: pages 1-12, 12-23, 23-30."
    stopped = footer([_reading(done=1)])
    assert stopped == "Read: pages 1-12 in 1 of 3 passes: pages 1-12; not read: pages 13-30 (stopped before them)."
    chosen = _reading(selection=(2, 3, 9), windows=((2, 3, 9),), how=CHOSEN, done=1)
    assert footer([chosen]) == "Read: pages 2-3, 9 of 30 (chosen by the user); not read: the other 27 pages."
    found = _reading(selection=tuple(range(1, 31)), windows=((4, 9),), how=SEARCHED, done=1)
    assert "pages 4, 9 of 30 (those a word search ranks highest" in footer([found])
    long_page = _reading(windows=((*range(1, 5),), (*range(6, 31),)), too_long=(5,))
    assert "not read: page 5 (alone longer than the model's context)" in footer([long_page])
    several = footer([_reading(how=WHOLE, windows=(tuple(range(1, 31)),), done=1), _reading(doc_index=2, done=0)])
    assert several.splitlines() == [
        "Read, document by document:",
        "- D1 Credit agreement: pages 1-30, whole",
        "- D2 Credit agreement: not read (stopped before it)",
    ]


def test_a_reply_keeps_each_answers_claims_and_citations_where_its_text_went() -> None:
    text = 'The law is "New York" [p. 3].\nPayment is due in 30 days [p. 4].'
    citations = [
        {"start": text.index("[p. 3]"), "end": text.index("[p. 3]") + 6, "text": "[p. 3]", "doc_index": 1,
         "written": "bracket"},
        {"start": text.index("[p. 4]"), "end": text.index("[p. 4]") + 6, "text": "[p. 4]", "doc_index": 1,
         "written": "bracket"},
    ]  # fmt: skip
    split = text.index("\n")
    claims = [
        {"start": 0, "end": split, "text": text[:split], "doc_index": 1, "citations": [0]},
        {"start": split + 1, "end": len(text), "text": text[split + 1 :], "doc_index": 1, "citations": [1]},
    ]
    answer = Answer(text, claims, citations)
    renamed, _ = naming_document(answer, 2)
    assert renamed == 'The law is "New York" [D2 p. 3].\nPayment is due in 30 days [D2 p. 4].'

    reply = Reply()
    reply.add("| D1 | ")
    reply.add_answer(Answer("NOT FOUND"), one_line=True)
    reply.add(" |\n| D2 | ")
    reply.add_answer(answer, doc_index=2, one_line=True)
    reply.add(" |")
    assert "\n" not in reply.text.splitlines()[1]
    assert [reply.text[c["start"] : c["end"]] for c in reply.citations] == ["[D2 p. 3]", "[D2 p. 4]"]
    assert all(c["doc_index"] == 2 for c in reply.citations)
    for claim in reply.claims:
        assert reply.text[claim["start"] : claim["end"]] == claim["text"]
        assert claim["doc_index"] == 2
    assert reply.claims[1]["text"] == "Payment is due in 30 days [D2 p. 4]."
    assert [c["citations"] for c in reply.claims] == [[0], [1]]
    assert not Answer("NOT FOUND").found and not Answer("  ").found and Answer("Found it [p. 2].").found
    assert re.search(r"\| D2 \| The law is", reply.text)
