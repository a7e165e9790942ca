"""A hash-chained audit log of every document added or purged, question, extraction and export.

Each entry stores when, which OS user, what action, the sha256 of every document involved, the
model's sha256 and the settings in force, plus the hash of the previous entry; its own hash covers
all of that. Editing or deleting an entry breaks the chain. SQLite triggers refuse UPDATE and
DELETE outright, and the last entry's id and hash are mirrored in a small file beside the
database, so cutting entries off the end is noticed too. Someone who can rewrite both the
database and that file can forge a consistent log: note the head hash printed by
`folio audit verify` somewhere else (a ticket, an email) to pin it down.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import getpass
import hashlib
import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.errors import FolioError
from common.files import atomic_write_text

if TYPE_CHECKING:
    from sqlite_utils import Database

    from app.settings import Settings

GENESIS = "0" * 64
ACTIONS = (
    "add", "question", "extraction", "export", "purge", "review", "comparison", "check", "matter", "destroy", "import",
    "playbook",
)  # fmt: skip
_COLUMNS = ("id", "at", "os_user", "action", "documents", "model_sha256", "settings", "details", "prev_hash")


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: str
    os_user: str
    action: str
    documents: list[str]  # sha256 of each document involved
    model_sha256: str | None
    settings: dict[str, Any]
    details: dict[str, Any]
    prev_hash: str
    hash: str
    matter_id: int | None = None  # the matter it belongs to; None: written before matters, or none applies

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> AuditEntry:
        return cls(
            id=row["id"],
            at=row["at"],
            os_user=row["os_user"],
            action=row["action"],
            documents=json.loads(row["documents"]),
            model_sha256=row["model_sha256"],
            settings=json.loads(row["settings"]),
            details=json.loads(row["details"]),
            prev_hash=row["prev_hash"],
            hash=row["hash"],
            matter_id=row.get("matter_id"),
        )


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    entries: int
    head_hash: str
    problem: str = ""  # one line: what is wrong and where


def entry_hash(row: dict[str, Any]) -> str:
    """The hash of an entry over its stored text, exactly as stored (no re-encoding of the JSON). An
    entry's matter is covered when it has one; entries written before matters hash as they always did."""
    values: list[Any] = [row[c] for c in _COLUMNS]
    if row.get("matter_id") is not None:
        values.append({"matter_id": row["matter_id"]})
    payload = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):  # no login name (a service account, a container)
        return f"uid:{os.getuid()}" if hasattr(os, "getuid") else "unknown"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class AuditLog:
    def __init__(self, db: Database, head_file: Path, matter_id: int | None = None) -> None:
        self.db = db
        self.head_file = head_file
        self.matter_id = matter_id  # the matter an entry belongs to unless `record` names another

    @classmethod
    def in_folder(cls, db: Database, data_dir: Path, matter_id: int | None = None) -> AuditLog:
        return cls(db, data_dir / "audit-head.json", matter_id)

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        # BEGIN IMMEDIATE takes the write lock before reading the head, so two connections can
        # never both append after the same entry (a fork in the chain).
        conn = self.db.conn
        if conn.in_transaction:
            with self.db.atomic():
                yield
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def record(
        self,
        action: str,
        *,
        documents: list[str],
        model_sha256: str | None,
        settings: dict[str, Any],
        details: dict[str, Any],
        matter_id: int | None = None,
    ) -> AuditEntry:
        if action not in ACTIONS:
            raise FolioError(f"unknown audit action {action!r}")
        with self._write_lock():
            last = self.db.execute("SELECT id, hash FROM audit_log ORDER BY id DESC LIMIT 1").fetchone()
            row: dict[str, Any] = {
                "id": (last[0] + 1) if last else 1,
                "at": now_iso(),
                "os_user": os_user(),
                "action": action,
                "documents": _canonical(list(documents)),
                "model_sha256": model_sha256,
                "settings": _canonical(settings),
                "details": _canonical(details),
                "prev_hash": last[1] if last else GENESIS,
                "matter_id": matter_id if matter_id is not None else self.matter_id,
            }
            row["hash"] = entry_hash(row)
            self.db.table("audit_log").insert(row)
        if not self.db.conn.in_transaction:
            self._write_head(row["id"], row["hash"])
        # else: the caller's transaction is still open; it calls sync_head() after its commit, so the
        # head file never names an entry a crash could still roll back.
        return AuditEntry.from_row(row)

    def sync_head(self) -> None:
        """Mirror the last committed entry into the head file."""
        last = self.db.execute("SELECT id, hash FROM audit_log ORDER BY id DESC LIMIT 1").fetchone()
        if last is not None:
            self._write_head(int(last[0]), str(last[1]))

    def _write_head(self, entry_id: int, head: str) -> None:
        # If this fails the chain in SQLite stays intact, and verify reports the stale head file.
        with contextlib.suppress(OSError):
            atomic_write_text(self.head_file, json.dumps({"id": entry_id, "hash": head}) + "\n")

    def _read_head(self) -> tuple[int, str] | None:
        try:
            raw = json.loads(self.head_file.read_text(encoding="utf-8"))
            return int(raw["id"]), str(raw["hash"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            return (-1, "")

    def entries(self) -> list[AuditEntry]:
        return [AuditEntry.from_row(r) for r in self.db.table("audit_log").rows_where(order_by="id")]

    def verify(self) -> VerifyResult:
        expected_prev = GENESIS
        expected_id = 1
        count = 0
        for row in self.db.table("audit_log").rows_where(order_by="id"):
            if row["id"] != expected_id:
                return VerifyResult(False, count, expected_prev, f"entry {expected_id} is missing (deleted)")
            if row["prev_hash"] != expected_prev:
                problem = f"entry {row['id']} does not follow entry {row['id'] - 1}"
                return VerifyResult(False, count, expected_prev, problem)
            if entry_hash(row) != row["hash"]:
                return VerifyResult(False, count, expected_prev, f"entry {row['id']} was changed after it was written")
            expected_prev = row["hash"]
            expected_id += 1
            count += 1
        head = self._read_head()
        if head is not None:
            head_id, head_hash = head
            if head_id > count:
                return VerifyResult(
                    False, count, expected_prev, f"entries {count + 1} to {head_id} were deleted from the end"
                )
            if head_id == count and head_hash != expected_prev:
                return VerifyResult(False, count, expected_prev, f"entry {count} does not match the recorded head")
            if head_id < 0:
                return VerifyResult(False, count, expected_prev, f"the head file {self.head_file.name} is damaged")
        elif count:
            return VerifyResult(False, count, expected_prev, f"the head file {self.head_file.name} is missing")
        return VerifyResult(True, count, expected_prev)

    def export(self, fmt: str) -> bytes:
        """The whole log as JSON Lines or CSV, each entry with its hashes so a reader can re-check."""
        entries = [dataclasses.asdict(e) for e in self.entries()]
        if fmt == "jsonl":
            return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries).encode("utf-8")
        if fmt == "csv":
            out = io.StringIO()
            writer = csv.writer(out)
            columns = (*_COLUMNS, "hash", "matter_id")
            writer.writerow(columns)
            for e in entries:
                writer.writerow(
                    [json.dumps(e[c], ensure_ascii=False) if isinstance(e[c], list | dict) else e[c] for c in columns]
                )
            return out.getvalue().encode("utf-8")
        raise FolioError(f"unknown audit export format {fmt!r} (use jsonl or csv)")


# -- what the services record ------------------------------------------------------------------
def audited_settings(settings: Settings) -> dict[str, Any]:
    return dataclasses.asdict(settings)


@dataclass(frozen=True)
class DocumentAudit:
    """What the library needs to record the documents it adds (it holds no AppContext)."""

    log: AuditLog
    settings: Settings

    def added(self, sha256: str, details: dict[str, Any], matter_id: int | None = None) -> None:
        """Call inside the transaction that stores the document, then `log.sync_head()` after its commit."""
        self.log.record(
            "add",
            documents=[sha256],
            model_sha256=None,
            settings=dataclasses.asdict(self.settings),
            details=details,
            matter_id=matter_id,
        )


def record_question(
    log: AuditLog,
    settings: Settings,
    *,
    documents: list[str],  # their sha256s
    model_label: str,
    model_sha256: str | None,
    conversation_id: int,
    message_id: int,
    question: str,
    thinking: bool,
    matter_id: int | None = None,
) -> AuditEntry:
    return log.record(
        "question",
        documents=documents,
        model_sha256=model_sha256,
        settings=audited_settings(settings),
        details={
            "conversation_id": conversation_id,
            "message_id": message_id,
            "question_sha256": hashlib.sha256(question.encode("utf-8")).hexdigest(),
            "question": question,
            "thinking": thinking,
            "model": model_label,
        },
        matter_id=matter_id,
    )
