"""Text PDFs and mixed PDFs through ingest.load: anchors, labels, tables, headers, comments, scans."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from ingest.limits import Limits, fit_to_budget, vision_tokens
from ingest.load import load
from tests.fixtures.media import (
    ANNOTATION_TEXT,
    REPORT_HEADER,
    REPORT_PAGES,
    TABLE_PAGE,
    make_report_pdf,
    make_scan,
    make_scanned_pdf,
    render_text_page,
)


@pytest.fixture
def report(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load(make_report_pdf(tmp_path / "report.pdf"))


def test_page_labels_sit_beside_page_numbers(report) -> None:  # type: ignore[no-untyped-def]
    assert [(p.number, p.label) for p in report.pages] == [(1, "i"), (2, "ii"), (3, "A-1"), (4, "A-2"), (5, "A-3")]
    body = [s for s in report.segments if s.role == "body"]
    assert {(s.anchor.page, s.anchor.label) for s in body} == {(p.number, p.label) for p in report.pages}
    assert all(s.anchor.bbox is not None and s.anchor.bbox[2] > s.anchor.bbox[0] for s in report.segments)


def test_running_header_and_footer_are_kept_once(report) -> None:  # type: ignore[no-untyped-def]
    headers = [s for s in report.segments if REPORT_HEADER in s.text]
    assert len(headers) == 1 and headers[0].role == "header" and headers[0].anchor.page == 1
    footers = [s for s in report.segments if s.text.startswith("Page ")]
    assert len(footers) == 1 and footers[0].role == "footer"
    # Body text that differs per page is never taken for a header.
    for number in range(1, REPORT_PAGES + 1):
        assert f"unique topic number {number * 7919}" in report.text_of_page(number)


def test_ruled_table_is_one_markdown_segment_in_reading_order(report) -> None:  # type: ignore[no-untyped-def]
    page = [s for s in report.segments if s.anchor.page == TABLE_PAGE]
    tables = [s for s in page if s.role == "table"]
    assert len(tables) == 1
    lines = tables[0].text.splitlines()
    assert lines[0].replace(" ", "") == "|Region|Revenue|Growth|"
    assert set(lines[1].replace("|", "").replace(" ", "")) <= {"-", ":"}
    assert "|West|3,100|11%|" in tables[0].text.replace(" ", "")
    # The cells are not repeated as loose body text, and the table sits between the text around it.
    assert not any("3,100" in s.text for s in page if s.role == "body")
    roles = [s.role for s in page if s.role in ("body", "table")]
    assert roles.index("table") == 1 and len(roles) == 3


def test_comments_are_kept_and_marked(report) -> None:  # type: ignore[no-untyped-def]
    notes = [s for s in report.segments if s.role == "annotation"]
    assert len(notes) == 1
    assert notes[0].anchor.page == 2 and notes[0].anchor.label == "ii"
    assert notes[0].text == f"[text comment by J. Reviewer] {ANNOTATION_TEXT}"


def test_scanned_pages_are_decided_page_by_page(tmp_path: Path) -> None:
    scan = make_scan(render_text_page(), degrees=3)
    pdf = make_scanned_pdf(tmp_path / "mixed.pdf", [scan], text_page="A typed cover letter that has a text layer.")
    doc = load(pdf, limits=Limits(page_tokens=2048))
    assert [p.scanned for p in doc.pages] == [False, True]
    images = [s for s in doc.segments if s.kind == "image"]
    assert len(images) == 1
    image = images[0]
    assert image.role == "page" and image.anchor.page == 2 and image.anchor.label == "2"
    assert image.anchor.bbox == (0.0, 0.0, 595.0, 842.0)
    assert doc.pages[1].image_png == image.image_png
    width, height = struct.unpack(">II", image.image_png[16:24])  # type: ignore[index]
    assert width % 32 == 0 and height % 32 == 0
    assert 1900 <= vision_tokens(width, height) <= 2048
    assert "typed cover letter" in doc.text_of_page(1)


def test_vision_budget_sizes_an_a4_page_at_about_150_dpi() -> None:
    width, height = fit_to_budget(595, 842, 2100, enlarge=True)  # A4 in points
    assert width % 32 == 0 and height % 32 == 0
    assert vision_tokens(width, height) <= 2100
    assert 140 <= width / 595 * 72 <= 152
    assert fit_to_budget(100, 50, 2048) == (96, 32)  # never enlarged beyond the source


def test_pdf_with_a_page_image_over_the_pixel_limit_is_refused(tmp_path: Path) -> None:
    from ingest.errors import TooLarge

    pdf = make_scanned_pdf(tmp_path / "big.pdf", [make_scan(render_text_page())])
    with pytest.raises(TooLarge, match="decompression bomb"):
        load(pdf, limits=Limits(max_image_pixels=1_000_000))
