"""Cross-references resolved exactly on a Word file numbered by Word and on a PDF with references broken on
purpose (tests/fixtures/check_docs.py), and left alone when they point outside the document."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.checks.outline import clause_key, outline
from app.checks.references import (
    HEADING_DIFFERS,
    ITEM_MISSING,
    MISSING,
    NOT_ATTACHED,
    RESOLVED,
    UNCHECKED,
    WRONG_DIRECTION,
    find_references,
)
from app.checks.text import check_text
from app.compare.versions import Block, Version, version_from_document
from ingest.load import load
from tests.fixtures.check_docs import PDF_REFERENCES, WORD_REFERENCES, broken_refs_pdf, numbered_contract_docx


def _text(*pages: str) -> object:
    blocks = tuple(Block(n, str(n), part) for n, page in enumerate(pages, start=1) for part in page.split("\n\n"))
    return check_text(Version("t", "t", "page", len(pages), blocks))


def _refs(text: object) -> dict[str, list[object]]:
    found: dict[str, list[object]] = {}
    for r in find_references(outline(text)):  # type: ignore[arg-type]
        found.setdefault(r.written, []).append(r)
    return found


def test_word_clause_numbers_resolve_exactly(tmp_path: Path) -> None:
    text = check_text(version_from_document(load(numbered_contract_docx(tmp_path / "supply.docx"))))
    found = _refs(text)
    assert set(found) == set(WORD_REFERENCES)
    for written, expected in WORD_REFERENCES.items():
        for ref in found[written]:
            if expected in (MISSING, ITEM_MISSING, HEADING_DIFFERS):
                assert ref.status == expected, (written, ref.note)
            elif expected.startswith("schedule"):
                assert (ref.status, ref.key) == (RESOLVED, expected)
            else:  # the clause Word numbers so, by its own label: the paragraph cited [§ 3.1(b)]
                assert ref.status == RESOLVED, (written, ref.note)
                assert ref.target is not None and ref.target.place.label == expected
                assert ref.target.place.cited() == f"§ {expected}"
    assert "there is no clause 9" in found["Section 9"][0].note
    assert found["Section 3.1(d)"][0].note == "3.1 has no item (d)"
    assert "“Payment”" in found["Section 2"][0].note and "“Term”" in found["Section 2"][0].note


def test_pdf_broken_references_are_each_reported_and_the_rest_resolve(tmp_path: Path) -> None:
    text = check_text(version_from_document(load(broken_refs_pdf(tmp_path / "services.pdf"))))
    found = _refs(text)
    assert set(found) == set(PDF_REFERENCES)
    problems = {w: r.status for w, rs in found.items() for r in rs if r.problem}
    assert problems == {
        "Section 7.4": MISSING,
        "Section 3(c)": ITEM_MISSING,
        "Section 4": HEADING_DIFFERS,
        "Exhibit B": NOT_ATTACHED,
    }
    assert found["Section 12"][0].status == UNCHECKED  # the Securities Act's, not this agreement's
    for written, key in PDF_REFERENCES.items():
        if key and key not in problems.values():
            ref = found[written][0]
            assert ref.status == RESOLVED, (written, ref.note)
            assert ref.target is not None and ref.target.key in (key, clause_key(key))
    assert found["Exhibit A"][0].target.place.page == 3  # type: ignore[union-attr]
    assert found["Section 2.1"][0].target.place.page == 1  # type: ignore[union-attr]


def test_references_to_other_instruments_and_laws_are_not_checked() -> None:
    text = _text(
        "1. Scope\nThis applies.\n\n2. Terms\nIt is subject to Section 16(b) of the Securities Exchange Act, "
        "Section 7 of the Lease dated 1 May 2020 and Exhibit 10.1 to the Company's Form 8-K.\n\n"
        "3. Other\nStat. § 80C.14 applies, as do 11 U.S.C. Section 365 and Section 4.4 of the Master Agreement."
    )
    found = _refs(text)
    assert found and all(r.status == UNCHECKED for rs in found.values() for r in rs), {
        w: [r.status for r in rs] for w, rs in found.items()
    }


def test_a_clause_printed_without_its_dot_or_as_5_0_is_not_missing() -> None:
    text = _text(
        "1. Scope\nThe scope.\n\n2. Fees\nAs Section 15 and Section 5 say.\n\n3. More\nText here.",
        "5.0 Warranties\nNone.\n\n15 INSURANCE\n15.1 Cover. The insured shall insure.",
    )
    found = _refs(text)
    assert found["Section 15"][0].status == RESOLVED
    assert found["Section 5"][0].status == RESOLVED


def test_article_numbers_compare_by_value_and_direction_is_checked() -> None:
    text = _text(
        "ARTICLE I\nDEFINITIONS\nSee Article 2 below.\n\nARTICLE II\nSERVICES\nAs set out in Article III above.",
        "ARTICLE III\nFEES\nFees are due.\n\nARTICLE IV\nTERM\nIt ends.",
    )
    found = _refs(text)
    assert found["Article 2"][0].status == RESOLVED
    assert found["Article III"][0].status == WRONG_DIRECTION
    assert "is below it" in found["Article III"][0].note


def test_a_redacted_clause_leaves_its_references_unchecked() -> None:
    text = _text(
        "1. Supply\nAs in Section 4.2 hereof.\n\n2. Price\nSee above.\n\n3. Term\nOne year.\n\n4. Other\n[***]"
    )
    assert _refs(text)["Section 4.2"][0].status == UNCHECKED


@pytest.mark.parametrize(
    ("number", "key"),
    [("Section 12.3.", "12.3"), ("Article IV", "4"), ("4(A)", "4(a)"), ("5.0", "5"), ("12.03", "12.3")],
)
def test_clause_keys(number: str, key: str) -> None:
    assert clause_key(number) == key
