"""Word-level differences inside a pair of clauses, fast on long ones.

difflib compares short clauses word by word directly. A long one (a document without clause numbers
is one clause) is compared sentence by sentence first, and word by word only inside the sentences
that differ: difflib's time grows with the product of the lengths, and a 47,000-word text takes
seconds word by word. Sentences end at a word ending in '.', ';' or ':', which does not depend on the
layout, so both versions cut the same way. The result is difflib's opcodes over the words, as if
computed directly (though not always the shortest edit).
"""

from __future__ import annotations

import difflib

LONG = 1500  # words in both clauses together, above which sentences are compared first
Opcode = tuple[str, int, int, int, int]


def word_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    if len(a) + len(b) <= LONG:
        return _direct(a, b, 0, 0)
    spans_a, spans_b = _sentences(a), _sentences(b)
    keys_a = [tuple(a[s:e]) for s, e in spans_a]
    keys_b = [tuple(b[s:e]) for s, e in spans_b]
    ops: list[Opcode] = []
    matcher = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        wa1, wa2 = _words(spans_a, i1, i2, len(a))
        wb1, wb2 = _words(spans_b, j1, j2, len(b))
        if tag == "equal":
            ops.append(("equal", wa1, wa2, wb1, wb2))
        else:
            ops.extend(_direct(a[wa1:wa2], b[wb1:wb2], wa1, wb1))
    return ops


def _direct(a: list[str], b: list[str], at_a: int, at_b: int) -> list[Opcode]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(tag, i1 + at_a, i2 + at_a, j1 + at_b, j2 + at_b) for tag, i1, i2, j1, j2 in matcher.get_opcodes()]


def _sentences(words: list[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for k, word in enumerate(words):
        if word.endswith((".", ";", ":")):
            spans.append((start, k + 1))
            start = k + 1
    if start < len(words):
        spans.append((start, len(words)))
    return spans


def _words(spans: list[tuple[int, int]], first: int, last: int, total: int) -> tuple[int, int]:
    """The word range of sentences [first:last]; an empty range sits where sentence `first` starts."""
    if last > first:
        return spans[first][0], spans[last - 1][1]
    at = spans[first][0] if first < len(spans) else total
    return at, at
