from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import run_folio
from tests.fixtures.pdfs import make_encrypted_pdf, make_zero_page_pdf

COMMANDS = [
    [],
    ["add"],
    ["list"],
    ["show"],
    ["ask"],
    ["plan"],
    ["show-conversation"],
    ["conversations"],
    ["models"],
    ["models", "add"],
    ["models", "add-starter"],
    ["models", "list"],
    ["models", "use"],
    ["doctor"],
    ["gui"],
    ["compare"],
    ["read"],
    ["redact"],
    ["matter"],
    ["matter", "export"],
    ["matter", "purge"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "folio")
def test_every_command_has_help(command: list[str]) -> None:
    code, out, _ = run_folio(*command, "--help")
    assert code == 0
    assert "usage: folio" in out


def test_add_list_show(contract_pdf: Path) -> None:
    code, out, err = run_folio("add", str(contract_pdf))
    assert code == 0, err
    code, out, _ = run_folio("list")
    assert "Master Services Agreement" in out and "4 pages" in out
    code, out, _ = run_folio("show", str(contract_pdf), "--segments")
    assert code == 0
    assert "sha256:" in out
    assert "p.4" in out and "shall be governed by" in out and "bbox=" in out


def test_bad_inputs_one_line_each_nonzero_and_library_unchanged(tmp_path: Path, folio_home: Path) -> None:
    fake = tmp_path / "fake.pdf"
    fake.write_bytes(b"GIF89a" + bytes(200))  # a type Folio does not read (text files it reads)
    empty = tmp_path / "empty.pdf"
    empty.touch()
    files = [
        tmp_path / "missing.pdf",
        fake,
        make_encrypted_pdf(tmp_path / "enc.pdf"),
        empty,
        make_zero_page_pdf(tmp_path / "zero.pdf"),
    ]
    for f in files:
        code, _out, err = run_folio("add", str(f))
        assert code == 1
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("folio: error: "), err
    db = sqlite3.connect(folio_home / "data" / "folio.sqlite3")
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM segments").fetchone()[0] == 0


def test_unknown_document_and_conversation_are_clear_errors() -> None:
    code, _, err = run_folio("ask", "42", "Who are the parties?")
    assert code == 1 and "no document '42'" in err
    code, _, err = run_folio("show-conversation", "7")
    assert code == 1 and err.strip() == "folio: error: no conversation with id 7"


def test_newer_database_is_refused_by_the_cli(folio_home: Path) -> None:
    run_folio("list")
    db = sqlite3.connect(folio_home / "data" / "folio.sqlite3")
    db.execute("INSERT INTO _sqlite_migrations(migration_set, name, applied_at) VALUES ('folio', 'm900_x', 'x')")
    db.commit()
    db.close()
    code, _, err = run_folio("list")
    assert code == 1 and "newer Folio" in err


def test_models_add_refuses_non_gguf(tmp_path: Path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"not a model at all" * 10)
    code, _, err = run_folio("models", "add", str(bogus))
    assert code == 1 and "not a GGUF model file" in err


def test_ask_rejects_a_bad_max_tokens() -> None:
    code, _, err = run_folio("ask", "doc.pdf", "question?", "--max-tokens", "0")
    assert code == 2 and "--max-tokens: must be 1 or more" in err


def test_folio_add_shows_page_progress_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading that takes more than a moment (a scan being OCR'd) shows a bar and the page on stderr."""
    import io
    import sys

    from app.cli.commands import PageProgress
    from ingest.progress import ReadProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    progress = PageProgress("scan.pdf")
    progress(ReadProgress(1, 4, "page 1 of 4"))  # at once: nothing shown yet
    assert terminal.getvalue() == ""
    progress.started -= PageProgress.AFTER_S
    progress(ReadProgress(3, 4, "page 3 of 4"))
    assert "\r[##################------] scan.pdf: page 3 of 4" in terminal.getvalue()
    progress.clear()
    assert terminal.getvalue().endswith("\r")


def test_models_list_says_which_files_carry_mtp_layers(tmp_path: Path, folio_home: Path, tiny_qwen35: Path) -> None:
    import dataclasses

    from tests.fixtures.tiny_qwen35 import TINY, write_qwen35_gguf

    with_mtp = write_qwen35_gguf(tmp_path / "tiny-mtp.gguf", dataclasses.replace(TINY, mtp_layers=1))
    for path in (tiny_qwen35, with_mtp):
        code, _, err = run_folio("models", "add", str(path))
        assert code == 0, err
    code, out, err = run_folio("models", "list")
    assert code == 0, err
    rows = {line.rsplit("/", 1)[-1]: line for line in out.splitlines() if line.endswith(".gguf")}
    assert "  MTP 1 " in rows["tiny-mtp.gguf"] and "no MTP" in rows["tiny-qwen35.gguf"]
    assert "MTP 1" not in rows["tiny-qwen35.gguf"]


def test_add_a_folder_adds_every_file_in_it_and_counts(tmp_path: Path, folio_home: Path) -> None:
    from tests.fixtures.pdfs import make_text_pdf

    folder = tmp_path / "Acme v Brown"
    (folder / "exhibits").mkdir(parents=True)
    make_text_pdf(folder / "claim.pdf", ["The claimant Acme Ltd claims damages for breach of the supply contract."])
    make_text_pdf(folder / "exhibits" / "ex1.pdf", ["Exhibit 1: the supply contract dated 1 March 2024."])
    (folder / ".DS_Store").write_bytes(b"\0" * 64)  # skipped: not a document anyone chose
    (folder / "notes.xyz").write_bytes(b"GIF89a" + bytes(64))  # a type Folio does not read: one line, others kept
    code, out, err = run_folio("add", str(folder))
    assert code == 1  # one file could not be added
    assert err.count("folio: error: ") == 1 and "notes.xyz" in err, err
    assert out.count("added: #") == 2, out
    assert out.strip().splitlines()[-1] == "3 file(s): 2 added, 0 already in the library, 1 not added"
    code, out, _err = run_folio("add", str(folder / "exhibits"))
    assert code == 0 and "already in library" in out
    assert out.strip().splitlines()[-1] == "1 file(s): 0 added, 1 already in the library, 0 not added"
    empty = tmp_path / "empty folder"
    empty.mkdir()
    code, out, err = run_folio("add", str(empty))
    assert code == 1 and err.strip() == f"folio: error: {empty}: the folder holds no files to add"
    assert out == ""  # no count of files that were never there
    db = sqlite3.connect(folio_home / "data" / "folio.sqlite3")
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 2
