"""Reading order of OCR lines (ingest.ocr_layout) on synthetic page layouts: boxes as an engine
reports them, lines top to bottom across the whole page."""

from __future__ import annotations

import random

from ingest.ocr import OcrLine, OcrWord
from ingest.ocr_layout import blocks_in_reading_order

HEIGHT = 20.0


def line(x: float, y: float, text: str, width: float = 300.0) -> OcrLine:
    """A line `width` pixels wide whose text starts with `text` and, like print, has one character per
    half line height (a 300-pixel line holds 30)."""
    box = (x, y, x + width, y + HEIGHT)
    filled = (text + " " + "lorem ipsum dolor sit amet " * 9)[: max(len(text), int(width / (HEIGHT / 2)))]
    return OcrLine(box, filled.strip(), (OcrWord(box, filled.strip()),))


def as_engine_reports(lines: list[OcrLine]) -> list[OcrLine]:
    return sorted(lines, key=lambda ln: (ln.bbox[1], ln.bbox[0]))


def read(lines: list[OcrLine]) -> list[str]:
    """The lines' first words (their names) in reading order."""
    return [ln.text.split()[0] for block in blocks_in_reading_order(as_engine_reports(lines)) for ln in block.lines]


def names(lines: list[OcrLine]) -> list[str]:
    return [ln.text.split()[0] for ln in lines]


def column(x: float, top: float, name: str, count: int, width: float = 300.0) -> list[OcrLine]:
    return [line(x, top + 26 * i, f"{name}-{i}", width) for i in range(count)]


def test_single_column_reads_top_to_bottom() -> None:
    lines = column(50, 100, "body", 12, width=600)
    assert read(lines) == [f"body-{i}" for i in range(12)]


def test_two_columns_are_read_column_by_column() -> None:
    left, right = column(50, 100, "left", 8), column(400, 100, "right", 8)
    assert read([*left, *right]) == names([*left, *right])


def test_columns_no_band_separates_are_read_left_first_even_if_the_right_starts_higher() -> None:
    # a box too wide to be an inset bridges the gutter, so no cut is possible at all
    left = [*column(50, 104, "left", 4), *column(50, 208, "left-narrow", 4, width=100)]
    right = [*column(400, 100, "right", 4), *column(600, 204, "right-narrow", 4, width=100)]
    box = line(170, 230, "box", width=400)
    assert read([*left, *right, box])[:9] == names([*left, right[0]])


def test_title_then_two_columns_then_a_full_width_footer() -> None:
    title = line(150, 40, "title", width=400)
    left, right = column(50, 100, "left", 6), column(400, 100, "right", 6)
    footer = line(50, 300, "footer", width=650)
    assert read([title, *left, *right, footer]) == ["title", *names([*left, *right]), "footer"]


def test_a_heading_across_both_columns_breaks_the_flow() -> None:
    upper = [*column(50, 100, "a", 4), *column(400, 100, "b", 4)]
    heading = line(50, 220, "heading", width=650)
    lower = [*column(50, 260, "c", 4), *column(400, 260, "d", 4)]
    assert read([*upper, heading, *lower]) == names([*upper, heading, *lower])


def test_a_caption_between_the_columns_is_read_after_them() -> None:
    # text wraps around a picture set between the columns; its caption sits in the gutter
    left = [*column(50, 100, "left", 4), *column(50, 204, "left-narrow", 6, width=180)]
    # the right column's first line sits a little higher, as on a real scan
    right = [*column(400, 96, "right", 4), *column(520, 200, "right-narrow", 6, width=180)]
    caption = line(260, 300, "caption", width=230)
    assert read([*left, *right, caption]) == names([*left, *right, caption])


def test_a_table_of_short_cells_is_read_row_by_row() -> None:
    labels = ["Purchase Price:", "Closing Date:", "Seller:", "Buyer:", "Governing Law:"]
    values = ["$1,000,000", "March 3, 2021", "Acme Corp.", "Beta LLC", "Delaware"]
    cells = [
        cell
        for i, (label, value) in enumerate(zip(labels, values, strict=True))
        for cell in (line(50, 100 + 26 * i, label, width=140), line(400, 100 + 26 * i, value, width=130))
    ]
    assert read(cells) == [t.split()[0] for pair in zip(labels, values, strict=True) for t in pair]


def test_noisy_slightly_tilted_boxes_keep_the_columns() -> None:
    rng = random.Random(7)

    def jittered(ln: OcrLine, tilt: float) -> OcrLine:
        x0, y0, x1, y1 = ln.bbox
        # a page left 1 degree off square: boxes drift down across the page and widen in height
        dy = x0 * tilt + rng.uniform(-2, 2)
        box = (x0 + rng.uniform(-3, 3), y0 + dy, x1 + rng.uniform(-3, 3), y1 + dy + (x1 - x0) * tilt)
        return OcrLine(box, ln.text, (OcrWord(box, ln.text),))

    left, right = column(50, 100, "left", 10), column(400, 100, "right", 10)
    lines = [jittered(ln, 0.017) for ln in [*left, *right]]
    assert read(lines) == names([*left, *right])


def test_lines_with_no_text_are_dropped_and_an_empty_page_gives_no_blocks() -> None:
    assert blocks_in_reading_order([]) == []
    blank = OcrLine((50.0, 130.0, 350.0, 150.0), "  ", ())
    assert read([line(50, 100, "kept"), blank]) == ["kept"]


def test_a_clause_number_a_tab_stop_away_stays_on_its_line() -> None:
    # as an engine reports a numbered paragraph: the number, a tab, then the text, as two lines
    box = (256.0, 170.0, 290.0, 190.0)
    number = OcrLine(box, "5.", (OcrWord(box, "5."),))
    first = line(346, 169, "Master", width=1210)
    second = line(133, 201, "without", width=1324)
    follow = line(660, 262, "[SIGNATURE", width=374)
    page = line(836, 327, "2", width=23)
    blocks = blocks_in_reading_order(as_engine_reports([number, first, second, follow, page]))
    assert [ln.text.split()[0] for b in blocks for ln in b.lines] == ["5.", "without", "[SIGNATURE", "2"]
    assert blocks[0].lines[0].text.startswith("5. Master")
    assert [w.text for w in blocks[0].lines[0].words][:2] == ["5.", first.words[0].text]
