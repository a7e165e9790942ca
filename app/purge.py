"""`folio purge DOC`: remove a document for good, with everything Folio derived from it.

In one transaction: the document with its pages, segments and their full-text index entries, the
paths it was added from, the conversations about it (their messages quote it) and its extraction
cells, plus an audit entry that records the purge by sha256. SQLite's secure_delete zeroes the freed
content, the full-text indexes are merged so no old index segment keeps its words, and the write-ahead
log is checkpointed and truncated, so no copy of the text stays in the database files.

Files cannot join a transaction, so: document snapshots (model state after reading the document)
are deleted before the commit - they are caches, losing one to a failed purge costs only a re-read;
page images are queued in `blob_trash` inside the transaction and deleted right after the commit.
A crash in between leaves the queue, which the next start of Folio empties (Library.empty_trash).
A blob still used by another document (the same scanned page twice) is kept.

The audit log is append-only by design: its earlier entries (question text, sha256s) stay.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.clock import now_iso
from app.store.audit import audited_settings
from app.store.library import DocumentRow

if TYPE_CHECKING:
    from sqlite_utils import Database

    from app.context import AppContext


@dataclass(frozen=True)
class PurgeResult:
    document: DocumentRow
    pages: int
    segments: int
    conversations: int
    extraction_cells: int
    blobs: int  # image files deleted (shared ones are kept)
    snapshots: int  # model-state snapshots deleted


def purge_document(ctx: AppContext, doc_id: int) -> PurgeResult:
    from app.caches import Readings
    from inference.state_cache import StateStore

    db = ctx.db
    doc = ctx.library.get(doc_id)
    blobs = {
        str(r[0])
        for r in db.execute(
            "SELECT image_blob FROM pages WHERE document_id = :d AND image_blob IS NOT NULL "
            "UNION SELECT image_blob FROM segments WHERE document_id = :d AND image_blob IS NOT NULL "
            "UNION SELECT contact_sheet_blob FROM documents WHERE id = :d AND contact_sheet_blob IS NOT NULL "
            "UNION SELECT original_blob FROM documents WHERE id = :d AND original_blob IS NOT NULL",
            {"d": doc_id},
        )
    }
    conversations = [
        int(r[0])
        for r in db.execute("SELECT conversation_id FROM conversation_documents WHERE document_id = ?", [doc_id])
    ]
    attachments = [
        a.document_id for a in ctx.library.attachments(doc_id) if a.document_id is not None and a.document_id != doc_id
    ]
    pages = _count(db, "SELECT count(*) FROM pages WHERE document_id = ?", doc_id)
    segments = _count(db, "SELECT count(*) FROM segments WHERE document_id = ?", doc_id)
    cells = _count(db, "SELECT count(*) FROM extraction_cells WHERE document_id = ?", doc_id)
    runs = [
        int(r[0]) for r in db.execute("SELECT run_id FROM extraction_run_documents WHERE document_id = ?", [doc_id])
    ]
    snapshots = 0
    audit = ctx.audit
    db.execute("PRAGMA secure_delete = ON")  # deleted rows and freed pages are overwritten with zeros
    try:
        with db.atomic():
            for conv_id in conversations:  # messages go with them (ON DELETE CASCADE, FTS triggers)
                db.execute("DELETE FROM conversations WHERE id = ?", [conv_id])
            # An e-mail that had this attachment keeps its name, saying it was removed.
            db.execute("UPDATE attachments SET note = 'removed from the library' WHERE document_id = ?", [doc_id])
            # pages, segments (and their FTS rows), sources, extraction cells: ON DELETE CASCADE
            db.execute("DELETE FROM documents WHERE id = ?", [doc_id])
            for run_id in runs:  # a run left without documents holds nothing worth keeping
                db.execute(
                    "DELETE FROM extraction_runs WHERE id = ? AND NOT EXISTS "
                    "(SELECT 1 FROM extraction_run_documents WHERE run_id = ?)",
                    [run_id, run_id],
                )
            # FTS5 deletes add tombstones; merging rewrites the index without the deleted words.
            db.execute("INSERT INTO segments_fts(segments_fts) VALUES ('optimize')")
            db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
            now = now_iso()
            for name in sorted(blobs):
                db.execute("INSERT OR IGNORE INTO blob_trash(name, queued_at) VALUES (?, ?)", [name, now])
            audit.record(
                "purge",
                documents=[doc.sha256],
                model_sha256=None,
                settings=audited_settings(ctx.settings),
                details={
                    "pages": pages,
                    "segments": segments,
                    "conversations": len(conversations),
                    "extraction_cells": cells,
                },
            )
            # Last before the commit: a failure above keeps the snapshots, a crash after this
            # point has already removed them.
            snapshots = StateStore(ctx.paths.state_cache_dir, 0).discard_tagged(doc.sha256)
            Readings(ctx.paths).forget_document(doc.sha256)
    finally:
        db.execute("PRAGMA secure_delete = OFF")
    audit.sync_head()
    removed = ctx.library.empty_trash()
    with contextlib.suppress(Exception):  # another Folio holding the database only delays this
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    result = PurgeResult(doc, pages, segments, len(conversations), cells, removed, snapshots)
    # An e-mail's attachments came with it: each goes too (its own purge, on record), unless it is
    # also attached to another e-mail.
    for attachment_id in attachments:
        if not ctx.library.attached_to(attachment_id):
            purge_document(ctx, attachment_id)
    return result


def _count(db: Database, sql: str, doc_id: int) -> int:
    return int(db.execute(sql, [doc_id]).fetchone()[0])
