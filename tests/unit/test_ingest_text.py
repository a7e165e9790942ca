"""Plain text and Markdown: paragraphs, clause numbers from the text itself, Markdown headings and
tables; encodings a text file arrives in; binary data refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest import IngestError
from ingest.load import load


def test_plain_text_contract_is_cited_by_its_clause_numbers(tmp_path: Path) -> None:
    path = tmp_path / "terms.txt"
    path.write_text(
        "SUPPLY TERMS\n\n1. Delivery. The supplier delivers the goods.\n\n"
        "12.3 Payment. The buyer pays within thirty days.\n\n(a) by wire transfer; or\n\n(b) by cheque.\n\n"
        "Signed in Toronto.\n",
        encoding="utf-8",
    )
    doc = load(path)
    assert doc.kind == "text" and doc.mime == "text/plain"
    assert [(s.anchor.cited(), s.text[:20]) for s in doc.segments] == [
        ("¶ 1", "SUPPLY TERMS"),
        ("§ 1", "1. Delivery. The sup"),
        ("§ 12.3", "12.3 Payment. The bu"),
        ("§ 12.3(a)", "(a) by wire transfer"),
        ("§ 12.3(b)", "(b) by cheque."),
        ("¶ 6", "Signed in Toronto."),
    ]


def test_markdown_headings_and_tables(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text(
        "# Deal notes\n\nThe parties met twice.\n| Party | Role |\n| --- | --- |\n| Acme | Buyer |\n\n"
        "## 2. Price\n\nUSD 10.\n",
        encoding="utf-8",
    )
    doc = load(path)
    assert doc.mime == "text/markdown" and doc.title == "Deal notes"
    assert [(s.role, s.anchor.cited()) for s in doc.segments] == [
        ("heading", "¶ 1"),
        ("body", "¶ 2"),
        ("table", "¶ 3"),
        ("heading", "§ 2"),
        ("body", "¶ 5"),
    ]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "cp1252"])
def test_text_in_the_encodings_files_arrive_in(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "letter.txt"
    path.write_bytes("Café contract – €1,000 due.\n".encode(encoding))
    doc = load(path)
    assert doc.segments[0].text == "Café contract – €1,000 due."


def test_binary_data_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "data.txt"
    path.write_bytes(b"\x00\x01\x02binary" * 50)
    with pytest.raises(IngestError, match=r"unsupported file type \(it looks like an unrecognised binary file\)"):
        load(path)
