"""Property-based tests (hypothesis) for the parts that read what a model writes or a PDF prints:
the citation parser, page labels (from real PDFs with random label rules), timestamps and the
quote verifier. They add to tests/unit/test_citations.py and tests/unit/test_quotes.py.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.citations.markers import DocumentIndex, check, find_citations, parse_timestamp
from app.citations.quotes import find_quote
from ingest.document import Anchor, format_timestamp
from tests.plugins.figures import record

COUNT: dict[str, int] = {}  # examples run, per property, for the report


def _count(name: str) -> None:
    COUNT[name] = COUNT.get(name, 0) + 1


@pytest.fixture(scope="module", autouse=True)
def _report_examples() -> Iterator[None]:
    yield
    record(__name__.replace(".", "/") + ".py", {"examples": dict(COUNT), "total_examples": sum(COUNT.values())})


# -- citation parser ------------------------------------------------------------------------------
JUNK = st.text(alphabet=st.characters(blacklist_characters='[]"“”', blacklist_categories=("Cs",)), max_size=60)
PAGE_LABEL = st.one_of(
    st.integers(1, 9999).map(str),
    st.sampled_from(["i", "ii", "iv", "ix", "xl", "XII", "A-3", "B.12", "S7", "Annex 4", "2-14"]),
)


@st.composite
def marked_answer(draw: st.DrawFn) -> tuple[str, list[tuple[int, str]]]:
    """Junk text with page and time markers put at known places."""
    pieces: list[str] = []
    placed: list[tuple[int, str]] = []
    for _ in range(draw(st.integers(1, 6))):
        pieces.append(draw(JUNK))
        if draw(st.booleans()):
            marker = Anchor(page=1, label=draw(PAGE_LABEL)).marker()
        else:
            marker = Anchor(t_seconds=draw(st.floats(0, 36_000, allow_nan=False))).marker()
        placed.append((len("".join(pieces)), marker))
        pieces.append(marker)
    pieces.append(draw(JUNK))
    return "".join(pieces), placed


@given(marked_answer())
def test_every_marker_folio_writes_is_found_where_it_stands(case: tuple[str, list[tuple[int, str]]]) -> None:
    _count("markers")
    text, placed = case
    found = find_citations(text)
    assert [(c.start, c.text) for c in found] == [(at, m) for at, m in placed]


@given(PAGE_LABEL, st.floats(0, 359_999, allow_nan=False, allow_infinity=False))
def test_markers_parse_back_to_their_label_and_second(label: str, seconds: float) -> None:
    _count("markers")
    page = find_citations(Anchor(page=3, label=label).marker())
    assert len(page) == 1 and page[0].kind == "page"
    time = find_citations(Anchor(t_seconds=seconds).marker())
    assert len(time) == 1 and time[0].t_seconds == math.floor(seconds)


@given(st.integers(1, 400), st.integers(0, 80), st.integers(1, 4))
def test_page_ranges_and_lists(first: int, span: int, doc: int) -> None:
    _count("ranges")
    last = first + span
    prefix = f"D{doc} " if doc > 1 else ""
    (cite,) = find_citations(f"see [{prefix}pp. {first}-{last}] and")
    assert cite.doc_index == doc
    if span <= 50:
        assert cite.labels == tuple(str(n) for n in range(first, last + 1))
    else:  # too wide to be a real range: kept as written, resolved (or not) as one label
        assert cite.labels == (f"{first}-{last}",)
    (listed,) = find_citations(f"[pp. {first}, {last} and {last + 1}]")
    assert listed.labels == (str(first), str(last), str(last + 1))


# -- page labels, from real PDFs ------------------------------------------------------------------
OBLIGATIONS = ["payment", "delivery", "warranty", "audit", "notice", "insurance", "transfer"]
LABEL_RULE = st.fixed_dictionaries(
    {
        "prefix": st.sampled_from(["", "A-", "B.", "Annex ", "S", "1-", "2-"]),
        "style": st.sampled_from(["D", "r", "R", "a", "A"]),
        "firstpagenum": st.integers(1, 30),
    }
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 9), st.lists(LABEL_RULE, min_size=1, max_size=3), st.data())
def test_printed_page_labels_survive_ingest_and_citations_resolve_to_their_page(
    pages: int, rules: list[dict[str, Any]], data: st.DataObject
) -> None:
    """PyMuPDF computes each page's label from the PDF's rules; the library keeps it; a citation of
    the marker the model was shown ([p. LABEL]) resolves to that page and checks a quote on it."""
    import pymupdf

    from app.citations.grounding import document_indexes
    from app.context import open_app
    from app.paths import Paths

    _count("page_labels")
    starts = sorted(data.draw(st.lists(st.integers(1, pages - 1), max_size=len(rules) - 1, unique=True)))
    rules = [{**r, "startpage": s} for r, s in zip(rules, [0, *starts], strict=False)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "labels.pdf"
        doc = pymupdf.open()
        for n in range(1, pages + 1):
            # Body text, different on every page (text repeated at the same place would be a running header).
            body = f"Under section {n * 7} the {OBLIGATIONS[n % len(OBLIGATIONS)]} clause applies to year {2000 + n}."
            doc.new_page().insert_textbox(pymupdf.Rect(72, 200 + 30 * n, 520, 400 + 30 * n), body)
        doc.set_page_labels(rules)
        expected = [p.get_label() or str(p.number + 1) for p in doc]
        doc.save(path)
        doc.close()
        root = Path(tmp) / "home"
        ctx = open_app(Paths(root / "config", root / "data", root / "cache"))
        try:
            stored = ctx.library.add(path).document
            labels = [p.label for p in ctx.library.pages(stored.id)]
            (index,) = document_indexes(ctx, [stored.id])
            assert labels == expected
            for number, label in enumerate(labels, start=1):
                if labels.count(label) > 1:
                    continue  # a PDF may print the same label twice; a citation of it cannot say which
                answer = f'"section {number * 7} the" {Anchor(page=number, label=label).marker()}'
                (cite,) = check(find_citations(answer), [index])
                assert cite.pages == (number,) and cite.valid and cite.quote_found, (label, cite)
        finally:
            ctx.close()


# -- timestamps -----------------------------------------------------------------------------------
@given(st.integers(0, 99), st.integers(0, 59), st.integers(0, 59), st.booleans(), st.booleans())
def test_timestamps_in_every_written_form(h: int, m: int, s: int, pad: bool, with_hours: bool) -> None:
    _count("timestamps")
    fmt = "{:02d}" if pad else "{:d}"
    if with_hours:
        text = ":".join([fmt.format(h), f"{m:02d}", f"{s:02d}"])
        assert parse_timestamp(text) == h * 3600 + m * 60 + s
    else:
        assert parse_timestamp(f"{fmt.format(m)}:{s:02d}") == m * 60 + s


@given(st.lists(st.integers(0, 150), min_size=1, max_size=4))
def test_out_of_range_minutes_or_seconds_are_refused(fields: list[int]) -> None:
    _count("timestamps")
    text = ":".join(str(f) for f in fields)
    value = parse_timestamp(text)
    if not 2 <= len(fields) <= 3 or any(f >= 60 for f in fields[1:]):
        assert value is None
    else:
        assert value is not None and value >= 0


@given(st.text(max_size=20))
def test_timestamp_parser_takes_any_text(text: str) -> None:
    _count("timestamps")
    value = parse_timestamp(text)
    assert value is None or (value >= 0 and value == int(value))


@given(st.floats(0, 7200, allow_nan=False), st.floats(1, 7200, allow_nan=False))
def test_a_time_citation_is_valid_exactly_within_the_clip(seconds: float, duration: float) -> None:
    _count("timestamps")
    assert format_timestamp(seconds) == Anchor(t_seconds=seconds).marker()[3:-1]
    index = DocumentIndex({}, 0, duration, lambda _p: "")
    (cite,) = check(find_citations(f"It happens at {Anchor(t_seconds=seconds).marker()}."), [index])
    assert cite.valid == (math.floor(seconds) <= duration + 1)


# -- quote verifier -------------------------------------------------------------------------------
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9)


@given(st.lists(WORD, min_size=12, max_size=60), st.data())
def test_a_quote_across_a_page_break_is_found_on_its_first_page(words: list[str], data: st.DataObject) -> None:
    _count("quotes")
    cut = data.draw(st.integers(2, len(words) - 2))
    start = data.draw(st.integers(max(0, cut - 6), cut - 1))
    end = data.draw(st.integers(cut + 1, min(len(words), cut + 6)))
    quote = " ".join(words[start:end])
    first, second = " ".join(words[:cut]), " ".join(words[cut:])
    assume(quote not in first and quote not in second)
    match = find_quote(quote, ["cover page", first, second])
    assert match.status == "exact" and match.unit == 1


TYPOGRAPHY = st.sampled_from(["upper", "title", "curly", "spaces", "nbsp", "soft hyphen", "line break"])


@given(st.lists(WORD, min_size=6, max_size=30), st.lists(TYPOGRAPHY, max_size=4))
def test_typography_does_not_change_a_verdict(words: list[str], changes: list[str]) -> None:
    """What a model or a PDF changes in the look of a quote (case, quote marks, spaces, soft hyphens,
    line breaks) never turns a true quote into a false one."""
    _count("quotes")
    source = 'The parties agree that "' + " ".join(words) + '" shall apply.'
    quote = '"' + " ".join(words[1:-1]) + '"'
    for change in changes:
        if change == "upper":
            quote = quote.upper()
        elif change == "title":
            quote = quote.title()
        elif change == "curly":
            quote = quote.replace('"', "\u201c", 1).replace('"', "\u201d", 1)
        elif change == "spaces":
            quote = quote.replace(" ", "   ")
        elif change == "nbsp":
            quote = quote.replace(" ", "\u00a0")
        elif change == "soft hyphen":
            quote = quote.replace(words[2], words[2][:1] + "\u00ad" + words[2][1:], 1)
        else:
            source = source.replace(" ", "\n", 3)
    assume(len(" ".join(words[1:-1])) >= 3)
    assert find_quote(quote.strip('"\u201c\u201d'), [source]).status == "exact"


@given(st.lists(WORD, min_size=8, max_size=20), st.integers(3, 6), st.data())
def test_a_repeated_quote_is_placed_on_the_page_the_model_cited(
    words: list[str], copies: int, data: st.DataObject
) -> None:
    _count("quotes")
    quote = " ".join(words)
    pages = [f"page {i} text" for i in range(copies * 2)]
    holding = data.draw(st.lists(st.integers(0, len(pages) - 1), min_size=2, max_size=copies, unique=True))
    for i in holding:
        pages[i] = f"before {quote} after"
    cited = data.draw(st.sampled_from(holding))
    assert find_quote(quote, pages, preferred=[cited]).unit == cited
    assert find_quote(quote, pages).unit == min(holding)
