"""OCR lines -> text blocks in reading order.

Engines report lines top to bottom across the whole page, so on a two-column page the columns'
lines interleave; a quote that runs over a line break would then not be found. Lines are first
joined into blocks (a line continues the block above it when it starts close below it and overlaps
it sideways), then the blocks are ordered by recursive XY-cut: split the page at the widest empty
horizontal band, else at the widest empty vertical band (columns, read left to right), and so on
inside each part. Full-width lines (titles, headings across both columns) leave no vertical band
beside them, so they cut the page into rows and break the columns' flow where they stand.

Two refinements the plain cut lacks:
- Insets: a caption or a box set between two columns (with column text beside it on both sides)
  blocks the gutter; it is set aside, the columns are cut, and it is read after them.
- Tables: a row of short cells side by side (a label and its value, a signature block) also
  leaves a vertical band; cutting there would read all labels, then all values. Columns are only
  cut when their lines are long (prose) or do not line up row by row; otherwise the part is read
  row by row, each row left to right.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ingest.ocr import OcrLine

Box = tuple[float, float, float, float]
LINE_GAP = 0.9  # a line joins the block above when the gap is under this many line heights
OVERLAP = 0.3  # ... and they overlap sideways by this share of the narrower one
PROSE = 18  # a column of prose: its median line has at least this many characters (table cells fewer)
ALIGNED = 0.6  # a table: this share of the shorter side's lines have a partner on the same row
INSET = 0.5  # an inset is narrower than this share of the part it sits in
LABEL = 3.0  # a clause number or bullet: at most this many line heights wide, and at most this many
# line heights before the text it labels (a tab stop), which engines report as a line of its own


@dataclass(frozen=True)
class OcrBlock:
    bbox: Box
    lines: tuple[OcrLine, ...]

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def blocks_in_reading_order(lines: list[OcrLine]) -> list[OcrBlock]:
    lines = [line for line in lines if line.text.strip()]
    if not lines:
        return []
    height = statistics.median(line.bbox[3] - line.bbox[1] for line in lines)
    lines = _join_labels(lines, height)
    groups: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.bbox[1], ln.bbox[0])):
        target = next((g for g in reversed(groups) if _continues(g[-1].bbox, line.bbox, height)), None)
        if target is None:
            groups.append([line])
        else:
            target.append(line)
    blocks = [_block(_reading_lines(g)) for g in groups]
    return _xy_cut(blocks, height)


def _join_labels(lines: list[OcrLine], height: float) -> list[OcrLine]:
    """Each clause number or bullet ('5.', '(a)', '•') joined to the text a tab stop away on its right:
    on its own it would start a block of its own, or the line below would join it."""
    out = sorted(lines, key=lambda ln: ln.bbox[0])
    at = 0
    while at < len(out):
        label = out[at]
        x0, _, x1, _ = label.bbox
        nearby = (
            i
            for i, ln in enumerate(out)
            if i != at
            and 0 <= ln.bbox[0] - x1 <= LABEL * height
            and abs(_mid(ln.bbox) - _mid(label.bbox)) < 0.5 * height
        )
        found = next(nearby, None) if x1 - x0 <= LABEL * height else None
        if found is None:
            at += 1
            continue
        text = out.pop(found)
        joined = OcrLine(
            _union([label.bbox, text.bbox]),
            f"{label.text} {text.text}",
            label.words + text.words,
            None if label.confidence is None or text.confidence is None else min(label.confidence, text.confidence),
        )
        out[at if found > at else at - 1] = joined
    return out


def _block(lines: list[OcrLine]) -> OcrBlock:
    return OcrBlock(_union([ln.bbox for ln in lines]), tuple(lines))


def _continues(above: Box, line: Box, height: float) -> bool:
    gap = line[1] - above[3]
    if gap > LINE_GAP * height or line[1] < above[1]:
        return False
    overlap = min(above[2], line[2]) - max(above[0], line[0])
    return overlap > OVERLAP * min(above[2] - above[0], line[2] - line[0])


def _reading_lines(group: list[OcrLine]) -> list[OcrLine]:
    """Lines of a block top to bottom; pieces of one printed line (same height) left to right."""
    out: list[OcrLine] = []
    for line in group:
        if out and abs(_mid(line.bbox) - _mid(out[-1].bbox)) < 0.5 * (line.bbox[3] - line.bbox[1]):
            at = len(out)
            while at > 0 and abs(_mid(out[at - 1].bbox) - _mid(line.bbox)) < 0.5 * (line.bbox[3] - line.bbox[1]):
                if out[at - 1].bbox[0] <= line.bbox[0]:
                    break
                at -= 1
            out.insert(at, line)
        else:
            out.append(line)
    return out


def _mid(box: Box) -> float:
    return (box[1] + box[3]) / 2


def _union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


# Each cut recurses into its parts. Real pages need a handful of levels; a page of staircased lines
# could need one per line, so past this depth the rest is read row by row.
MAX_CUT_DEPTH = 64


def _xy_cut(blocks: list[OcrBlock], height: float, depth: int = 0) -> list[OcrBlock]:
    if len(blocks) <= 1:
        return blocks
    if depth >= MAX_CUT_DEPTH:
        return _rows_of_blocks(blocks, height)
    rows, row_gap = _split(blocks, 1)
    columns, column_gap, insets = _columns(blocks)
    if len(columns) > 1 and column_gap > row_gap:
        if _is_table(columns, height):
            return _by_rows([line for block in blocks for line in block.lines], height)
        return [block for part in columns for block in _xy_cut(part, height, depth + 1)] + _xy_cut(
            insets, height, depth + 1
        )
    if len(rows) > 1:
        return [block for part in rows for block in _xy_cut(part, height, depth + 1)]
    return _rows_of_blocks(blocks, height)


def _columns(blocks: list[OcrBlock]) -> tuple[list[list[OcrBlock]], float, list[OcrBlock]]:
    """Blocks split at empty vertical bands, the widest band, and the insets set aside to find them."""
    parts, gap = _split(blocks, 0)
    if len(parts) > 1:
        return parts, gap, []
    width = _union([b.bbox for b in blocks])
    insets = [b for b in blocks if _is_inset(b, blocks, width[2] - width[0])]
    rest = [b for b in blocks if b not in insets]
    if not insets or not rest:
        return parts, gap, []
    parts, gap = _split(rest, 0)
    return (parts, gap, insets) if len(parts) > 1 else ([blocks], 0.0, [])


def _is_inset(block: OcrBlock, blocks: list[OcrBlock], width: float) -> bool:
    """A narrow block with other blocks' lines wholly to its left and wholly to its right, level with it."""
    x0, y0, x1, y1 = block.bbox
    if x1 - x0 >= INSET * width:
        return False
    beside = [ln.bbox for b in blocks if b is not block for ln in b.lines if ln.bbox[1] < y1 and ln.bbox[3] > y0]
    return any(b[2] <= x0 for b in beside) and any(b[0] >= x1 for b in beside)


def _is_table(columns: list[list[OcrBlock]], height: float) -> bool:
    """Side-by-side parts whose lines are short and sit on shared rows: cells of a table, not columns."""
    if all(statistics.median(len(ln.text) for b in part for ln in b.lines) >= PROSE for part in columns):
        return False
    sides = [[ln.bbox for b in part for ln in b.lines] for part in columns]
    fewest = min(sides, key=len)
    others = [b for side in sides if side is not fewest for b in side]
    paired = sum(1 for b in fewest if any(abs(_mid(b) - _mid(o)) < 0.5 * height for o in others))
    return paired >= ALIGNED * len(fewest)


def _by_rows(lines: list[OcrLine], height: float) -> list[OcrBlock]:
    """Lines grouped into printed rows (top to bottom), each row one block read left to right."""
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: _mid(ln.bbox)):
        if rows and _mid(line.bbox) - _mid(rows[-1][0].bbox) < 0.5 * height:
            rows[-1].append(line)
        else:
            rows.append([line])
    return [_block(sorted(row, key=lambda ln: ln.bbox[0])) for row in rows]


def _rows_of_blocks(blocks: list[OcrBlock], height: float) -> list[OcrBlock]:
    """Blocks no band separates: top to bottom, those starting level with each other left to right
    (a column whose first line sits a few pixels higher must not jump ahead of the one to its left)."""
    ordered = sorted(blocks, key=lambda b: b.bbox[1])
    rows: list[list[OcrBlock]] = []
    for block in ordered:
        if rows and block.bbox[1] - rows[-1][0].bbox[1] < 0.5 * height:
            rows[-1].append(block)
        else:
            rows.append([block])
    return [block for row in rows for block in sorted(row, key=lambda b: b.bbox[0])]


def _split(blocks: list[OcrBlock], axis: int) -> tuple[list[list[OcrBlock]], float]:
    """Blocks grouped by the empty bands between them along an axis (1: y, 0: x), in order, and the
    widest band (0 when there is none)."""
    ordered = sorted(blocks, key=lambda b: b.bbox[axis])
    parts: list[list[OcrBlock]] = [[ordered[0]]]
    reach = ordered[0].bbox[axis + 2]
    widest = 0.0
    for block in ordered[1:]:
        if block.bbox[axis] > reach:
            widest = max(widest, block.bbox[axis] - reach)
            parts.append([block])
        else:
            parts[-1].append(block)
        reach = max(reach, block.bbox[axis + 2])
    return parts, widest
