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

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.clock import now_iso
from app.store.audit import audited_settings
from app.store.library import DocumentRow
from app.store.purge import delete_document_rows, purge_rows, secure_delete, truncate_log

if TYPE_CHECKING:
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
    rows = purge_rows(db, doc_id)
    attachments = [
        a.document_id for a in ctx.library.attachments(doc_id) if a.document_id is not None and a.document_id != doc_id
    ]
    snapshots = 0
    audit = ctx.audit
    with secure_delete(db), db.atomic():
        delete_document_rows(db, doc_id, rows, now_iso())
        audit.record(
            "purge",
            documents=[doc.sha256],
            model_sha256=None,
            settings=audited_settings(ctx.settings),
            details={
                "pages": rows.pages,
                "segments": rows.segments,
                "conversations": len(rows.conversations),
                "extraction_cells": rows.cells,
            },
        )
        # Last before the commit: a failure above keeps the snapshots, a crash after this
        # point has already removed them.
        snapshots = StateStore(ctx.paths.state_cache_dir, 0).discard_tagged(doc.sha256)
        Readings(ctx.paths).forget_document(doc.sha256)
    audit.sync_head()
    removed = ctx.library.empty_trash()
    truncate_log(db)
    result = PurgeResult(doc, rows.pages, rows.segments, len(rows.conversations), rows.cells, removed, snapshots)
    # An e-mail's attachments came with it: each goes too (its own purge, on record), unless it is
    # also attached to another e-mail.
    for attachment_id in attachments:
        if not ctx.library.attached_to(attachment_id):
            purge_document(ctx, attachment_id)
    return result
