"""The JSON schema an extraction answer must follow, its size bounds, and a checker for it.

One answer covers a group of fields: {"<field key>": null | {"value": ..., "quote": ..., "page": ...}}.
null means 'not found'. llama.cpp turns the schema into a grammar, so the model can only write
JSON of this shape, and every string has a maxLength, so the longest possible answer is known:
with max_tokens at that bound the grammar always completes, and the output always parses.
"""

from __future__ import annotations

import json
from typing import Any

PAGE_CHARS = 16
# The grammar lets one JSON string character be at most a 6-byte escape (\\uXXXX); a token is at
# least one byte (llama.cpp's grammar rejects empty pieces), so bytes bound tokens.
_MAX_BYTES_PER_CHAR = 6


def cell_schema(value_chars: int, quote_chars: int) -> dict[str, Any]:
    found = {
        "type": "object",
        "properties": {
            "value": {"type": "string", "minLength": 1, "maxLength": value_chars},
            "quote": {"type": "string", "maxLength": quote_chars},
            "page": {"type": "string", "maxLength": PAGE_CHARS},
        },
        "required": ["value", "quote", "page"],
        "additionalProperties": False,
    }
    return {"anyOf": [{"type": "null"}, found]}


def group_schema(keys: list[str], value_chars: int, quote_chars: int) -> dict[str, Any]:
    cell = cell_schema(value_chars, quote_chars)
    return {
        "type": "object",
        "properties": {k: cell for k in keys},
        "required": list(keys),
        "additionalProperties": False,
    }


def _bound(schema: dict[str, Any], per_char: int) -> int:
    space = 1  # llama.cpp's JSON grammar allows one optional space after each literal
    if "anyOf" in schema:
        return max(_bound(s, per_char) for s in schema["anyOf"])
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
    """Check a value against the subset of JSON schema used here (anyOf, null, object, string)."""
    if "anyOf" in schema:
        options = [schema_errors(s, value, where) for s in schema["anyOf"]]
        return [] if any(not o for o in options) else min(options, key=len)
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
