"""An answer cut into claims: its sentences, list items and table cells, with their place in the text.

Markdown aware: a heading or a table's header row is a heading, not a claim; a list item or a table
cell is split into sentences like a paragraph; code blocks are left out. A sentence does not end
inside a quotation, nor after an abbreviation ("Inc.", "p.", "U.S."), and a citation written right
after its full stop ("... Texas. [p. 5]") stays with it.

Some claims need no source (exempt): headings, statements that the documents do not say something
("I could not find ...", "The agreement does not specify ..."), and courtesies ("Sure.", "I hope this
helps."). Grounding marks them as such instead of unsupported; see `exemption`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING = "heading"
ABSENCE = "absence"
COURTESY = "courtesy"

_ABBREVIATIONS = frozenset({
    "inc", "ltd", "co", "corp", "llc", "llp", "plc", "no", "nos", "mr", "mrs", "ms", "dr", "st", "p", "pp", "sec",
    "secs", "art", "arts", "vs", "v", "e.g", "i.e", "etc", "cf", "fig", "al", "jr", "sr", "u.s", "u.k", "n.a",
    "s.a", "b.v", "n.v", "ave", "blvd", "dept", "est", "approx", "para", "paras", "ch", "cl", "sch"
})  # fmt: skip
_COMPANY_SUFFIXES = frozenset(["inc", "ltd", "co", "corp", "llc", "llp", "plc"])
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+")
_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_QUOTE_BLOCK_RE = re.compile(r"^\s*>\s?")
_TABLE_RULE_RE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_BOLD_LINE_RE = re.compile(r"^\s*(\*\*|__)[^*_]{1,80}(\*\*|__)\s*:?\s*$")
_TRAILER_RE = re.compile(r"""[\s"'”’)\]*_]*(?:\[[^\[\]\n]{1,40}\][\s.,;:)]*)*""")
_OPENERS = {'"': '"', "“": "”"}

_ABSENCE_RE = re.compile(
    r"\b(?:(?:could|can)\s*(?:not|n't)|unable\s+to|did\s*(?:not|n't)|was\s*(?:not|n't)\s+able\s+to)\s+"
    r"(?:find|locate|identify|determine|see)\b"
    r"|\b(?:does|do|did)\s*(?:not|n't)\s+(?:appear\s+to\s+)?"
    r"(?:say|state|mention|specify|contain|include|provide|address|define|set\s+out|indicate|discuss|give)\b"
    r"|\bno\s+(?:information|mention|provision|clause|details?|reference|indication|data)\b"
    r"|\b(?:is|are|was|were)\s+not\s+(?:specified|mentioned|stated|provided|given|defined|found|addressed|indicated)\b"
    r"|\bnot\s+(?:specified|mentioned|stated|found)\s+in\b",
    re.IGNORECASE,
)
_COURTESY_RE = re.compile(
    r"^\W*(?:sure|certainly|of course|okay|ok|yes|no|hello|hi|thanks?(?: you)?|you're welcome|great question"
    r"|i hope (?:this|that) helps|let me know\b.*|feel free\b.*|please (?:let me know|note)\b.*"
    r"|here (?:is|are) (?:the|a|an|my)\b[^.]{0,60}?(?:answer|summary|details|information|overview)s?"
    r"|based on the (?:provided )?(?:document|documents|contract|agreement|text)s?)\W*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Claim:
    start: int  # offsets in the answer: answer[start:end] is the claim as written
    end: int
    kind: str  # 'sentence' | 'item' | 'cell' | 'heading'
    text: str
    context: str = ""  # a table cell's column name and row name: what the cell is about


def split_claims(answer: str) -> list[Claim]:
    claims: list[Claim] = []
    fenced = False
    paragraph: list[tuple[int, int]] = []  # (start, end) of the lines of the open paragraph
    table: list[tuple[int, int]] = []  # the same for the rows of the open table

    def flush() -> None:
        if paragraph:
            claims.extend(_sentences(answer, paragraph[0][0], paragraph[-1][1], "sentence"))
            paragraph.clear()

    position = 0
    for line in answer.splitlines(keepends=True):
        start, end = position, position + len(line.rstrip("\r\n"))
        position += len(line)
        body = answer[start:end]
        if _FENCE_RE.match(body):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if not body.strip():
            flush()
            if table:
                claims.extend(_table(answer, table))
                table.clear()
            continue
        if _HEADING_RE.match(body) or _BOLD_LINE_RE.match(body):
            flush()
            claims.append(_claim(answer, start, end, HEADING))
            continue
        if body.lstrip().startswith("|"):
            flush()
            table.append((start, end))
            continue
        if table:
            claims.extend(_table(answer, table))
            table.clear()
        marker = _LIST_RE.match(body) or _QUOTE_BLOCK_RE.match(body)
        if marker:
            flush()
            claims.extend(_sentences(answer, start + marker.end(), end, "item" if _LIST_RE.match(body) else "sentence"))
            continue
        paragraph.append((start, end))
    flush()
    claims.extend(_table(answer, table))
    return [c for c in claims if c.text]


def _claim(answer: str, start: int, end: int, kind: str) -> Claim:
    while start < end and answer[start].isspace():
        start += 1
    while end > start and answer[end - 1].isspace():
        end -= 1
    return Claim(start, end, kind, answer[start:end])


def _cell_spans(answer: str, start: int, end: int) -> list[tuple[int, int]]:
    spans = []
    cell_start = start
    for i in range(start, end + 1):
        if i == end or (answer[i] == "|" and (i == 0 or answer[i - 1] != "\\")):
            if answer[cell_start:i].strip():
                spans.append((cell_start, i))
            cell_start = i + 1
    return spans


def _table(answer: str, rows: list[tuple[int, int]]) -> list[Claim]:
    """Cells as claims; the row above the |---| rule names the columns (headings). Each cell carries
    its column's name and its row's first cell as context."""
    out: list[Claim] = []
    header: list[str] = []
    for r, (start, end) in enumerate(rows):
        if _TABLE_RULE_RE.match(answer[start:end]):
            continue
        spans = _cell_spans(answer, start, end)
        is_header = r + 1 < len(rows) and _TABLE_RULE_RE.match(answer[rows[r + 1][0] : rows[r + 1][1]]) is not None
        if is_header:
            header = [answer[s:e].strip() for s, e in spans]
            out += [_claim(answer, s, e, HEADING) for s, e in spans]
            continue
        row_name = answer[spans[0][0] : spans[0][1]].strip() if spans else ""
        for c, (s, e) in enumerate(spans):
            column = header[c] if c < len(header) else ""
            context = " ".join(x for x in (column, row_name if c else "") if x)
            out += [Claim(x.start, x.end, x.kind, x.text, context) for x in _sentences(answer, s, e, "cell")]
    return out


def _sentences(answer: str, start: int, end: int, kind: str) -> list[Claim]:
    out: list[Claim] = []
    sentence_start = start
    closing: str | None = None  # the quotation mark that closes the open quotation
    i = start
    while i < end:
        ch = answer[i]
        if closing is not None:
            if ch == closing:
                closing = None
        elif ch in _OPENERS and (ch != '"' or answer.count('"', i + 1, end) % 2 == 1):
            closing = _OPENERS[ch]
        elif ch in ".!?" and _ends_sentence(answer, i, end):
            trailer = _TRAILER_RE.match(answer, i + 1, end)
            stop = trailer.end() if trailer else i + 1
            out.append(_claim(answer, sentence_start, stop, kind))
            sentence_start = i = stop
            continue
        i += 1
    if sentence_start < end:
        out.append(_claim(answer, sentence_start, end, kind))
    return [c for c in out if c.text]


def _ends_sentence(text: str, i: int, end: int) -> bool:
    after = text[i + 1 : end]
    if after and not (after[0].isspace() or after[0] in "\"'”’)[*_"):
        return False  # '3.5', 'U.S.A', 'e.g.x'
    if text[i] == ".":
        word = re.search(r"([\w.]+)$", text[max(0, i - 12) : i])
        if word:
            token = word.group(1).lower()
            if token in _COMPANY_SUFFIXES and re.match(
                r"\s+(?:The|This|That|These|It|Its|They|In|Each|Both|Either)\b", after
            ):
                return True  # 'Acme Ltd. The term is ...': the company's name ends the sentence
            if token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha()):
                return False
            if (
                token.isdigit()
                and i > 0
                and re.search(r"(?:section|clause|no|§)\s*$", text[max(0, i - 20) : i - len(token)], re.I)
            ):
                return False
    rest = after.lstrip(" \"'”’)*_")
    if rest.startswith("["):
        return True
    return not rest or not rest[0].islower()


def exemption(claim: Claim) -> str | None:
    """Why a claim needs no source (HEADING, ABSENCE, COURTESY), or None when it does."""
    if claim.kind == HEADING:
        return HEADING
    text = claim.text.strip()
    if _COURTESY_RE.match(text):
        return COURTESY
    if _ABSENCE_RE.search(text):
        return ABSENCE
    return None
