"""The answer schema: llama.cpp accepts it, the size bound holds, the checker agrees with it."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from app.extraction_schema import PAGE_CHARS, group_schema, max_output_bytes, max_output_chars, schema_errors

KEYS = ["governing_law", "parties", "cap_on_liability"]

# Characters the JSON grammar allows in a string, including the ones that need a 6-byte escape.
CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))


@st.composite
def answers(draw: st.DrawFn, value_chars: int, quote_chars: int) -> dict[str, object]:
    out: dict[str, object] = {}
    for key in KEYS:
        if draw(st.booleans()):
            out[key] = None
        else:
            out[key] = {
                "value": draw(st.text(CHARS, min_size=1, max_size=value_chars)),
                "quote": draw(st.text(CHARS, max_size=quote_chars)),
                "page": draw(st.text(CHARS, max_size=PAGE_CHARS)),
            }
    return out


@given(answers(10, 20))
def test_every_valid_answer_fits_the_token_bound(answer: dict[str, object]) -> None:
    schema = group_schema(KEYS, 10, 20)
    assert schema_errors(schema, answer) == []
    # The longest possible rendering: every character escaped, a space after every literal.
    escaped = json.dumps(answer, ensure_ascii=True, separators=(" , ", " : "))
    assert len(escaped.encode()) <= max_output_bytes(schema)
    plain = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    assert len(plain) <= max_output_chars(schema) or any(ord(c) > 0xFFFF for c in plain)


def test_checker_rejects_what_the_schema_forbids() -> None:
    schema = group_schema(KEYS, 5, 10)
    good = {
        "governing_law": {"value": "DE", "quote": "Delaware", "page": "4"},
        "parties": None,
        "cap_on_liability": None,
    }
    assert schema_errors(schema, good) == []
    assert schema_errors(schema, {**good, "extra": None})
    assert schema_errors(schema, {k: v for k, v in good.items() if k != "parties"})
    assert schema_errors(schema, {**good, "parties": {"value": "", "quote": "", "page": ""}})  # empty value
    assert schema_errors(schema, {**good, "parties": {"value": "toolongvalue", "quote": "", "page": ""}})
    assert schema_errors(schema, {**good, "parties": "Acme"})


def test_llama_cpp_turns_the_schema_into_a_grammar() -> None:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(group_schema(KEYS, 4, 6)))
    assert "governing_law" in gbnf and "null" in gbnf
