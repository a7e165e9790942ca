"""Check runs and their findings in SQLite (tables check_runs and check_findings, migration m033_checks).

A run is stored whole in one transaction with its audit entry, never updated afterwards: a newer run
of the same document sits beside it, the latest one counts. Rows are plain dictionaries here; what
they mean is app.checks.report's.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from app.store.db import insert_row

if TYPE_CHECKING:
    from sqlite_utils import Database

# The finding's fields kept in their own columns; the rest goes into `detail` as JSON.
COLUMNS = ("section", "kind", "status", "problem", "text", "note", "page", "label")


def save_run(db: Database, run: dict[str, Any], findings: list[dict[str, Any]]) -> int:
    """Insert a run and its findings; the caller holds the transaction (db.atomic())."""
    run_id = insert_row(db, "check_runs", run)
    rows = []
    for seq, finding in enumerate(findings):
        row = {k: finding.get(k) for k in COLUMNS}
        row["problem"] = int(bool(row["problem"]))
        detail = {k: v for k, v in finding.items() if k not in COLUMNS and v not in (None, "")}
        rows.append({"run_id": run_id, "seq": seq, **row, "detail": json.dumps(detail, ensure_ascii=False)})
    if rows:
        db.table("check_findings").insert_all(rows)
    return run_id


def latest_run(db: Database, document_id: int, fingerprint: str | None = None) -> dict[str, Any] | None:
    """The newest run of a document (with this fingerprint, when one is given), or None."""
    where, args = "document_id = ?", [document_id]
    if fingerprint is not None:
        where += " AND fingerprint = ?"
        args.append(fingerprint)  # type: ignore[arg-type]
    rows = list(db.table("check_runs").rows_where(where, args, order_by="id DESC", limit=1))
    return rows[0] if rows else None


def run_findings(db: Database, run_id: int) -> list[dict[str, Any]]:
    out = []
    for row in db.table("check_findings").rows_where("run_id = ?", [run_id], order_by="seq"):
        finding = {k: row[k] for k in COLUMNS}
        finding["problem"] = bool(finding["problem"])
        finding.update(json.loads(row["detail"] or "{}"))
        out.append(finding)
    return out


def runs_with_document(db: Database, document_id: int) -> list[int]:
    """Extraction runs that hold this document, newest first (where key dates look for table values)."""
    rows = db.execute(
        "SELECT run_id FROM extraction_run_documents WHERE document_id = ? ORDER BY run_id DESC", [document_id]
    ).fetchall()
    return [int(r[0]) for r in rows]
