"""The checks run after every kill -9 trial find the damage they are meant to find: each kind of
half-written state is made on purpose and must be reported (a check that cannot fail proves nothing)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from app.context import open_app
from app.store.conversations import Conversations
from tests.fixtures.pdfs import make_contract_pdf
from tests.reliability.crash_trials import CrashLab


def _lab(home: Path, tmp_path: Path) -> tuple[CrashLab, str]:
    ctx = open_app()
    try:
        doc = ctx.library.add(make_contract_pdf(tmp_path / "c.pdf")).document
        conversations = Conversations(ctx.db)
        conv = conversations.create([doc.id], "t")
        conversations.add_message(conv, "user", "Which law?")
        conversations.add_message(conv, "assistant", "Delaware [p. 4].", completion_tokens=5)
        segments = len(ctx.library.segments(doc.id))
    finally:
        ctx.close()
    lab = CrashLab(home, tmp_path / "work", 1)
    lab.reference = (4, segments)
    return lab, doc.sha256


def _sql(home: Path, *statements: str) -> None:
    con = sqlite3.connect(home / "data" / "folio.sqlite3")
    con.execute("PRAGMA foreign_keys = OFF")
    for statement in statements:
        con.execute(statement)
    con.commit()
    con.close()


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "half-added document": (lambda h: _sql(h, "DELETE FROM pages WHERE number > 2"), "is half there"),
    "document without segments": (lambda h: _sql(h, "DELETE FROM segments"), "is half there"),
    "stored message changed": (lambda h: _sql(h, "UPDATE messages SET text = 'other' WHERE id = 2"), "changed"),
    "question without its answer row": (
        lambda h: _sql(
            h,
            "INSERT INTO messages(conversation_id, seq, role, text, created_at) VALUES (1, 3, 'user', 'lost?', 'now')",
        ),
        "without its answer row",
    ),
    "partial answer marked complete": (
        lambda h: _sql(
            h,
            "INSERT INTO messages(conversation_id, seq, role, text, created_at) VALUES (1, 3, 'user', 'q', 'now')",
            "INSERT INTO messages(conversation_id, seq, role, text, status, created_at) "
            "VALUES (1, 4, 'assistant', 'The answ', 'complete', 'now')",
        ),
        "marked complete but has no text or token count",
    ),
    "empty conversation": (
        lambda h: _sql(h, "INSERT INTO conversations(title, created_at, updated_at) VALUES ('x', 'now', 'now')"),
        "without any message",
    ),
    "missing page image": (
        lambda h: _sql(h, "UPDATE pages SET image_blob = 'ab/missing.png' WHERE number = 1"),
        "stored file(s) missing",
    ),
    "audit head ahead of the log": (
        lambda h: (h / "data" / "audit-head.json").write_text(json.dumps({"id": 9, "hash": "0" * 64})),
        "audit log",
    ),
}


@pytest.mark.parametrize("what", sorted(DAMAGE))
def test_each_kind_of_damage_is_reported(folio_home: Path, tmp_path: Path, what: str) -> None:
    lab, _sha = _lab(folio_home, tmp_path)
    before = lab._state()
    assert lab.check(before, "", None) == []  # an intact library passes
    damage, expected = DAMAGE[what]
    damage(folio_home)
    problems = lab.check(before, "", None)
    assert any(expected in p for p in problems), problems


def test_a_damaged_snapshot_and_a_cut_export_are_reported(folio_home: Path, tmp_path: Path) -> None:
    from inference.state_cache import StateStore

    lab, _sha = _lab(folio_home, tmp_path)
    before = lab._state()
    store = StateStore(folio_home / "cache" / "states", 1 << 30)

    def write(path: Path) -> int:
        path.write_bytes(b"x" * 100)
        return 100

    store.save("k" * 40, 10, write)
    (folio_home / "cache" / "states" / ("k" * 40 + ".state")).write_bytes(b"y" * 100)  # same size, other bytes
    cut = tmp_path / "chat.pdf"
    cut.write_bytes(b"%PDF-1.7\n1 0 obj")
    problems = lab.check(before, "", cut)
    assert any("does not verify" in p for p in problems) and any("not a readable PDF" in p for p in problems)


def test_a_document_added_with_fewer_segments_than_a_full_ingest_is_reported(folio_home: Path, tmp_path: Path) -> None:
    lab, sha = _lab(folio_home, tmp_path)
    before = lab._state()
    lab.reference = (lab.reference[0], lab.reference[1] + 1)
    assert any("a full ingest gives" in p for p in lab.check(before, sha, None))
