"""Recently opened documents, newest first (File > Recent documents)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.clock import now_iso
from app.store.library import DocumentRow

if TYPE_CHECKING:
    from sqlite_utils import Database

RECENT_LIMIT = 10


class RecentDocuments:
    def __init__(self, db: Database) -> None:
        self.db = db

    def touch(self, document_id: int) -> None:
        """Mark a document as just opened (a second seq, not the clock: seconds tie)."""
        with self.db.atomic():
            self.db.execute(
                "INSERT INTO document_opens(document_id, seq, opened_at) "
                "VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM document_opens), ?) "
                "ON CONFLICT(document_id) DO UPDATE SET seq = excluded.seq, opened_at = excluded.opened_at",
                [document_id, now_iso()],
            )

    def list(self, limit: int = RECENT_LIMIT) -> list[DocumentRow]:
        rows = self.db.execute(
            "SELECT d.* FROM document_opens o JOIN documents d ON d.id = o.document_id ORDER BY o.seq DESC LIMIT ?",
            [limit],
        )
        columns = [c[0] for c in rows.description]
        return [DocumentRow.from_row(dict(zip(columns, r, strict=True))) for r in rows.fetchall()]
