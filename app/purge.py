"""`folio purge DOC`: remove a document for good, with everything Folio derived from it.

In one transaction: the document with its pages, segments and their full-text index entries, the
paths it was added from, the conversations about it (their messages and kept answer parts quote it),
its extraction cells, playbook reviews and check runs (ON DELETE CASCADE), plus an audit entry that
records the purge by sha256. Its redaction logs stay, unlinked: they hold no text of it (m034).
SQLite's secure_delete zeroes the freed content, the full-text indexes are merged so no old index
segment keeps its words, and the write-ahead log is checkpointed and truncated, so no copy of the text
stays in the database files.

Files cannot join a transaction, so: document snapshots (model state after reading the document)
are deleted before the commit - they are caches, losing one to a failed purge costs only a re-read;
page images are queued in `blob_trash` inside the transaction and deleted right after the commit.
A crash in between leaves the queue, which the next start of Folio empties (Library.empty_trash).
A blob still used by another document (the same scanned page twice) is kept.

The audit log is append-only by design: its earlier entries (question text, sha256s) stay.

`folio matter purge NAME` (`purge_matter`) destroys a matter the same way, in one transaction: each of
its documents that no other matter holds (through the same row deletes as a document's purge), the
matter's conversations and extraction runs, its links, the matter itself, and a `destroy` entry in the
audit log naming what went (titles, sha256s, counts), when and by which OS user. Documents another matter
holds stay, only unlinked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.store.audit import audited_settings
from app.store.library import DocumentRow
from app.store.matters import Matter, Matters
from app.store.purge import (
    PurgeRows,
    delete_document_rows,
    optimize_indexes,
    purge_rows,
    secure_delete,
    truncate_log,
)

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


def _forget_states(ctx: AppContext, sha256s: list[str]) -> int:
    """Delete the model-state snapshots and checkpoints that hold any of these documents, and their
    reading records; returns the snapshots deleted."""
    from app.caches import Readings
    from inference.state_cache import StateStore

    store, readings, removed = StateStore(ctx.paths.state_cache_dir, 0), Readings(ctx.paths), 0
    for sha256 in sha256s:
        removed += store.discard_tagged(sha256)
        readings.forget_document(sha256)
    return removed


def purge_document(ctx: AppContext, doc_id: int) -> PurgeResult:
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
        snapshots = _forget_states(ctx, [doc.sha256])
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


@dataclass(frozen=True)
class MatterPurgeResult:
    matter: Matter
    removed: list[dict[str, Any]]  # each document removed: title, sha256, pages, segments
    kept: list[dict[str, Any]]  # each document another matter holds: title, sha256 (unlinked only)
    conversations: int
    extraction_runs: int
    blobs: int  # page images and original files deleted
    snapshots: int
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PurgeProgress:
    """How far a matter's destruction is: documents removed of those going, then the step after them."""

    done: int
    total: int
    step: str


def purge_matter(
    ctx: AppContext, name: str, on_progress: Callable[[PurgeProgress], None] | None = None
) -> MatterPurgeResult:
    """Destroy a matter and everything only it holds, in one transaction, with a destruction record."""
    say = on_progress or (lambda _p: None)
    db = ctx.db
    matters = Matters(db)
    matter = matters.get(name)
    contents = matters.contents(matter.id)
    gone = contents.going
    kept = [{"title": d.title, "sha256": d.sha256} for d in contents.documents if d.shared]
    rows: dict[int, PurgeRows] = {d.id: purge_rows(db, d.id) for d in gone}
    conversations = set(contents.conversations).union(*(r.conversations for r in rows.values()))
    runs = set(contents.extraction_runs)
    removed = [
        {"title": d.title, "sha256": d.sha256, "pages": rows[d.id].pages, "segments": rows[d.id].segments} for d in gone
    ]
    counts = {
        "documents": len(gone),
        "documents_kept": len(kept),
        "pages": sum(r.pages for r in rows.values()),
        "segments": sum(r.segments for r in rows.values()),
        "extraction_cells": sum(r.cells for r in rows.values()),
        "conversations": len(conversations),
        "extraction_runs": len(runs),
    }
    audit = ctx.audit
    now = now_iso()
    with secure_delete(db), db.atomic():
        for done, doc in enumerate(gone):
            say(PurgeProgress(done, len(gone), f"removing {doc.title}"))
            # The index is rewritten once below, not once per document: each rewrite reads all of it.
            delete_document_rows(db, doc.id, rows[doc.id], now, optimize=False)
        say(PurgeProgress(len(gone), len(gone), "removing conversations and tables, rewriting the search index"))
        matters.delete_contents(matter.id, contents)
        optimize_indexes(db)
        audit.record(
            "destroy",
            documents=[d.sha256 for d in gone],
            model_sha256=None,
            settings=audited_settings(ctx.settings),
            details={
                "matter": matter.name,
                "matter_number": matter.number,
                "opened_at": matter.opened_at,
                "retain_until": matter.retain_until,
                "removed": removed,
                "kept": kept,
                "counts": counts,
            },
            matter_id=matter.id,
        )
        snapshots = _forget_states(ctx, [d.sha256 for d in gone])  # last before the commit, as above
    audit.sync_head()
    say(PurgeProgress(len(gone), len(gone), "deleting page images and files"))
    blobs = ctx.library.empty_trash()
    truncate_log(db)
    return MatterPurgeResult(matter, removed, kept, len(conversations), len(runs), blobs, snapshots, counts)
