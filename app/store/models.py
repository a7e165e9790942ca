"""The registered models' rows (`models`) and the starter's reserved number (`model_numbers`).

What a model is and how its file is read lives in `app/models/registry.py`; this holds only the SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.store.db import insert_row

if TYPE_CHECKING:
    from sqlite_utils import Database


class ModelRows:
    def __init__(self, db: Database) -> None:
        self.db = db

    def all(self) -> list[dict[str, Any]]:
        return list(self.db.table("models").rows_where(order_by="id"))

    def get(self, model_id: int) -> dict[str, Any]:
        return dict(self.db.table("models").get(model_id))

    def by_sha256(self, sha256: str) -> dict[str, Any] | None:
        rows = list(self.db.table("models").rows_where("sha256 = ?", [sha256]))
        return rows[0] if rows else None

    def starter(self) -> dict[str, Any] | None:
        """The starter demo model's row, once it has been set up."""
        rows = list(self.db.table("models").rows_where("is_starter = 1"))
        return rows[0] if rows else None

    def numbers(self) -> list[int]:
        return [int(r["id"]) for r in self.db.table("models").rows_where(select="id")]

    def reserved(self, role: str) -> int:
        """The number reserved for a role ('starter'), with the library (migration m036)."""
        return int(self.db.table("model_numbers").get(role)["number"])

    def insert(self, number: int, row: dict[str, Any]) -> int:
        """A new model under its number, in one transaction; sqlite3.IntegrityError when the number
        or the sha256 was taken meanwhile."""
        with self.db.atomic():
            return insert_row(self.db, "models", {"id": number, **row})

    def update(self, model_id: int, values: dict[str, Any]) -> None:
        with self.db.atomic():
            self.db.table("models").update(model_id, values)
