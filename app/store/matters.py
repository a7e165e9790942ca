"""Matters (a client matter, deal or case) and which documents each holds: the SQL of it.

A document is stored once (by sha256) and linked to every matter that holds it (`matter_documents`);
conversations and extraction runs name their matter (`matter_id`). "Unfiled" holds what was in the
library before matters, and whatever is added without one; it is made again when it is missing.
`app/purge.py` orders the steps of destroying a matter; the deletes are here. Opening, changing and
closing a matter with its audit entry (`open_matter`, `change_matter`, `close_matter`) are here too, so
the CLI and the window write the same record in the same transaction.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.errors import FolioError, NotFound
from app.store.audit import audited_settings
from app.store.db import insert_row

if TYPE_CHECKING:
    from sqlite_utils import Database

    from app.settings import Settings
    from app.store.audit import AuditLog

UNFILED = "Unfiled"
_COLUMNS = "id, name, number, description, opened_at, retain_until, closed"


@dataclass(frozen=True)
class Matter:
    id: int
    name: str
    number: str  # the client/matter number, "" when none was given
    description: str
    opened_at: str  # ISO 8601, UTC
    retain_until: str | None  # ISO date after which the matter is due for destruction; None: kept
    closed: bool

    @classmethod
    def from_tuple(cls, row: tuple[Any, ...]) -> Matter:
        return cls(int(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), row[5], bool(row[6]))

    def due(self, today: str) -> bool:
        """Past its retention date on `today` (an ISO date)."""
        return self.retain_until is not None and self.retain_until[:10] < today[:10]


@dataclass(frozen=True)
class MatterCounts:
    documents: int
    conversations: int
    extraction_runs: int


@dataclass(frozen=True)
class MattersSeen:
    """What a window shows of the matters and of one matter's documents, cheap to read (an index, a few
    rows): two that differ mean something changed it, here or in another Folio."""

    matters: tuple[Matter, ...]
    matter_id: int
    documents: int  # how many the matter holds
    last_filed: int  # the newest link's rowid: a document filed and another removed still differ


@dataclass(frozen=True)
class MatterDocument:
    """A document of a matter, as a destruction record names it."""

    id: int
    sha256: str
    title: str
    shared: bool  # another matter holds it too: a purge of this matter keeps it


@dataclass(frozen=True)
class MatterContents:
    """What a matter holds, read before it is destroyed."""

    documents: list[MatterDocument]
    conversations: list[int]
    extraction_runs: list[int]

    @property
    def going(self) -> list[MatterDocument]:
        """The documents a purge removes: those no other matter holds."""
        return [d for d in self.documents if not d.shared]

    def words(self, name: str) -> str:
        """What destroying the matter takes, as the CLI and the window ask about it."""
        kept = len(self.documents) - len(self.going)
        return (
            f"matter {name!r}: {len(self.going)} document(s), {len(self.conversations)} conversation(s) and "
            f"{len(self.extraction_runs)} extraction table(s)"
            + (f" ({kept} document(s) another matter holds stay)" if kept else "")
        )


def valid_date(text: str | None) -> str | None:
    """A retention date as stored (YYYY-MM-DD); None or "" for none."""
    if text is None or not text.strip():
        return None
    try:
        return datetime.date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise FolioError(f"a retention date is a date such as 2031-12-31, not {text!r}") from None


def valid_name(name: str) -> str:
    name = " ".join(name.split())
    if not name:
        raise FolioError("a matter needs a name")
    if len(name) > 200:
        raise FolioError("a matter's name can be at most 200 characters")
    return name


class Matters:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- reading --------------------------------------------------------------------------------
    def all(self) -> list[Matter]:
        rows = self.db.execute(f"SELECT {_COLUMNS} FROM matters ORDER BY name COLLATE NOCASE").fetchall()
        return [Matter.from_tuple(r) for r in rows]

    def find(self, name: str) -> Matter | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM matters WHERE name = ?", [" ".join(name.split())]).fetchone()
        return Matter.from_tuple(row) if row else None

    def get(self, name: str) -> Matter:
        found = self.find(name)
        if found is None:
            raise NotFound(f"no matter named {name!r} (see: folio matter list)")
        return found

    def by_id(self, matter_id: int) -> Matter:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM matters WHERE id = ?", [matter_id]).fetchone()
        if row is None:
            raise NotFound(f"no matter with id {matter_id}")
        return Matter.from_tuple(row)

    def unfiled(self) -> Matter:
        """The "Unfiled" matter, made again if a purge removed it."""
        found = self.find(UNFILED)
        if found is not None:
            return found
        with self.db.atomic():
            insert_row(
                self.db,
                "matters",
                {"name": UNFILED, "description": "Documents and work that belong to no other matter",
                 "opened_at": now_iso()},
            )  # fmt: skip
        return self.get(UNFILED)

    def counts(self, matter_id: int) -> MatterCounts:
        one = self.db.execute(
            "SELECT (SELECT count(*) FROM matter_documents WHERE matter_id = :m), "
            "(SELECT count(*) FROM conversations WHERE matter_id = :m), "
            "(SELECT count(*) FROM extraction_runs WHERE matter_id = :m)",
            {"m": matter_id},
        ).fetchone()
        return MatterCounts(int(one[0]), int(one[1]), int(one[2]))

    def seen(self, matter_id: int) -> MattersSeen:
        count, last = self.db.execute(
            "SELECT count(*), coalesce(max(rowid), 0) FROM matter_documents WHERE matter_id = ?", [matter_id]
        ).fetchone()
        return MattersSeen(tuple(self.all()), matter_id, int(count), int(last))

    def holds(self, matter_id: int, document_id: int) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM matter_documents WHERE matter_id = ? AND document_id = ?", [matter_id, document_id]
        ).fetchone()
        return row is not None

    def document_ids(self, matter_id: int) -> list[int]:
        rows = self.db.execute(
            "SELECT document_id FROM matter_documents WHERE matter_id = ? ORDER BY document_id", [matter_id]
        ).fetchall()
        return [int(r[0]) for r in rows]

    def of_documents(self, document_ids: list[int]) -> dict[int, set[int]]:
        """Each document id -> the ids of the matters holding it (an empty set: none)."""
        held: dict[int, set[int]] = {d: set() for d in document_ids}
        if not document_ids:
            return held
        marks = ",".join("?" * len(document_ids))
        for doc_id, matter_id in self.db.execute(
            f"SELECT document_id, matter_id FROM matter_documents WHERE document_id IN ({marks})", document_ids
        ):
            held[int(doc_id)].add(int(matter_id))
        return held

    def common(self, document_ids: list[int], prefer: int | None = None) -> int | None:
        """A matter holding every one of the documents: `prefer` when it does, else the oldest such
        matter; None when no one matter holds them all."""
        held = self.of_documents(document_ids)
        sets = list(held.values())
        if not sets:
            return prefer
        shared = set.intersection(*sets)
        if prefer is not None and prefer in shared:
            return prefer
        return min(shared) if shared else None

    def one_for(self, document_ids: list[int], prefer: int | None = None) -> int:
        """The matter a question (or a table) about these documents belongs to: one matter must hold
        them all, else a one-line refusal naming the matters. Documents in no matter go to "Unfiled"."""
        held = self.of_documents(document_ids)
        if not held:
            return prefer if prefer is not None else self.unfiled().id
        if all(not m for m in held.values()):
            unfiled = self.unfiled().id
            for doc_id in held:
                self.link(unfiled, doc_id)
            return unfiled
        found = self.common(document_ids, prefer)
        if found is not None:
            return found
        names = sorted({self.by_id(m).name for ms in held.values() for m in ms})
        shown = ", ".join(repr(n) for n in names[:4]) + (" ..." if len(names) > 4 else "")
        raise FolioError(
            f"these documents are in different matters ({shown}): a question takes documents of one matter"
        )

    def contents(self, matter_id: int) -> MatterContents:
        docs = self.db.execute(
            "SELECT d.id, d.sha256, d.title, EXISTS (SELECT 1 FROM matter_documents o "
            "WHERE o.document_id = d.id AND o.matter_id != :m) "
            "FROM matter_documents md JOIN documents d ON d.id = md.document_id WHERE md.matter_id = :m ORDER BY d.id",
            {"m": matter_id},
        ).fetchall()
        conversations = self.db.execute("SELECT id FROM conversations WHERE matter_id = ? ORDER BY id", [matter_id])
        runs = self.db.execute("SELECT id FROM extraction_runs WHERE matter_id = ? ORDER BY id", [matter_id])
        return MatterContents(
            [MatterDocument(int(r[0]), str(r[1]), str(r[2]), bool(r[3])) for r in docs],
            [int(r[0]) for r in conversations],
            [int(r[0]) for r in runs],
        )

    # -- writing (each call is one transaction, or joins the caller's) ----------------------------
    def create(self, name: str, *, number: str = "", description: str = "", retain_until: str | None = None) -> Matter:
        name = valid_name(name)
        if self.find(name) is not None:
            raise FolioError(f"a matter named {name!r} already exists")
        with self.db.atomic():
            matter_id = insert_row(
                self.db,
                "matters",
                {
                    "name": name,
                    "number": number.strip(),
                    "description": description.strip(),
                    "opened_at": now_iso(),
                    "retain_until": valid_date(retain_until),
                },
            )
        return self.by_id(matter_id)

    def rename(self, matter: Matter, new_name: str) -> Matter:
        new_name = valid_name(new_name)
        other = self.find(new_name)
        if other is not None and other.id != matter.id:
            raise FolioError(f"a matter named {new_name!r} already exists")
        with self.db.atomic():
            self.db.execute("UPDATE matters SET name = ? WHERE id = ?", [new_name, matter.id])
        return self.by_id(matter.id)

    def set_details(self, matter: Matter, *, number: str, retain_until: str | None) -> Matter:
        with self.db.atomic():
            self.db.execute(
                "UPDATE matters SET number = ?, retain_until = ? WHERE id = ?",
                [number.strip(), valid_date(retain_until), matter.id],
            )
        return self.by_id(matter.id)

    def set_closed(self, matter: Matter, closed: bool) -> Matter:
        with self.db.atomic():
            self.db.execute("UPDATE matters SET closed = ? WHERE id = ?", [int(closed), matter.id])
        return self.by_id(matter.id)

    def link(self, matter_id: int, document_id: int) -> bool:
        """Put a document in a matter (no copy: a link). True when it was not there yet."""
        with self.db.atomic():
            cursor = self.db.execute(
                "INSERT OR IGNORE INTO matter_documents (matter_id, document_id, added_at) VALUES (?, ?, ?)",
                [matter_id, document_id, now_iso()],
            )
        return bool(cursor.rowcount)

    def delete_contents(self, matter_id: int, contents: MatterContents) -> None:
        """The matter's own conversations (messages, their index entries and kept answer parts go with
        them) and extraction runs (cells, reviews and the playbook reviews made on them go with them),
        its links, and the matter itself. The documents only it held are purged before this by the
        caller, in the same transaction (their check runs go with them; their redaction logs stay,
        unlinked, as a record that holds no text), which then rewrites the search indexes
        (app/store/purge.py optimize_indexes)."""
        for conversation_id in contents.conversations:
            self.db.execute("DELETE FROM conversations WHERE id = ?", [conversation_id])
        for run_id in contents.extraction_runs:
            self.db.execute("DELETE FROM extraction_runs WHERE id = ?", [run_id])
        # A playbook review names its matter without ON DELETE (m039): each went with its run above, and
        # any left (none is, by store_review) would make the matter's delete below fail.
        self.db.execute("DELETE FROM playbook_reviews WHERE matter_id = ?", [matter_id])
        self.db.execute("DELETE FROM matter_documents WHERE matter_id = ?", [matter_id])
        self.db.execute("DELETE FROM matters WHERE id = ?", [matter_id])


# -- opened, changed, closed: each with its audit entry, in one transaction ------------------------
def record_matter(audit: AuditLog, settings: Settings, matter: Matter, event: str, **details: object) -> None:
    audit.record(
        "matter",
        documents=[],
        model_sha256=None,
        settings=audited_settings(settings),
        details={"event": event, "matter": matter.name, "matter_number": matter.number, **details},
        matter_id=matter.id,
    )


def open_matter(
    audit: AuditLog,
    settings: Settings,
    name: str,
    *,
    number: str = "",
    description: str = "",
    retain_until: str | None = None,
) -> Matter:
    matters = Matters(audit.db)
    with audit.db.atomic():
        matter = matters.create(name, number=number, description=description, retain_until=retain_until)
        record_matter(audit, settings, matter, "opened", retain_until=matter.retain_until)
    audit.sync_head()
    return matter


def change_matter(
    audit: AuditLog, settings: Settings, matter: Matter, *, name: str, number: str, retain_until: str | None
) -> Matter:
    """Rename a matter, or change its number or retention date; each change is one audit entry."""
    matters = Matters(audit.db)
    with audit.db.atomic():
        new = matters.rename(matter, name)
        if new.name != matter.name:
            record_matter(audit, settings, new, "renamed", old_name=matter.name)
        if number.strip() != matter.number or valid_date(retain_until) != matter.retain_until:
            new = matters.set_details(new, number=number, retain_until=retain_until)
            changed = {"old_number": matter.number, "old_retain_until": matter.retain_until}
            record_matter(audit, settings, new, "changed", retain_until=new.retain_until, **changed)
    audit.sync_head()
    return new


def close_matter(audit: AuditLog, settings: Settings, matter: Matter, *, closed: bool = True) -> Matter:
    with audit.db.atomic():
        matter = Matters(audit.db).set_closed(matter, closed)
        record_matter(audit, settings, matter, "closed" if closed else "reopened")
    audit.sync_head()
    return matter
