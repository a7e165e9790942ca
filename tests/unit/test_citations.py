from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.citations.markers import DocumentIndex, check, find_citations, parse_timestamp
from app.citations.quotes import normalize_for_match

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


def test_every_marker_the_model_is_shown_reads_back_as_the_same_place() -> None:
    """The anchor forms are defined once (ingest.document): what marker() writes, the parser reads."""
    from app.citations.markers import find_citations
    from ingest.document import Anchor, parse_cited

    anchors = [
        (Anchor(page=4, label="iv"), "page", "iv", None),
        (Anchor(t_seconds=83.0), "time", "00:01:23", None),
        (Anchor(page=7, label="12.3(a)", unit="paragraph"), "section", "12.3(a)", None),
        (Anchor(page=41, unit="paragraph"), "paragraph", "41", None),
        (Anchor(page=2, label="2", attachment=1), "page", "2", 1),
        (Anchor(page=9, label="4.1", unit="paragraph", attachment=3), "section", "4.1", 3),
    ]
    for anchor, kind, value, attachment in anchors:
        place = parse_cited(anchor.marker())
        assert place is not None and (place.kind, place.value, place.attachment) == (kind, value, attachment)
        (found,) = find_citations(f"As agreed {anchor.marker()}.")
        assert found.kind == kind and found.attachment == attachment
    assert parse_cited("Section 4") is None  # prose, not a citation
