"""The redaction log: one row per redacted copy written (app/redaction), stored in the same
transaction as its audit entry.

A row says which document was redacted (id and sha256), where the copy went and its sha256, how many
areas of each kind were removed on each page, what else was taken out of the file (metadata,
comments, attached files...) and what the proof checked. It never holds the redacted words: the log
may be shown to anyone who may see that a redaction happened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.store.db import insert_row

if TYPE_CHECKING:
    from sqlite_utils import Database


@dataclass(frozen=True)
class RedactionLog:
    id: int
    document_id: int | None
    source_sha256: str
    output_path: str
    output_sha256: str
    output_bytes: int
    areas: list[dict[str, Any]]  # {"kind", "page", "count"}
    removed: list[str]  # what else was taken out of the file, in words
    proof: dict[str, Any]  # app.redaction.proof.Proof.to_dict()
    labelled: bool
    created_at: str

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RedactionLog:
        return cls(
            id=row["id"],
            document_id=row["document_id"],
            source_sha256=row["source_sha256"],
            output_path=row["output_path"],
            output_sha256=row["output_sha256"],
            output_bytes=row["output_bytes"],
            areas=json.loads(row["areas"]),
            removed=json.loads(row["removed"]),
            proof=json.loads(row["proof"]),
            labelled=bool(row["labelled"]),
            created_at=row["created_at"],
        )


class Redactions:
    def __init__(self, db: Database) -> None:
        self.db = db

    def add(
        self,
        *,
        document_id: int | None,
        source_sha256: str,
        output_path: str,
        output_sha256: str,
        output_bytes: int,
        areas: list[dict[str, Any]],
        removed: list[str],
        proof: dict[str, Any],
        labelled: bool,
    ) -> int:
        """Insert one log row (call inside the transaction that records the export)."""
        return insert_row(
            self.db,
            "redactions",
            {
                "document_id": document_id,
                "source_sha256": source_sha256,
                "output_path": output_path,
                "output_sha256": output_sha256,
                "output_bytes": output_bytes,
                "areas": json.dumps(areas),
                "removed": json.dumps(removed),
                "proof": json.dumps(proof),
                "labelled": int(labelled),
                "created_at": now_iso(),
            },
        )

    def get(self, log_id: int) -> RedactionLog:
        from app.errors import NotFound

        rows = list(self.db.table("redactions").rows_where("id = ?", [log_id]))
        if not rows:
            raise NotFound(f"no redaction log {log_id}")
        return RedactionLog.from_row(rows[0])

    def list(self, document_id: int | None = None) -> list[RedactionLog]:
        where, args = ("document_id = ?", [document_id]) if document_id is not None else (None, [])
        return [
            RedactionLog.from_row(r) for r in self.db.table("redactions").rows_where(where, args, order_by="id DESC")
        ]
