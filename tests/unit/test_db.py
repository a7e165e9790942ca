from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from app.errors import NewerDatabase
from app.store.db import KNOWN, applied_migrations, build_migrations, open_db


def test_fresh_database_has_schema_wal_and_foreign_keys(tmp_path: Path) -> None:
    db = open_db(tmp_path / "f.sqlite3")
    assert applied_migrations(db) == KNOWN
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    tables = set(db.table_names())
    for name in (
        "documents",
        "document_sources",
        "pages",
        "segments",
        "segments_fts",
        "conversations",
        "conversation_documents",
        "messages",
        "messages_fts",
        "models",
    ):
        assert name in tables
    columns = {c.name for c in db["messages"].columns}
    assert {
        "role",
        "text",
        "thinking",
        "citations",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "prefill_ms",
        "generate_ms",
        "status",
    } <= columns
    if os.name == "posix":
        assert stat.S_IMODE((tmp_path / "f.sqlite3").stat().st_mode) == 0o600
    db.close()


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    open_db(tmp_path / "f.sqlite3").close()
    db = open_db(tmp_path / "f.sqlite3")
    rows = db.execute("SELECT name FROM _sqlite_migrations").fetchall()
    assert [r[0] for r in rows] == KNOWN
    db.close()


def test_upgrade_from_first_schema_keeps_data_and_indexes_old_messages(tmp_path: Path) -> None:
    from sqlite_utils import Database

    path = tmp_path / "old.sqlite3"
    old = Database(path)
    build_migrations().apply(old, stop_before="m002_messages_fts")  # type: ignore[attr-defined]
    assert applied_migrations(old) == ["m001_initial"]
    old.execute("INSERT INTO conversations(id, title, created_at, updated_at) VALUES (1, 't', 'x', 'x')")
    old.execute(
        "INSERT INTO messages(conversation_id, seq, role, text, created_at) "
        "VALUES (1, 1, 'assistant', 'Delaware law governs the agreement', 'x')"
    )
    old.conn.commit()
    old.close()

    db = open_db(path)
    assert applied_migrations(db) == KNOWN
    hits = db.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'delaware'").fetchall()
    assert len(hits) == 1
    db.close()


def test_database_from_newer_folio_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    db = open_db(path)
    db.execute("INSERT INTO _sqlite_migrations(migration_set, name, applied_at) VALUES ('folio', 'm999_future', 'x')")
    db.conn.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(NewerDatabase) as err:
        open_db(path)
    assert "newer Folio" in str(err.value)
    assert path.read_bytes() == before


def test_not_a_database_gives_clear_error(tmp_path: Path) -> None:
    from app.errors import FolioError

    path = tmp_path / "junk.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(FolioError) as err:
        open_db(path)
    assert "not a Folio database" in str(err.value)


def test_foreign_keys_cascade_from_documents(tmp_path: Path) -> None:
    db = open_db(tmp_path / "f.sqlite3")
    db.execute(
        "INSERT INTO documents(id, sha256, kind, title, mime, size_bytes, source_path, added_at) "
        "VALUES (1, 'abc', 'pdf', 't', 'application/pdf', 1, '/x', 'now')"
    )
    db.execute("INSERT INTO segments(document_id, seq, kind, text) VALUES (1, 0, 'text', 'hello world')")
    db.execute("DELETE FROM documents WHERE id = 1")
    assert db.execute("SELECT count(*) FROM segments").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM segments_fts WHERE segments_fts MATCH 'hello'").fetchone()[0] == 0
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO segments(document_id, seq, kind, text) VALUES (42, 0, 'text', 'x')")
    db.close()
