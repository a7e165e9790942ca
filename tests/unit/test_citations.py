from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.citations import DocumentIndex, check, find_citations, parse_timestamp
from app.quotes import normalize_for_match

PAGES = {1: "Cover", 2: "The Client shall pay\nwithin thirty (30) days.", 3: "Governed by the laws of Delaware."}
DOC = DocumentIndex(label_to_page={"i": 1, "1": 2, "2": 3}, page_count=3, duration_s=None, page_text=lambda p: PAGES[p])


def test_finds_page_and_time_citations_with_quotes() -> None:
    answer = 'It says "governed by the laws of Delaware" [p. 2]. Payment is due [pp. 1-2]; see [t 00:01:05].'
    cites = find_citations(answer)
    assert [c.text for c in cites] == ["[p. 2]", "[pp. 1-2]", "[t 00:01:05]"]
    assert cites[0].quote == "governed by the laws of Delaware"
    assert cites[1].labels == ("1", "2")
    assert cites[2].t_seconds == 65.0


def test_check_uses_page_labels_and_verifies_quotes() -> None:
    answer = '"governed by the laws of Delaware" [p. 2] and "pay within thirty (30) days" [p. 1] and "nope" [p. 9]'
    checked = check(find_citations(answer), [DOC])
    assert [(c.pages, c.valid, c.quote_found) for c in checked] == [
        ((3,), True, True),
        ((2,), True, True),
        ((), False, False),
    ]


def test_roman_label_resolves() -> None:
    assert check(find_citations("Cover [p. i]"), [DOC])[0].pages == (1,)


def test_normalization_folds_ligatures_quotes_and_hyphenation() -> None:
    assert normalize_for_match("con-\ntract “ﬁnal”") == normalize_for_match('contract "final"')


@given(st.integers(0, 99), st.integers(0, 59), st.integers(0, 59))
def test_timestamp_round_trip(h: int, m: int, s: int) -> None:
    assert parse_timestamp(f"{h:02d}:{m:02d}:{s:02d}") == h * 3600 + m * 60 + s


@given(st.text(max_size=300))
def test_parser_never_crashes_and_offsets_point_at_the_text(text: str) -> None:
    for c in find_citations(text):
        assert text[c.start : c.end] == c.text
