"""The audit log: hash-chained, append-only; any edit or deletion is detected."""

from __future__ import annotations

import csv
import io
import itertools
import json
import sqlite3
from pathlib import Path

import pytest

from app.context import AppContext
from app.store.audit import GENESIS, AuditLog, entry_hash
from tests.conftest import run_folio


def _log(ctx: AppContext) -> AuditLog:
    log = ctx.audit
    for i, action in enumerate(["question", "extraction", "export", "question"]):
        log.record(
            action,
            documents=[f"{i:064x}"],
            model_sha256="ab" * 32,
            settings={"thinking": False, "n": i},
            details={"i": i, "text": "Which law governs? ünïcode"},
        )
    return log


def _raw(home: Path) -> sqlite3.Connection:
    db = sqlite3.connect(home / "data" / "folio.sqlite3")
    # A deliberate attacker first removes the append-only triggers.
    db.execute("DROP TRIGGER audit_log_no_update")
    db.execute("DROP TRIGGER audit_log_no_delete")
    return db


def test_entries_are_chained_and_verify(ctx: AppContext) -> None:
    log = _log(ctx)
    entries = log.entries()
    assert [e.id for e in entries] == [1, 2, 3, 4]
    assert entries[0].prev_hash == GENESIS
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(entries))
    assert entries[0].os_user and entries[0].model_sha256 == "ab" * 32
    result = log.verify()
    assert result.ok and result.entries == 4 and result.head_hash == entries[-1].hash


def test_sqlite_refuses_edits_and_deletes(ctx: AppContext) -> None:
    _log(ctx)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        ctx.db.execute("UPDATE audit_log SET os_user = 'mallory' WHERE id = 2")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        ctx.db.execute("DELETE FROM audit_log WHERE id = 4")


@pytest.mark.parametrize(
    ("tamper", "problem"),
    [
        ("UPDATE audit_log SET os_user = 'mallory' WHERE id = 2", "entry 2 was changed"),
        ("UPDATE audit_log SET details = replace(details, 'law', 'LAW') WHERE id = 1", "entry 1 was changed"),
        ("DELETE FROM audit_log WHERE id = 2", "entry 2 is missing"),
        ("DELETE FROM audit_log WHERE id = 4", "deleted from the end"),
        ("DELETE FROM audit_log", "deleted from the end"),
    ],
)
def test_verify_fails_after_tampering(ctx: AppContext, folio_home: Path, tamper: str, problem: str) -> None:
    log = _log(ctx)
    db = _raw(folio_home)
    db.execute(tamper)
    db.commit()
    db.close()
    result = log.verify()
    assert not result.ok and problem in result.problem


def test_a_rewritten_chain_is_caught_by_the_head_file(ctx: AppContext, folio_home: Path) -> None:
    log = _log(ctx)
    db = _raw(folio_home)
    db.row_factory = sqlite3.Row
    # Rewrite entry 4 and recompute its hash: the chain is consistent again, the head file is not.
    row = dict(db.execute("SELECT * FROM audit_log WHERE id = 4").fetchone())
    row["os_user"] = "mallory"
    db.execute("UPDATE audit_log SET os_user = ?, hash = ? WHERE id = 4", [row["os_user"], entry_hash(row)])
    db.commit()
    db.close()
    result = log.verify()
    assert not result.ok and "does not match the recorded head" in result.problem


def test_export_jsonl_and_csv_carry_the_hashes(ctx: AppContext) -> None:
    log = _log(ctx)
    lines = [json.loads(x) for x in log.export("jsonl").decode().splitlines()]
    assert [x["hash"] for x in lines] == [e.hash for e in log.entries()]
    assert lines[0]["details"]["text"] == "Which law governs? ünïcode"
    rows = list(csv.DictReader(io.StringIO(log.export("csv").decode())))
    assert [r["hash"] for r in rows] == [e.hash for e in log.entries()]
    assert json.loads(rows[1]["documents"]) == [f"{1:064x}"]


def test_cli_audit_verify_and_export(ctx: AppContext, folio_home: Path, tmp_path: Path) -> None:
    _log(ctx)
    code, out, err = run_folio("audit", "verify")
    assert code == 0, err
    assert out.startswith("audit log OK: 4 entries, head ")
    target = tmp_path / "audit.csv"
    code, out, err = run_folio("audit", "export", "--out", str(target))
    assert code == 0, err
    assert len(list(csv.DictReader(io.StringIO(target.read_text())))) == 4
    code, _out, err = run_folio("audit", "export", "--out", str(target))
    assert code == 1 and err.strip().endswith("already exists; choose another name or replace it (--force)")
    db = _raw(folio_home)
    db.execute("UPDATE audit_log SET at = '2020-01-01T00:00:00+00:00' WHERE id = 3")
    db.commit()
    db.close()
    code, _out, err = run_folio("audit", "verify")
    assert code == 1
    assert err.strip() == "folio: error: audit log check FAILED: entry 3 was changed after it was written"


def test_documents_added_purged_and_exported_are_audited_with_their_sha256(
    starter_home: Path, contract_pdf: Path, tmp_path: Path
) -> None:
    """`folio add` (the library's add, which the window uses too), a second path to the same content,
    an export and a purge each leave one entry naming the file's sha256; the chain still verifies."""
    import hashlib
    import shutil

    from app.context import open_app
    from app.store.conversations import Conversations

    sha = hashlib.sha256(contract_pdf.read_bytes()).hexdigest()
    assert run_folio("add", str(contract_pdf))[0] == 0
    assert run_folio("add", str(contract_pdf))[0] == 0  # nothing new: no second entry
    copy = shutil.copy(contract_pdf, tmp_path / "copy of contract.pdf")
    assert run_folio("add", str(copy))[0] == 0  # same content from another path: recorded, not stored twice
    ctx = open_app()
    try:
        conv = Conversations(ctx.db).create([1], "Governing law")
    finally:
        ctx.close()
    assert run_folio("export", "conversation", str(conv), "--out", str(tmp_path / "c.md"))[0] == 0
    assert run_folio("purge", "1", "--yes")[0] == 0

    ctx = open_app()
    try:
        log = ctx.audit
        entries = log.entries()
        assert log.verify().ok and log.verify().entries == 4
    finally:
        ctx.close()
    assert [(e.action, e.documents) for e in entries] == [("add", [sha]), ("add", [sha]), ("export", [sha]),
                                                           ("purge", [sha])]  # fmt: skip
    first, again = entries[0].details, entries[1].details
    assert first["path"] == str(contract_pdf.resolve()) and first["created"] is True and first["pages"] == 4
    assert again["path"] == str(Path(copy).resolve()) and again["created"] is False
    assert entries[0].settings["max_answer_tokens"] == 48 and entries[0].os_user
    code, out, _err = run_folio("audit", "verify")
    assert code == 0 and out.startswith("audit log OK: 4 entries")
