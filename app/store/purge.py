"""The rows a purge removes (`app/purge.py` orders the steps; this holds the SQL): what a document's
purge will take, and the deletes themselves, run inside the caller's transaction."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.store.library import DOCUMENT_BLOBS_SQL

if TYPE_CHECKING:
    from sqlite_utils import Database


@dataclass(frozen=True)
class PurgeRows:
    """What a document's purge takes with it, counted before anything is deleted."""

    blobs: frozenset[str]  # page images, contact sheet, original file
    conversations: list[int]
    runs: list[int]  # extraction runs that read the document
    pages: int
    segments: int
    cells: int


def purge_rows(db: Database, doc_id: int) -> PurgeRows:
    blobs = frozenset(
        str(r[0])
        for r in db.execute(
            DOCUMENT_BLOBS_SQL,
            {"d": doc_id},
        )
    )
    conversations = [
        int(r[0])
        for r in db.execute("SELECT conversation_id FROM conversation_documents WHERE document_id = ?", [doc_id])
    ]
    runs = [
        int(r[0]) for r in db.execute("SELECT run_id FROM extraction_run_documents WHERE document_id = ?", [doc_id])
    ]
    return PurgeRows(
        blobs,
        conversations,
        runs,
        _count(db, "SELECT count(*) FROM pages WHERE document_id = ?", doc_id),
        _count(db, "SELECT count(*) FROM segments WHERE document_id = ?", doc_id),
        _count(db, "SELECT count(*) FROM extraction_cells WHERE document_id = ?", doc_id),
    )


def delete_document_rows(db: Database, doc_id: int, rows: PurgeRows, now: str, *, optimize: bool = True) -> None:
    """Every row derived from the document; its page images queued in `blob_trash`. Call inside a
    transaction (with the audit entry), so all of it happens or none. `optimize=False`: the caller
    removes more documents and rewrites the indexes once after the last (optimize_indexes)."""
    for conv_id in rows.conversations:  # messages go with them (ON DELETE CASCADE, FTS triggers)
        db.execute("DELETE FROM conversations WHERE id = ?", [conv_id])
    # An e-mail that had this attachment keeps its name, saying it was removed.
    db.execute("UPDATE attachments SET note = 'removed from the library' WHERE document_id = ?", [doc_id])
    # pages, segments (and their FTS rows), sources, extraction cells: ON DELETE CASCADE
    db.execute("DELETE FROM documents WHERE id = ?", [doc_id])
    for run_id in rows.runs:  # a run left without documents holds nothing worth keeping
        db.execute(
            "DELETE FROM extraction_runs WHERE id = ? AND NOT EXISTS "
            "(SELECT 1 FROM extraction_run_documents WHERE run_id = ?)",
            [run_id, run_id],
        )
    if optimize:
        optimize_indexes(db)
    for name in sorted(rows.blobs):
        db.execute("INSERT OR IGNORE INTO blob_trash(name, queued_at) VALUES (?, ?)", [name, now])


def optimize_indexes(db: Database) -> None:
    """FTS5 deletes add tombstones; merging rewrites the indexes without the deleted words."""
    db.execute("INSERT INTO segments_fts(segments_fts) VALUES ('optimize')")
    db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")


@contextlib.contextmanager
def secure_delete(db: Database) -> Iterator[None]:
    """Deleted rows and freed pages overwritten with zeros while the block runs."""
    db.execute("PRAGMA secure_delete = ON")
    try:
        yield
    finally:
        db.execute("PRAGMA secure_delete = OFF")


def truncate_log(db: Database) -> None:
    """Checkpoint the write-ahead log and truncate it, so no copy of deleted text stays in it. Another
    Folio holding the database only delays this."""
    with contextlib.suppress(Exception):
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _count(db: Database, sql: str, doc_id: int) -> int:
    return int(db.execute(sql, [doc_id]).fetchone()[0])
