"""Playbook reviews in SQLite (playbook_reviews, playbook_findings, playbook_decisions; migration
m039_playbook_reviews). A review is stored whole, with its findings, in the caller's transaction (with
its audit entry) and never updated: a later review of the same document sits beside it. A reviewer's
accept or reject of a finding is a row of its own, the latest one counting. Rows go in and out as plain
dicts: what they mean is app.playbook.review's business."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from app.errors import NotFound
from app.store.db import insert_row

if TYPE_CHECKING:
    from sqlite_utils import Database

FINDING_COLUMNS = ("rule_key", "verdict", "reason", "value", "read_value", "quote", "page", "label", "grounding",
                   "score", "confidence", "decided_by")  # fmt: skip


class ReviewStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def save(self, review: dict[str, Any], findings: list[dict[str, Any]]) -> int:
        """A review and its findings; the caller holds the transaction (db.atomic())."""
        review_id = insert_row(self.db, "playbook_reviews", review)
        rows = [
            {"review_id": review_id, "seq": n, **{k: f.get(k) for k in FINDING_COLUMNS}} for n, f in enumerate(findings)
        ]
        if rows:
            self.db.table("playbook_findings").insert_all(rows)
        return review_id

    def review(self, review_id: int) -> dict[str, Any]:
        rows = list(self.db.table("playbook_reviews").rows_where("id = ?", [review_id]))
        if not rows:
            raise NotFound(f"no playbook review with id {review_id}")
        return rows[0]

    def findings(self, review_id: int) -> list[dict[str, Any]]:
        return list(self.db.table("playbook_findings").rows_where("review_id = ?", [review_id], order_by="seq"))

    def review_ids(self, matter_id: int | None = None) -> list[int]:
        """Every review (of one matter, when given), the newest first."""
        rows = self.db.execute(
            "SELECT id FROM playbook_reviews WHERE (? IS NULL OR matter_id = ?) ORDER BY id DESC",
            [matter_id, matter_id],
        )
        return [int(r[0]) for r in rows]

    def summaries(self, matter_id: int | None, short: Sequence[str]) -> list[dict[str, Any]]:
        """What a list of reviews shows, in one query and without reading any review whole: each review (of
        one matter, when given) with its document's title, its playbook's name and version, how many
        findings it has and how many of them have a verdict in `short`; the newest first."""
        marks = ", ".join("?" for _ in short) or "NULL"
        rows = self.db.execute(
            f"""SELECT r.id, r.document_id, d.title, r.playbook_key, r.playbook_version,
                       coalesce(json_extract(r.playbook_json, '$.name'), r.playbook_key), r.created_at,
                       count(f.rule_key), count(CASE WHEN f.verdict IN ({marks}) THEN 1 END)
                FROM playbook_reviews r
                JOIN documents d ON d.id = r.document_id
                LEFT JOIN playbook_findings f ON f.review_id = r.id
                WHERE (? IS NULL OR r.matter_id = ?)
                GROUP BY r.id ORDER BY r.id DESC""",
            [*short, matter_id, matter_id],
        ).fetchall()
        names = ("id", "document_id", "title", "playbook_key", "playbook_version", "playbook_name", "created_at",
                 "findings", "short")  # fmt: skip
        return [dict(zip(names, row, strict=True)) for row in rows]

    def add_decision(self, row: dict[str, Any]) -> None:
        """One reviewer's decision on a finding (inside the caller's transaction, with its audit entry)."""
        self.db.table("playbook_decisions").insert(row)

    def decisions(self, review_id: int) -> list[tuple[str, str, str, str, str]]:
        """Every decision on the review's findings, oldest first: (rule, decision, note, reviewer, at)."""
        rows = self.db.execute(
            "SELECT rule_key, decision, note, reviewer, at FROM playbook_decisions WHERE review_id = ? ORDER BY id",
            [review_id],
        ).fetchall()
        return [(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]
