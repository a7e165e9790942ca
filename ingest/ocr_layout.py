"""OCR lines -> text blocks in reading order.

Engines report lines top to bottom across the whole page, so on a two-column page the columns'
lines interleave; a quote that runs over a line break would then not be found. Lines are first
joined into blocks (a line continues the block above it when it starts close below it and overlaps
it sideways), then the blocks are ordered by recursive XY-cut: split the page at the widest empty
horizontal band, else at the widest empty vertical band (columns, read left to right), and so on
inside each part.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ingest.ocr import OcrLine

Box = tuple[float, float, float, float]
LINE_GAP = 0.9  # a line joins the block above when the gap is under this many line heights
OVERLAP = 0.3  # ... and they overlap sideways by this share of the narrower one


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
    groups: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.bbox[1], ln.bbox[0])):
        target = next((g for g in reversed(groups) if _continues(g[-1].bbox, line.bbox, height)), None)
        if target is None:
            groups.append([line])
        else:
            target.append(line)
    blocks = [OcrBlock(_union([ln.bbox for ln in g]), tuple(_reading_lines(g))) for g in groups]
    return _xy_cut(blocks)


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


def _xy_cut(blocks: list[OcrBlock]) -> list[OcrBlock]:
    if len(blocks) <= 1:
        return blocks
    rows, row_gap = _split(blocks, 1)
    columns, column_gap = _split(blocks, 0)
    parts = columns if column_gap > row_gap else rows
    if len(parts) > 1:
        return [block for part in parts for block in _xy_cut(part)]
    return sorted(blocks, key=lambda b: (b.bbox[1], b.bbox[0]))


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
