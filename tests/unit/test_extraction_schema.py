"""The answer schema: evidence first, 'not stated' only after empty evidence; llama.cpp accepts it,
the size bound holds, the checker agrees with it."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from app.extraction.schema import (
    MIN_EVIDENCE_CHARS,
    NOT_STATED,
    PAGE_CHARS,
    group_schema,
    max_output_bytes,
    max_output_chars,
    schema_errors,
)

FIELDS = [
    ("governing_law", False, 0),
    ("parties", False, 0),
    ("cap_on_liability", True, 0),
    ("audit_rights", True, 3),
    ("agreement_date", False, 4),
]
KEYS = [k for k, _, _ in FIELDS]

# Characters the JSON grammar allows in a string, including the ones that need a 6-byte escape.
CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))


@st.composite
def answers(draw: st.DrawFn, value_chars: int, quote_chars: int) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, yes_no, candidates in FIELDS:
        looked = draw(st.booleans())
        picked = draw(st.integers(0, candidates)) if candidates else 0
        if yes_no and candidates:
            out[key] = {"passage": picked, "present": draw(st.sampled_from(["yes", "no"])) if picked else "no"}
            continue
        if picked:
            value = draw(st.text(CHARS, min_size=1, max_size=value_chars))
            out[key] = {"stated": "yes", "passage": picked, "answer": value}
            continue
        evidence = draw(st.text(CHARS, min_size=MIN_EVIDENCE_CHARS, max_size=quote_chars)) if looked else ""
        page = draw(st.text(CHARS, min_size=1, max_size=PAGE_CHARS))
        if yes_no:
            present = draw(st.sampled_from(["yes", "no"]))
            out[key] = (
                {"clause": evidence, "page": page, "present": present} if looked else {"clause": "", "present": "no"}
            )
        else:
            value = draw(st.text(CHARS, min_size=1, max_size=value_chars))
            if candidates:
                out[key] = (
                    {"stated": "yes", "passage": 0, "evidence": evidence, "page": page, "answer": value}
                    if looked
                    else {"stated": "no", "answer": NOT_STATED}
                )
                continue
            out[key] = (
                {"evidence": evidence, "page": page, "answer": value}
                if looked
                else {"evidence": "", "answer": NOT_STATED}
            )
    return out


@given(answers(10, 20))
def test_every_valid_answer_fits_the_token_bound(answer: dict[str, object]) -> None:
    schema = group_schema(FIELDS, 10, 20)
    assert schema_errors(schema, answer) == []
    # The longest possible rendering: every character escaped, a space after every literal.
    escaped = json.dumps(answer, ensure_ascii=True, separators=(" , ", " : "))
    assert len(escaped.encode()) <= max_output_bytes(schema)
    plain = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    assert len(plain) <= max_output_chars(schema) or any(ord(c) > 0xFFFF for c in plain)


def test_not_stated_only_after_empty_evidence() -> None:
    schema = group_schema(FIELDS, 20, 60)
    law = {"evidence": "governed by the laws of Delaware", "page": "4", "answer": "Delaware"}
    clause = {"clause": "liability shall not exceed the fees paid", "page": "5", "present": "yes"}
    good = {
        "governing_law": law,
        "parties": {"evidence": "", "answer": NOT_STATED},
        "cap_on_liability": clause,
        "audit_rights": {"passage": 2, "present": "yes"},
        "agreement_date": {"stated": "yes", "passage": 4, "answer": "1 May 2020"},
    }
    assert schema_errors(schema, good) == []
    assert schema_errors(schema, {**good, "cap_on_liability": {**clause, "present": "no"}}) == []  # looked, judged no
    assert schema_errors(schema, {**good, "cap_on_liability": {"clause": "", "present": "no"}}) == []
    assert schema_errors(schema, {**good, "extra": None})
    assert schema_errors(schema, {k: v for k, v in good.items() if k != "parties"})
    assert schema_errors(schema, {**good, "parties": None})  # no null: 'not stated' is a deliberate answer
    assert schema_errors(schema, {**good, "parties": {"evidence": "", "answer": "Acme"}})  # a value needs evidence
    assert schema_errors(schema, {**good, "parties": {"evidence": "", "page": "1", "answer": NOT_STATED}})
    assert schema_errors(schema, {**good, "parties": {"evidence": "Acme", "page": "1", "answer": "Acme"}})  # too short
    assert schema_errors(schema, {**good, "governing_law": {**law, "answer": ""}})
    assert schema_errors(schema, {**good, "governing_law": {**law, "answer": "x" * 21}})
    assert schema_errors(schema, {**good, "cap_on_liability": {"clause": "", "present": "yes"}})  # yes needs a clause
    assert schema_errors(schema, {**good, "cap_on_liability": {**clause, "present": "maybe"}})
    # A clause picked from the offered passages: a passage number (0: none, then only 'no').
    assert schema_errors(schema, {**good, "audit_rights": {"passage": 1, "present": "no"}}) == []
    assert schema_errors(schema, {**good, "audit_rights": {"passage": 0, "present": "no"}}) == []
    assert schema_errors(schema, {**good, "audit_rights": {"passage": 0, "present": "yes"}})
    assert schema_errors(schema, {**good, "audit_rights": {"passage": 4, "present": "yes"}})
    assert schema_errors(schema, {**good, "audit_rights": {"passage": True, "present": "yes"}})  # true is not 1
    # A short answer with passages offered: stated or not, then a passage's number and the answer, or 0
    # and the evidence copied from elsewhere.
    date = {"evidence": "made on 1 May 2020", "page": "1", "answer": "1 May 2020"}
    yes, no = {"stated": "yes"}, {"stated": "no"}
    assert schema_errors(schema, {**good, "agreement_date": {**yes, "passage": 0, **date}}) == []
    assert schema_errors(schema, {**good, "agreement_date": {**no, "answer": NOT_STATED}}) == []
    assert schema_errors(schema, {**good, "agreement_date": {**yes, "passage": 2, "answer": NOT_STATED}}) == []
    assert schema_errors(schema, {**good, "agreement_date": {**no, "answer": "1 May 2020"}})  # 'no' means not stated
    assert schema_errors(schema, {**good, "agreement_date": {**no, "passage": 2, "answer": NOT_STATED}})
    assert schema_errors(schema, {**good, "agreement_date": {**yes, "passage": 5, "answer": "1 May 2020"}})
    assert schema_errors(schema, {**good, "agreement_date": {**yes, "passage": 2, **date}})  # the passage is evidence
    assert schema_errors(schema, {**good, "agreement_date": {**yes, "passage": 0, "answer": "1 May 2020"}})
    assert schema_errors(schema, {**good, "agreement_date": {"passage": 2, "answer": "1 May 2020"}})  # judged first


def test_evidence_comes_first_in_the_grammar() -> None:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(group_schema(FIELDS, 4, 16)))
    assert "governing_law" in gbnf and "null" not in gbnf and '\\"not stated\\"' in gbnf
    rules = dict(line.split(" ::= ", 1) for line in gbnf.splitlines() if " ::= " in line)
    found, none = rules["governing-law-0"], rules["governing-law-1"]
    assert found.index("evidence") < found.index("page") < found.index("answer")
    assert rules["governing-law-1-evidence"] == '"\\"\\""' and "page" not in none  # empty evidence, then only this
    picked, copied, absent = rules["agreement-date-0"], rules["agreement-date-1"], rules["agreement-date-2"]
    assert picked.index("stated") < picked.index("passage") < picked.index("answer") and "evidence" not in picked
    assert copied.index("passage") < copied.index("evidence") < copied.index("page") < copied.index("answer")
    assert "passage" not in absent and "evidence" not in absent
