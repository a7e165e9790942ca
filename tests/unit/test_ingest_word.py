"""Word files: clause numbers as Word shows them, tracked changes and comments with their authors,
footnotes, tables; stored, cited as [§ 12.3] / [¶ 41] and checked; damaged, disguised and encrypted
files refused in one line with the library unchanged."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from app.citations.markers import check, find_citations
from ingest import IngestError
from ingest.load import load
from tests.conftest import run_folio
from tests.fixtures.office import (
    COMMENT_BY,
    DATA,
    DELETED_BY,
    INSERTED_BY,
    encrypted_copy,
    libreoffice_contract,
    python_docx_memo,
    soffice,
)

needs_libreoffice = pytest.mark.skipif(
    soffice() is None, reason="LibreOffice not installed (apt-get install libreoffice-writer-nogui)"
)


@pytest.fixture(scope="module")
def contract(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if soffice() is None:
        pytest.skip("LibreOffice not installed (apt-get install libreoffice-writer-nogui)")
    return libreoffice_contract(tmp_path_factory.mktemp("lo"))


def _units(path: Path) -> list[tuple[str, str, str]]:
    doc = load(path)
    return [(s.anchor.cited(), s.role, s.text) for s in doc.segments]


@needs_libreoffice
def test_libreoffice_contract_reads_with_clause_numbers_changes_comments_notes_and_tables(contract: Path) -> None:
    doc = load(contract)
    assert doc.kind == "word" and doc.title == "Master Services Agreement"
    units = [(s.anchor.cited(), s.role, s.text) for s in doc.segments]
    assert units[0] == ("¶ 1", "heading", "Master Services Agreement")
    cited = [u[0] for u in units if u[1] == "body"]
    # The numbers a lawyer sees: level texts '%1.', '%1.%2' and '(%3)' under its parent clause.
    assert cited[:7] == ["§ 1", "§ 1.1", "§ 1.2", "§ 1.2(a)", "§ 1.2(b)", "§ 2", "§ 2.1"]
    texts = {u[0]: u[2] for u in units if u[1] == "body"}
    assert texts["§ 1.1"].startswith('1.1 "Services" means')
    assert texts["§ 1.2(a)"] == "(a) hourly fees; and"
    payment = texts["§ 2.1"]
    assert f"[- deleted by {DELETED_BY}: thirty (30) -]" in payment
    assert f"[+ inserted by {INSERTED_BY}: sixty (60) +]" in payment
    assert ("§ 2.1", "comment", f"[comment by {COMMENT_BY}: Client asked for 45 days.]") in units
    assert texts["§ 1.2"].endswith("fee table.[^1]")
    assert ("§ 1.2", "footnote", "[^1] Fees exclude VAT.") in units
    table = next(u for u in units if u[1] == "table")
    assert table[2] == "| Role | Rate |\n| --- | --- |\n| Partner | EUR 450 |"
    assert table[0] == "¶ 9"  # unnumbered units are cited by their paragraph number
    assert [p.label for p in doc.pages][:3] == ["", "1", "1.1"]


def test_python_docx_file_numbers_comments_and_tables(tmp_path: Path) -> None:
    units = _units(python_docx_memo(tmp_path / "memo.docx"))
    assert units == [
        ("¶ 1", "heading", "Supply memo"),
        ("§ 1", "body", "1. The supplier delivers the goods."),
        ("§ 2", "body", "2. The buyer pays within thirty days of delivery."),
        ("§ 2", "comment", '[comment by Dana Lawyer on "thirty days": Check against the term sheet.]'),
        ("¶ 4", "body", "A closing note without a number."),
        ("¶ 5", "table", "| Item | Price |\n| --- | --- |\n| Widget \\| large | USD 10 |"),
    ]


def test_every_word_numbering_format_matches_what_the_file_says_it_shows() -> None:
    """docx2python's example_numbering.docx (tests/data/README.md): each paragraph says the number Word shows."""
    doc = load(DATA / "example_numbering.docx")
    for segment in doc.segments:
        shown, _, text = segment.text.partition(" ")
        assert text.startswith("expect ")
        assert shown.strip("().") == text.removeprefix("expect ").strip("().")


def test_overlapping_comments_and_replies_keep_their_authors() -> None:
    """docx2python's comments.docx (tests/data/README.md): four comments on one paragraph, one on a part of it."""
    doc = load(DATA / "comments.docx")
    comments = [s.text for s in doc.segments if s.role == "comment" and s.anchor.page == 1]
    assert len(comments) == 4
    assert sum(c.startswith("[comment by Randy Bartels") for c in comments) == 2
    assert any(
        c.startswith('[comment by Shay Hill on "tempor incididunt ut labore et dolore magna aliqua."') for c in comments
    )


@needs_libreoffice
def test_clause_citations_are_checked_against_the_clause_and_its_sub_clauses(ctx: object, contract: Path) -> None:
    from app.citations.grounding import document_indexes
    from app.context import AppContext
    from app.engine.documents import prompt_documents

    assert isinstance(ctx, AppContext)
    doc = ctx.library.add(contract).document
    assert doc.kind == "word" and doc.page_count == 10
    prompt = prompt_documents(ctx, [doc.id])[0]
    markers = [b.marker for b in prompt.blocks]
    assert markers[:4] == ["[¶ 1]", "[§ 1]", "[§ 1.1]", "[§ 1.2]"]
    answer = (
        'Payment is due in "sixty (60) days of receipt" [§ 2.1]. Fees are "fixed fees" [§ 1.2] and exclude VAT '
        '"Fees exclude VAT" [§ 1.2]. The rate is "EUR 450" [¶ 9]. Made up: "ninety days" [§ 2.1]. '
        "Nowhere: [§ 7.4], and pages do not exist here: [p. 2]."
    )
    checked = check(find_citations(answer), document_indexes(ctx, [doc.id]))
    states = [(c.text, c.valid, c.quote_found) for c in checked]
    assert states == [
        ("[§ 2.1]", True, True),  # the clause as it reads with the tracked changes accepted
        ("[§ 1.2]", True, True),  # '(b) fixed fees.' is a sub-clause of 1.2
        ("[§ 1.2]", True, True),  # its footnote
        ("[¶ 9]", True, True),
        ("[§ 2.1]", True, False),
        ("[§ 7.4]", False, None),
        ("[p. 2]", False, None),
    ]
    assert checked[1].pages == (4, 5, 6)


def test_a_damaged_word_file_is_refused_in_one_line(tmp_path: Path) -> None:
    whole = python_docx_memo(tmp_path / "memo.docx").read_bytes()
    cut = tmp_path / "cut.docx"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(IngestError, match=r"^cut\.docx: the file is damaged and cannot be read"):
        load(cut)
    # A whole ZIP whose document part is not XML.
    broken = tmp_path / "broken.docx"
    with zipfile.ZipFile(tmp_path / "memo.docx") as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            data = b"<w:document>not xml" if item.filename == "word/document.xml" else source.read(item)
            target.writestr(item, data)
    with pytest.raises(IngestError, match=r"^broken\.docx: the Word file is damaged and cannot be read"):
        load(broken)


def test_a_zip_named_docx_and_an_encrypted_word_file_are_refused(tmp_path: Path) -> None:
    archive = tmp_path / "contract.docx"
    with zipfile.ZipFile(archive, "w") as target:
        target.writestr("notes.txt", "not a Word document")
    with pytest.raises(IngestError, match=r"unsupported file type \(it looks like a ZIP archive\)"):
        load(archive)
    locked = encrypted_copy(python_docx_memo(tmp_path / "memo.docx"), tmp_path / "locked.docx")
    with pytest.raises(IngestError, match=r"^locked\.docx: the Office file is protected with a password"):
        load(locked)


def test_bad_office_files_leave_the_library_unchanged(tmp_path: Path) -> None:
    """Through the real `folio add`: one line each on stderr, exit 1, nothing stored."""
    memo = python_docx_memo(tmp_path / "memo.docx")
    cut = tmp_path / "cut.docx"
    cut.write_bytes(memo.read_bytes()[:900])
    locked = encrypted_copy(memo, tmp_path / "locked.docx")
    code, out, err = run_folio("add", str(cut), str(locked))
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("folio: error: ") for line in lines)
    code, out, _err = run_folio("list")
    assert code == 0 and "library is empty" in out
