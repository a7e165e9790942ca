"""Extraction runs in SQLite: a run (its template and model), its documents in order, and its cells,
one per document and field, committed as each answer arrives (app/extraction/runner.py fills them).
Rows go in and out as plain dicts: what a cell means is app/extraction/cells.py's business."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.errors import NotFound
from app.store.db import insert_row

if TYPE_CHECKING:
    from sqlite_utils import Database


class ExtractionStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- runs ------------------------------------------------------------------------------------
    def run(self, run_id: int) -> dict[str, Any]:
        rows = list(self.db.table("extraction_runs").rows_where("id = ?", [run_id]))
        if not rows:
            raise NotFound(f"no extraction run with id {run_id}")
        return rows[0]

    def run_ids(self) -> list[int]:
        """Every run, the newest first."""
        return [int(r[0]) for r in self.db.execute("SELECT id FROM extraction_runs ORDER BY id DESC")]

    def latest(self, template_sha256: str, model_key: str, design: str, matter_id: int | None = None) -> int | None:
        """The newest run of this template with this model, asked this way (in this matter, when given)."""
        row = self.db.execute(
            "SELECT id FROM extraction_runs WHERE template_sha256 = ? AND model_sha256 = ? AND design = ? "
            "AND (? IS NULL OR matter_id = ?) ORDER BY id DESC LIMIT 1",
            [template_sha256, model_key, design, matter_id, matter_id],
        ).fetchone()
        return int(row[0]) if row else None

    def matter_of(self, run_id: int) -> int | None:
        row = self.db.execute("SELECT matter_id FROM extraction_runs WHERE id = ?", [run_id]).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def run_ids_in(self, matter_id: int) -> list[int]:
        """The runs of one matter, the newest first."""
        rows = self.db.execute("SELECT id FROM extraction_runs WHERE matter_id = ? ORDER BY id DESC", [matter_id])
        return [int(r[0]) for r in rows]

    def start(self, run_id: int | None, run: dict[str, Any], document_ids: list[int]) -> int:
        """A new run (when run_id is None) with these documents appended after the run's own, in one
        transaction; returns the run's id."""
        with self.db.atomic():
            if run_id is None:
                now = now_iso()
                if run.get("matter_id") is None:
                    from app.store.matters import Matters

                    run = {**run, "matter_id": Matters(self.db).one_for(list(document_ids))}
                run_id = insert_row(self.db, "extraction_runs", {**run, "created_at": now, "updated_at": now})
            start = self.db.execute(
                "SELECT coalesce(max(position), 0) FROM extraction_run_documents WHERE run_id = ?", [run_id]
            ).fetchone()[0]
            for offset, doc_id in enumerate(dict.fromkeys(document_ids), start=1):
                self.db.execute(
                    "INSERT OR IGNORE INTO extraction_run_documents(run_id, document_id, position) VALUES (?, ?, ?)",
                    [run_id, doc_id, start + offset],
                )
        return run_id

    def size(self, run_id: int) -> tuple[int, int]:
        """(documents, cells) of a run."""
        docs = self.db.execute("SELECT count(*) FROM extraction_run_documents WHERE run_id = ?", [run_id]).fetchone()
        cells = self.db.execute("SELECT count(*) FROM extraction_cells WHERE run_id = ?", [run_id]).fetchone()
        return int(docs[0]), int(cells[0])

    def field_in_runs(self, document_id: int, field_key: str) -> list[tuple[int, str, bool]]:
        """A field's cells for one document in every run, newest first: (run, value, found)."""
        rows = self.db.execute(
            "SELECT run_id, value, found FROM extraction_cells WHERE document_id = ? AND field_key = ? "
            "ORDER BY run_id DESC",
            [document_id, field_key],
        ).fetchall()
        return [(int(r), str(v or ""), bool(f)) for r, v, f in rows]

    def set_status(self, run_id: int, status: str) -> None:
        with self.db.atomic():
            self.db.table("extraction_runs").update(run_id, {"status": status, "updated_at": now_iso()})

    def documents(self, run_id: int) -> list[int]:
        rows = self.db.execute(
            "SELECT document_id FROM extraction_run_documents WHERE run_id = ? ORDER BY position", [run_id]
        ).fetchall()
        return [int(r[0]) for r in rows]

    def document_done(self, run_id: int, document_id: int) -> None:
        with self.db.atomic():
            self.db.execute(
                "UPDATE extraction_run_documents SET status = 'done' WHERE run_id = ? AND document_id = ?",
                [run_id, document_id],
            )

    # -- cells -----------------------------------------------------------------------------------
    def cells(self, run_id: int) -> list[dict[str, Any]]:
        return list(self.db.table("extraction_cells").rows_where("run_id = ?", [run_id]))

    def cell(self, run_id: int, document_id: int, field_key: str) -> dict[str, Any] | None:
        rows = list(
            self.db.table("extraction_cells").rows_where(
                "run_id = ? AND document_id = ? AND field_key = ?", [run_id, document_id, field_key]
            )
        )
        return rows[0] if rows else None

    def field_keys(self, run_id: int, document_id: int) -> set[str]:
        """The fields of this document the run has a cell for."""
        rows = self.db.execute(
            "SELECT field_key FROM extraction_cells WHERE run_id = ? AND document_id = ?", [run_id, document_id]
        ).fetchall()
        return {r[0] for r in rows}

    def add_cells(self, run_id: int, rows: list[dict[str, Any]]) -> None:
        """Store one answer's cells (each row: the extraction_cells columns but run_id and created_at),
        in one transaction with the run's update time."""
        now = now_iso()
        with self.db.atomic():
            for row in rows:
                flags = row.get("flags", [])
                stored = {**row, "run_id": run_id, "created_at": now}
                stored["flags"] = flags if isinstance(flags, str) else json.dumps(flags)
                self.db.table("extraction_cells").insert(stored)
            self.db.execute("UPDATE extraction_runs SET updated_at = ? WHERE id = ?", [now, run_id])

    # -- reviews ---------------------------------------------------------------------------------
    def cell_to_review(self, run_id: int, document_id: int, field_key: str) -> tuple[str, bool, str, str] | None:
        """What a review records beside its decision: the model's value, whether it found one, the
        run's model key and the document's sha256; None when the run has no such cell."""
        row = self.db.execute(
            "SELECT c.value, c.found, r.model_sha256, d.sha256 FROM extraction_cells c "
            "JOIN extraction_runs r ON r.id = c.run_id JOIN documents d ON d.id = c.document_id "
            "WHERE c.run_id = ? AND c.document_id = ? AND c.field_key = ?",
            [run_id, document_id, field_key],
        ).fetchone()
        return None if row is None else (str(row[0]), bool(row[1]), str(row[2]), str(row[3]))

    def add_review(self, row: dict[str, Any]) -> None:
        """One reviewer's decision (inside the caller's transaction, with its audit entry)."""
        self.db.table("extraction_reviews").insert(row)

    def reviews(self, run_id: int) -> list[tuple[int, str, str, str, str, str, str]]:
        """Every decision on the run's cells, oldest first: (document id, field, decision, value, note,
        reviewer, at)."""
        rows = self.db.execute(
            "SELECT document_id, field_key, decision, value, note, reviewer, at FROM extraction_reviews "
            "WHERE run_id = ? ORDER BY id",
            [run_id],
        ).fetchall()
        return [tuple(r) for r in rows]
