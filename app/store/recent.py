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

    def opened(self) -> dict[int, int]:
        """Every document ever opened -> a number that grows with how recently it was."""
        return {int(d): int(q) for d, q in self.db.execute("SELECT document_id, seq FROM document_opens")}

    def list(self, limit: int = RECENT_LIMIT, matter_id: int | None = None) -> list[DocumentRow]:
        """The documents opened last, newest first: any, or those of one matter."""
        rows = self.db.execute(
            "SELECT d.* FROM document_opens o JOIN documents d ON d.id = o.document_id WHERE :m IS NULL OR "
            "d.id IN (SELECT document_id FROM matter_documents WHERE matter_id = :m) ORDER BY o.seq DESC LIMIT :n",
            {"m": matter_id, "n": limit},
        )
        columns = [c[0] for c in rows.description]
        return [DocumentRow.from_row(dict(zip(columns, r, strict=True))) for r in rows.fetchall()]
