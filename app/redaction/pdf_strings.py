"""Two edits of a page's content stream that redaction needs before MuPDF removes anything, done on
the stream's own bytes (everything else in it is copied as it was):

- `split_shown_strings`: every string a text operator shows (Tj, TJ, ', ") split into one string per
  glyph code, see app/redaction/apply.py for the MuPDF behaviour this avoids;
- `strip_marked_text`: the words a marked-content property carries (ActualText, Alt, E) taken out
  (and `marked_strings`: those words, for the candidate list).

A small tokenizer, not a PDF library's content parser: pypdf's turns a hex string it takes for
UTF-16 into text and cannot give its bytes back exactly, and a glyph code must survive byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_WHITE = b" \t\r\n\f\x00"
_DELIM = b"()<>[]{}/%"
_TEXT_OPS = (b"Tj", b"TJ", b"'", b'"')
MARKED_TEXT_KEYS = (b"/ActualText", b"/Alt", b"/E")


@dataclass(frozen=True)
class Token:
    kind: str  # string, hex, name, number, op, [, ], <<, >>, image
    start: int
    end: int


class Unreadable(ValueError):
    """The stream is not what a content stream should be: it is left as it is."""


def tokens(data: bytes) -> Iterator[Token]:
    i, n = 0, len(data)
    while i < n:
        c = data[i : i + 1]
        if c in (b" ", b"\t", b"\r", b"\n", b"\f", b"\x00"):
            i += 1
        elif c == b"%":
            while i < n and data[i : i + 1] not in (b"\r", b"\n"):
                i += 1
        elif c == b"(":
            start, depth = i, 0
            while i < n:
                ch = data[i : i + 1]
                if ch == b"\\":
                    i += 2
                    continue
                if ch == b"(":
                    depth += 1
                elif ch == b")":
                    depth -= 1
                    if depth == 0:
                        break
                i += 1
            if i >= n:
                raise Unreadable("a string is not closed")
            i += 1
            yield Token("string", start, i)
        elif data[i : i + 2] == b"<<":
            yield Token("<<", i, i + 2)
            i += 2
        elif data[i : i + 2] == b">>":
            yield Token(">>", i, i + 2)
            i += 2
        elif c == b"<":
            end = data.find(b">", i)
            if end < 0:
                raise Unreadable("a hex string is not closed")
            yield Token("hex", i, end + 1)
            i = end + 1
        elif c in (b"[", b"]", b"{", b"}"):
            yield Token(c.decode(), i, i + 1)
            i += 1
        elif c == b"/":
            start = i
            i += 1
            while i < n and data[i] not in _WHITE and data[i] not in _DELIM:
                i += 1
            yield Token("name", start, i)
        else:
            start = i
            while i < n and data[i] not in _WHITE and data[i] not in _DELIM:
                i += 1
            if i == start:
                raise Unreadable(f"unexpected byte {data[i]!r}")
            word = data[start:i]
            if re.fullmatch(rb"[+-]?(\d+\.?\d*|\.\d+)", word):
                yield Token("number", start, i)
            elif word == b"BI":  # an inline image: its data is binary up to EI
                end = _inline_image_end(data, i)
                yield Token("image", start, end)
                i = end
            else:
                yield Token("op", start, i)


def _inline_image_end(data: bytes, at: int) -> int:
    found = re.search(rb"\sID\s", data[at:])
    if found is None:
        raise Unreadable("an inline image has no data")
    end = re.search(rb"\sEI(?=[\s%/\[\]<>()]|$)", data[at + found.end() :])
    if end is None:
        raise Unreadable("an inline image does not end")
    return at + found.end() + end.end()


def string_bytes(data: bytes, token: Token) -> bytes:
    """The bytes a string token holds (escapes undone, hex decoded)."""
    raw = data[token.start : token.end]
    if token.kind == "hex":
        digits = re.sub(rb"\s", b"", raw[1:-1])
        if len(digits) % 2:
            digits += b"0"
        return bytes.fromhex(digits.decode("ascii"))
    body = raw[1:-1]
    out = bytearray()
    i = 0
    escapes = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f", b"(": b"(", b")": b")", b"\\": b"\\"}
    while i < len(body):
        ch = body[i : i + 1]
        if ch != b"\\":
            out += ch
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in escapes:
            out += escapes[nxt]
            i += 2
        elif nxt.isdigit():
            octal = re.match(rb"[0-7]{1,3}", body[i + 1 : i + 4])
            value = octal.group(0) if octal else b"0"
            out.append(int(value, 8) & 0xFF)
            i += 1 + len(value)
        elif nxt in (b"\r", b"\n"):  # a line continuation
            i += 2 + (1 if body[i + 1 : i + 3] == b"\r\n" else 0)
        else:
            i += 1
    return bytes(out)


def split_shown_strings(data: bytes, code_length: dict[str, int | None]) -> bytes | None:
    """The stream with every shown string split into glyph codes (`code_length` bytes each, by the
    font's resource name), or None when nothing changed or the stream cannot be read."""
    try:
        found = list(tokens(data))
    except Unreadable:
        return None
    out: list[bytes] = []
    emitted = 0
    size: int | None = None
    operands: list[Token] = []
    changed = False
    for token in found:
        if token.kind != "op":
            operands.append(token)
            continue
        op = data[token.start : token.end]
        if op == b"Tf" and len(operands) >= 2 and operands[-2].kind == "name":
            size = code_length.get(data[operands[-2].start + 1 : operands[-2].end].decode("latin-1"))
        if op in _TEXT_OPS and size is not None and operands:
            pieces = _split_operands(data, operands if op == b"TJ" else operands[-1:], size)
            if pieces is not None:
                first = operands[0].start
                out.append(data[emitted:first])
                if op == b"'":
                    prefix = b"T* "
                elif op == b'"' and len(operands) >= 3:
                    aw, ac = (data[t.start : t.end] for t in operands[:2])
                    prefix = aw + b" Tw " + ac + b" Tc T* "
                else:
                    prefix = b""
                out.append(prefix + b"[" + b"".join(pieces) + b"] TJ")
                emitted = token.end
                changed = True
        operands = []
    if not changed:
        return None
    out.append(data[emitted:])
    return b"".join(out)


def _split_operands(data: bytes, operands: list[Token], size: int) -> list[bytes] | None:
    pieces: list[bytes] = []
    for t in operands:
        if t.kind in ("[", "]"):
            continue
        if t.kind == "number":
            pieces.append(b" " + data[t.start : t.end] + b" ")
        elif t.kind in ("string", "hex"):
            raw = string_bytes(data, t)
            pieces += [b"<" + raw[i : i + size].hex().encode() + b">" for i in range(0, len(raw), size)]
        else:
            return None  # not a shape a text operator takes: leave it
    return pieces


def strip_marked_text(data: bytes) -> bytes | None:
    """The stream with ActualText, Alt and E (and their strings) taken out of every inline
    marked-content property list, or None when there were none or the stream cannot be read."""
    try:
        found = list(tokens(data))
    except Unreadable:
        return None
    cut = [(name.start, string.end) for name, string in _marked(data, found)]
    if not cut:
        return None
    out, at = [], 0
    for start, end in cut:
        out.append(data[at:start])
        at = end
    out.append(data[at:])
    return b"".join(out)


def _marked(data: bytes, found: list[Token]) -> Iterator[tuple[Token, Token]]:
    """Each ActualText, Alt or E key inside a property list (<< >>) and the string it holds."""
    depth = 0
    for k, token in enumerate(found):
        if token.kind == "<<":
            depth += 1
        elif token.kind == ">>":
            depth -= 1
        elif (
            depth > 0
            and token.kind == "name"
            and data[token.start : token.end] in MARKED_TEXT_KEYS
            and k + 1 < len(found)
            and found[k + 1].kind in ("string", "hex")
        ):
            yield token, found[k + 1]


def marked_strings(data: bytes) -> list[bytes]:
    """The bytes of every ActualText, Alt and E string in the stream's inline marked-content property
    lists (what `strip_marked_text` takes out), for the candidate list; none when it cannot be read."""
    if not any(key in data for key in MARKED_TEXT_KEYS):
        return []  # most streams have none: not worth tokenizing
    try:
        found = list(tokens(data))
    except Unreadable:
        return []
    return [string_bytes(data, string) for _name, string in _marked(data, found)]
