"""Redaction's patterns and terms on plain text: checksums, every planted kind found (recall on
generated data), what a contract is full of not taken for personal data, and terms found in any
case, across line breaks and hyphenation, as whole words only."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.redaction.pagetext import term_pattern
from app.redaction.patterns import (
    PATTERN_KINDS,
    aba_ok,
    card_ok,
    codice_fiscale_ok,
    dni_ok,
    find_patterns,
    iban_ok,
    luhn_ok,
    nir_ok,
)
from app.redaction.proof import flatten, proof_pattern
from tests.fixtures.redaction import planted_lines


def kinds_of(text: str) -> list[tuple[str, str]]:
    return [(m.kind, text[m.start : m.end]) for m in find_patterns(text)]


def test_checksums_accept_real_numbers_and_refuse_one_digit_off() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert card_ok("378282246310005") and card_ok("5555555555554444") and not card_ok("1234567812345670")
    assert iban_ok("GB82 WEST 1234 5698 7654 32") and iban_ok("DE89370400440532013000")
    assert not iban_ok("GB82 WEST 1234 5698 7654 33") and not iban_ok("DE8937040044053201300")  # one short
    assert dni_ok("12345678Z") and not dni_ok("12345678A") and dni_ok("X1234567L")
    assert codice_fiscale_ok("RSSMRA85T10A562S") and not codice_fiscale_ok("RSSMRA85T10A562T")
    assert nir_ok("1 84 12 76 451 089 46") and not nir_ok("1 84 12 76 451 089 47")
    assert aba_ok("021000021") and not aba_ok("021000022")


def test_one_of_every_kind_in_a_notice_clause() -> None:
    text = (
        "Notices to Jane Roe, jane.roe@example.com, tel. +1 (415) 555-0132 or (212) 555-0199.\n"
        "Pay to IBAN GB82 WEST 1234 5698 7654 32, Account No. 12345678, card 4111 1111 1111 1111.\n"
        "SSN 123-45-6789; NI number AB 12 34 56 C; DNI 12345678Z; born on 14 July 1983; a fee of $12,500.00."
    )
    found = kinds_of(text)
    assert ("email", "jane.roe@example.com") in found
    assert ("phone", "+1 (415) 555-0132") in found and ("phone", "(212) 555-0199") in found
    assert ("iban", "GB82 WEST 1234 5698 7654 32") in found
    assert ("account", "12345678") in found
    assert ("card", "4111 1111 1111 1111") in found
    assert ("ssn", "123-45-6789") in found
    assert ("national_id", "AB 12 34 56 C") in found and ("national_id", "12345678Z") in found
    assert ("birth_date", "14 July 1983") in found
    assert ("amount", "$12,500.00") in found


def test_an_iban_split_over_two_lines_is_one_match() -> None:
    assert kinds_of("IBAN DE89 3704 0044\n0532 0130 00 by wire") == [("iban", "DE89 3704 0044\n0532 0130 00")]


@pytest.mark.parametrize(
    "text",
    [
        "Section 10.2.3 of the Agreement, as amended on 2020-01-15.",
        "Registration No. 333-12345 and File No. 0-28292.",
        "San Francisco, CA 94105-1234",
        "1,000,000 shares of Common Stock at 12.5 percent",
        "page 12 of 40; Exhibit 10.27; Rule 144(k)",
        "dated as of March 3, 2025 between the parties",
        "the term is 2019-2024 inclusive",
    ],
)
def test_what_contracts_are_full_of_is_not_personal_data(text: str) -> None:
    assert kinds_of(text) == []


@given(st.integers(min_value=0, max_value=10_000))
def test_every_generated_item_is_found_with_its_kind(seed: int) -> None:
    lines, items = planted_lines(random.Random(seed), 1)
    text = "\n".join(lines)
    found = kinds_of(text)
    for item in items:
        assert (item.kind, item.text) in found, (item, found)


def test_recall_on_a_thousand_generated_notices_is_at_least_99_percent_per_kind() -> None:
    hits: dict[str, int] = dict.fromkeys(PATTERN_KINDS, 0)
    totals: dict[str, int] = dict.fromkeys(PATTERN_KINDS, 0)
    rng = random.Random(34)
    for _ in range(1000):
        lines, items = planted_lines(rng, 1)
        found = kinds_of("\n".join(lines))
        for item in items:
            totals[item.kind] += 1
            hits[item.kind] += (item.kind, item.text) in found
    for kind, total in totals.items():
        if total:
            assert hits[kind] / total >= 0.99, (kind, hits[kind], total)


def test_a_term_in_any_case_across_line_breaks_and_hyphenation_whole_words_only() -> None:
    pattern = term_pattern("Harborview Partners")
    assert pattern is not None
    text = "with HARBORVIEW PARTNERS; Harbor-\nview\nPartners agree; harborview  partners. Harborviews Partnership"
    assert [m.group(0) for m in pattern.finditer(text)] == [
        "HARBORVIEW PARTNERS",
        "Harbor-\nview\nPartners",
        "harborview  partners",
    ]
    ann = term_pattern("Ann")
    assert ann is not None and [m.group(0) for m in ann.finditer("Ann signed the Annex; ANN.")] == ["Ann", "ANN"]
    assert term_pattern(" -- ") is None


def test_the_proof_finds_a_string_however_a_reader_spaces_it() -> None:
    pattern = proof_pattern("jane.roe@example.com")
    assert pattern is not None
    for text in ("jane.roe@example.com", "jane. roe @ example .com", "JANE.ROE@EXAMPLE.COM", "jane.roe@exam-\nple.com"):
        flat, _ = flatten(text)
        assert pattern.search(flat), text
    assert not pattern.search(flatten("jane.roe@example.community")[0])
