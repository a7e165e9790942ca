"""The JSON schema an extraction answer must follow, its size bounds, and a checker for it.

One answer covers a group of fields: {"<field key>": <cell>, ...}. Evidence comes first. A short
answer's cell is {"evidence": <the passage, copied>, "page": <its marker>, "answer": <a few words>};
a yes/no clause's cell is {"clause": <the clause, copied>, "page": ..., "present": "yes" | "no"}.
Saying that the document holds nothing is a separate branch that opens with empty evidence and then
allows only {"evidence": "", "answer": "not stated"} (or {"clause": "", "present": "no"}): the model
has to decide, at the first character of the evidence, whether it copies a passage or declares that
there is none. 'Not stated' is never the first thing offered, and a value can never come without
the passage the model read it from.
When a word search offered passages, a yes/no clause's cell opens with the number of the one that
is such a clause ({"passage": 2, "present": ...}); a short answer's with whether the document states
it at all, then the passage's number and the answer ({"stated": "yes", "passage": 2, "answer": ...}),
or 0 and the evidence copied from elsewhere, or {"stated": "no", "answer": "not stated"}. An offered
passage is the evidence, word for word.

llama.cpp turns the schema into a grammar (model servers get it as OpenAI structured output, whose
strict mode wants an object at the root), so the model can only write JSON of this shape. Every
string has a maxLength, so the longest possible answer is known: with max_tokens at that bound the
grammar always completes, and the output always parses.
"""

from __future__ import annotations

import json
from typing import Any

EVIDENCE = "evidence"
CLAUSE = "clause"
PAGE = "page"
ANSWER = "answer"
PRESENT = "present"
PASSAGE = "passage"
STATED = "stated"
NOT_STATED = "not stated"
YES, NO = "yes", "no"
PAGE_CHARS = 16
# Shorter evidence proves nothing (and "n/a" or "none" must not pass for a passage).
MIN_EVIDENCE_CHARS = 8
# The grammar lets one JSON string character be at most a 6-byte escape (\\uXXXX); a token is at
# least one byte (llama.cpp's grammar rejects empty pieces), so bytes bound tokens.
_MAX_BYTES_PER_CHAR = 6


def _string(low: int, high: int) -> dict[str, Any]:
    return {"type": "string", "minLength": low, "maxLength": high}


def _only(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _copied(value_chars: int, quote_chars: int) -> dict[str, Any]:
    """A short answer's evidence as the model copied it, its page, then the answer."""
    return {
        EVIDENCE: _string(MIN_EVIDENCE_CHARS, quote_chars),
        PAGE: _string(1, PAGE_CHARS),
        ANSWER: _string(1, value_chars),
    }


def text_cell_schema(value_chars: int, quote_chars: int) -> dict[str, Any]:
    found = _object(_copied(value_chars, quote_chars))
    return {"anyOf": [found, _object({EVIDENCE: _only(""), ANSWER: _only(NOT_STATED)})]}


def text_choice_cell_schema(candidates: int, value_chars: int, quote_chars: int) -> dict[str, Any]:
    """A short answer with passages offered: first whether the document states it at all, then the
    number of the passage that does and the answer; or 0 (none of them), then the evidence copied
    from elsewhere. A small model copies a passage rather than judge it absent, so the judgement
    comes first, where it is one word."""
    picked = {"type": "integer", "enum": list(range(1, candidates + 1))}
    return {
        "anyOf": [
            _object({STATED: _only(YES), PASSAGE: picked, ANSWER: _string(1, value_chars)}),
            _object(
                {STATED: _only(YES), PASSAGE: {"type": "integer", "enum": [0]}, **_copied(value_chars, quote_chars)}
            ),
            _object({STATED: _only(NO), ANSWER: _only(NOT_STATED)}),
        ]
    }


def yes_no_cell_schema(quote_chars: int) -> dict[str, Any]:
    # A clause the model copied may still turn out not to be one of this kind: "present": "no" is
    # allowed after a clause, so judging comes after looking rather than instead of it.
    clause = _string(MIN_EVIDENCE_CHARS, quote_chars)
    found = _object({CLAUSE: clause, PAGE: _string(1, PAGE_CHARS), PRESENT: _only(YES, NO)})
    return {"anyOf": [found, _object({CLAUSE: _only(""), PRESENT: _only(NO)})]}


def choice_cell_schema(candidates: int) -> dict[str, Any]:
    """A yes/no clause picked from passages the word search offered: the passage's number first (0:
    none of them), then the judgement, which may still be 'no' for the passage picked."""
    picked = {"type": "integer", "enum": list(range(1, candidates + 1))}
    found = _object({PASSAGE: picked, PRESENT: _only(YES, NO)})
    return {"anyOf": [found, _object({PASSAGE: {"type": "integer", "enum": [0]}, PRESENT: _only(NO)})]}


CellSpec = tuple[str, bool, int]  # field key, yes/no clause, passages offered (0: none)


def group_schema(cells: list[CellSpec], value_chars: int, quote_chars: int, *, decided: bool = False) -> dict[str, Any]:
    """The schema of one request's answer. `decided`: whether the field is there was already decided
    (scored, app.extraction.decide), so the answer can only give it: no "not stated" or "no" branch."""
    out: dict[str, Any] = {}
    for key, yes_no, candidates in cells:
        if yes_no:
            cell = choice_cell_schema(candidates) if candidates else yes_no_cell_schema(quote_chars)
        elif candidates:
            cell = text_choice_cell_schema(candidates, value_chars, quote_chars)
        else:
            cell = text_cell_schema(value_chars, quote_chars)
        out[key] = _there_only(cell) if decided else cell
    return _object(out)


def _there_only(cell: dict[str, Any]) -> dict[str, Any]:
    """A cell's schema without the branches that say nothing is there, and 'present' only 'yes'."""
    kept = []
    for branch in cell["anyOf"]:
        props = branch["properties"]
        says_none = (
            props.get(PRESENT) == _only(NO)
            or props.get(STATED) == _only(NO)
            or props.get(ANSWER) == _only(NOT_STATED)
            or props.get(CLAUSE) == _only("")
        )
        if not says_none:
            kept.append(_object({**props, PRESENT: _only(YES)}) if PRESENT in props else branch)
    return kept[0] if len(kept) == 1 else {"anyOf": kept}


def _bound(schema: dict[str, Any], per_char: int) -> int:
    space = 1  # llama.cpp's JSON grammar allows one optional space after each literal
    if "anyOf" in schema:
        return max(_bound(s, per_char) for s in schema["anyOf"])
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"]) + space
    kind = schema.get("type")
    if kind == "null":
        return 4 + space
    if kind == "boolean":
        return 5 + space
    if kind == "string":
        return 2 + per_char * int(schema["maxLength"]) + space
    if kind == "object":
        props = schema["properties"]
        total = 1 + space + 1 + space  # braces
        for key, sub in props.items():
            total += len(json.dumps(key)) + space + 1 + space + _bound(sub, per_char)
        return total + (len(props) - 1) * (1 + space)
    raise ValueError(f"no size bound for schema type {kind!r}")


def max_output_bytes(schema: dict[str, Any]) -> int:
    """Upper bound on the bytes (and so tokens) of any answer the grammar accepts."""
    return _bound(schema, _MAX_BYTES_PER_CHAR)


def max_output_chars(schema: dict[str, Any]) -> int:
    """Size of the longest plain answer: what to reserve in the context for a realistic answer."""
    return _bound(schema, 1)


def schema_errors(schema: dict[str, Any], value: Any, where: str = "$") -> list[str]:
    """Check a value against the subset of JSON schema used here (anyOf, enum, null, object, string)."""
    if "anyOf" in schema:
        options = [schema_errors(s, value, where) for s in schema["anyOf"]]
        return [] if any(not o for o in options) else min(options, key=len)
    if "enum" in schema:
        # JSON's true is not 1: an enum of numbers takes numbers only.
        ok = value in schema["enum"] and type(value) in {type(v) for v in schema["enum"]}
        return [] if ok else [f"{where}: expected one of {schema['enum']}"]
    kind = schema.get("type")
    if kind == "null":
        return [] if value is None else [f"{where}: expected null"]
    if kind == "boolean":
        return [] if isinstance(value, bool) else [f"{where}: expected true or false"]
    if kind == "string":
        if not isinstance(value, str):
            return [f"{where}: expected a string"]
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
            return [f"{where}: string length {len(value)} out of range"]
        return []
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{where}: expected an object"]
        props = schema["properties"]
        errors = [f"{where}: missing {k!r}" for k in schema.get("required", []) if k not in value]
        if schema.get("additionalProperties") is False:
            errors += [f"{where}: unexpected {k!r}" for k in value if k not in props]
        for k, sub in props.items():
            if k in value:
                errors += schema_errors(sub, value[k], f"{where}.{k}")
        return errors
    return [f"{where}: unsupported schema"]
