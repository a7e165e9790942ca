"""A matter as one zip archive, to carry it to another (air-gapped) machine: `folio matter export|import`.

The archive holds `matter.json` (the matter; its documents' rows with pages, segments, sources,
attachments, check runs with their findings and redaction logs; its conversations with messages,
claims and the kept answers of questions read in parts; its extraction runs with cells, reviews and
the playbook reviews made on them, with their findings and decisions; documents named by sha256, never
by this library's ids), `audit.jsonl` (the matter's audit entries, for the record),
`blobs/...` (page images, contact sheets, stored originals) and `originals/<sha256>` (each document's
file, read from where it was added, when it is still there and unchanged), and `manifest.json`: the
sha256 of every other entry.

Import reads the whole archive and checks every entry against the manifest (nothing missing, nothing
extra, every checksum) before it writes anything; then the files go into the content-addressed blob
folder and every row into one transaction. A document already in the library (same sha256) is only
linked to the matter, and keeps its own check runs and redaction logs: those of the archive come in
only with a document the import stores. Model snapshots are not exported: they are rebuilt.

Version 2 added check runs, redaction logs, answer parts and playbook reviews; a version 1 archive
(written before) imports as one that has none of them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.errors import FolioError
from app.store.db import insert_row
from app.store.matters import Matter, Matters

if TYPE_CHECKING:
    from sqlite_utils import Database

    from app.store.audit import AuditLog
    from app.store.library import Library

FORMAT = "folio-matter"
VERSION = 2
# Versions this code reads: a key a version 1 archive lacks reads as an empty list (see `_listed`).
READABLE = (1, 2)
_BLOB_COLUMNS = (("pages", "image_blob"), ("segments", "image_blob"))
_DOC_BLOBS = ("contact_sheet_blob", "original_blob")


class ArchiveRefused(FolioError):
    """A damaged, tampered or foreign archive: nothing was written."""


@dataclass(frozen=True)
class ArchiveSummary:
    matter: str
    documents: int
    documents_reused: int  # already in the library: linked, not stored again
    conversations: int
    extraction_runs: int
    playbook_reviews: int  # with their runs
    files: int  # blobs and originals in the archive
    sha256: str  # of the archive file


def _rows(db: Database, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor = db.execute(sql, params)
    names = [c[0] for c in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _without(row: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in keys}


def _listed(part: dict[str, Any], key: str) -> list[Any]:
    """A list an older archive may not have (version 1 had no check runs, redaction logs, answer parts
    or playbook reviews): missing means none."""
    value = part.get(key)
    return value if isinstance(value, list) else []


def _check_runs(db: Database, doc_id: int) -> list[dict[str, Any]]:
    """The document's check runs with their findings (a run belongs to its document, not to a matter)."""
    out = []
    for run in _rows(db, "SELECT * FROM check_runs WHERE document_id = ? ORDER BY id", [doc_id]):
        findings = _rows(db, "SELECT * FROM check_findings WHERE run_id = ? ORDER BY seq", [run["id"]])
        out.append(
            {"run": _without(run, "id", "document_id"), "findings": [_without(f, "id", "run_id") for f in findings]}
        )
    return out


def _playbook_reviews(
    db: Database, run_id: int, by_sha: Callable[[dict[str, Any]], dict[str, Any]]
) -> list[dict[str, Any]]:
    """The playbook reviews made on an extraction run, with their findings and reviewers' decisions. A
    review's matter is its run's (app.playbook.review.store_review), so it travels with the run."""
    out = []
    for review in _rows(db, "SELECT * FROM playbook_reviews WHERE run_id = ? ORDER BY id", [run_id]):
        rid = [review["id"]]
        out.append(
            {
                "review": by_sha(_without(review, "id", "run_id", "matter_id")),
                "findings": [_without(f, "review_id") for f in _rows(
                    db, "SELECT * FROM playbook_findings WHERE review_id = ? ORDER BY seq", rid)],
                "decisions": [_without(d, "id", "review_id") for d in _rows(
                    db, "SELECT * FROM playbook_decisions WHERE review_id = ? ORDER BY id", rid)],
            }
        )  # fmt: skip
    return out


# -- export --------------------------------------------------------------------------------------
def dump_matter(db: Database, matter: Matter) -> dict[str, Any]:
    """Everything of the matter as plain data, documents referred to by sha256."""
    sha_of = {
        int(r[0]): str(r[1])
        for r in db.execute(
            "SELECT d.id, d.sha256 FROM documents d JOIN matter_documents md ON md.document_id = d.id "
            "WHERE md.matter_id = ?",
            [matter.id],
        )
    }

    def by_sha(row: dict[str, Any], key: str = "document_id") -> dict[str, Any]:
        doc_id = row.pop(key, None)
        row["document_sha256"] = sha_of.get(doc_id) if doc_id is not None else None
        return row

    documents = []
    for doc_id in sorted(sha_of):
        doc = _rows(db, "SELECT * FROM documents WHERE id = ?", [doc_id])[0]
        documents.append(
            {
                "document": _without(doc, "id"),
                "pages": [_without(r, "id", "document_id") for r in _rows(
                    db, "SELECT * FROM pages WHERE document_id = ? ORDER BY number", [doc_id])],
                "segments": [_without(r, "id", "document_id") for r in _rows(
                    db, "SELECT * FROM segments WHERE document_id = ? ORDER BY seq", [doc_id])],
                "sources": [_without(r, "id", "document_id") for r in _rows(
                    db, "SELECT * FROM document_sources WHERE document_id = ? ORDER BY id", [doc_id])],
                "attachments": [by_sha(_without(r, "email_id")) for r in _rows(
                    db, "SELECT * FROM attachments WHERE email_id = ? ORDER BY position", [doc_id])],
                "check_runs": _check_runs(db, doc_id),
                "redactions": [_without(r, "id", "document_id") for r in _rows(
                    db, "SELECT * FROM redactions WHERE document_id = ? ORDER BY id", [doc_id])],
            }
        )  # fmt: skip
    conversations = []
    for conv in _rows(db, "SELECT * FROM conversations WHERE matter_id = ? ORDER BY id", [matter.id]):
        messages = []
        for message in _rows(db, "SELECT * FROM messages WHERE conversation_id = ? ORDER BY seq", [conv["id"]]):
            claims = _rows(db, "SELECT * FROM claims WHERE message_id = ? ORDER BY seq", [message["id"]])
            parts = _rows(db, "SELECT * FROM answer_parts WHERE message_id = ? ORDER BY seq", [message["id"]])
            messages.append(
                {
                    "message": _without(message, "id", "conversation_id"),
                    "claims": [by_sha(_without(c, "id", "message_id")) for c in claims],
                    "parts": [_without(p, "message_id") for p in parts],
                }
            )
        docs = _rows(
            db, "SELECT document_id, position FROM conversation_documents WHERE conversation_id = ?", [conv["id"]]
        )
        conversations.append(
            {
                "conversation": _without(conv, "id", "matter_id"),
                "documents": [by_sha(d) for d in docs],
                "messages": messages,
            }
        )
    runs = []
    for run in _rows(db, "SELECT * FROM extraction_runs WHERE matter_id = ? ORDER BY id", [matter.id]):
        rid = [run["id"]]
        runs.append(
            {
                "run": _without(run, "id", "matter_id"),
                "documents": [by_sha(_without(r, "run_id")) for r in _rows(
                    db, "SELECT * FROM extraction_run_documents WHERE run_id = ? ORDER BY position", rid)],
                "cells": [by_sha(_without(r, "id", "run_id")) for r in _rows(
                    db, "SELECT * FROM extraction_cells WHERE run_id = ? ORDER BY id", rid)],
                "reviews": [by_sha(_without(r, "id", "run_id")) for r in _rows(
                    db, "SELECT * FROM extraction_reviews WHERE run_id = ? ORDER BY id", rid)],
                "playbook_reviews": _playbook_reviews(db, run["id"], by_sha),
            }
        )  # fmt: skip
    audit = _rows(db, "SELECT * FROM audit_log WHERE matter_id = ? ORDER BY id", [matter.id])
    return {
        "matter": _without(dataclasses.asdict(matter), "id"),
        "documents": documents,
        "conversations": conversations,
        "extraction_runs": runs,
        "audit": audit,
    }


def blob_names(data: dict[str, Any]) -> list[str]:
    names: set[str] = set()
    for doc in data["documents"]:
        names.update(doc["document"][c] for c in _DOC_BLOBS if doc["document"].get(c))
        names.update(p["image_blob"] for p in doc["pages"] if p.get("image_blob"))
        names.update(s["image_blob"] for s in doc["segments"] if s.get("image_blob"))
    return sorted(names)


def write_archive(db: Database, matter: Matter, blobs_dir: Path, out: Path) -> tuple[bytes, ArchiveSummary]:
    """The archive's bytes (the caller writes them, atomically and audited) and what they hold."""
    import io

    data = dump_matter(db, matter)
    entries: dict[str, bytes] = {
        "matter.json": json.dumps(_without(data, "audit"), ensure_ascii=False, indent=1).encode("utf-8"),
        "audit.jsonl": "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in data["audit"]).encode("utf-8"),
    }
    for name in blob_names(data):
        entries[f"blobs/{name}"] = (blobs_dir / name).read_bytes()
    for doc in data["documents"]:
        row = doc["document"]
        if row.get("original_blob"):
            continue  # an attachment: its file is a blob already
        source = Path(row["source_path"])
        if source.is_file():
            raw = source.read_bytes()
            if hashlib.sha256(raw).hexdigest() == row["sha256"]:
                entries[f"originals/{row['sha256']}{_suffix(source.name)}"] = raw
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "matter": matter.name,
        "exported_at": now_iso(),
        "entries": {name: hashlib.sha256(raw).hexdigest() for name, raw in sorted(entries.items())},
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest, indent=1))
        for name, raw in sorted(entries.items()):
            archive.writestr(name, raw)
    payload = buffer.getvalue()
    summary = ArchiveSummary(
        matter.name,
        len(data["documents"]),
        0,
        len(data["conversations"]),
        len(data["extraction_runs"]),
        _review_count(data),
        len(entries) - 2,
        hashlib.sha256(payload).hexdigest(),
    )
    return payload, summary


def _suffix(name: str) -> str:
    suffix = Path(name).suffix.lower()
    return suffix if suffix.isascii() and 1 < len(suffix) <= 8 and suffix[1:].isalnum() else ""


# -- import --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckedArchive:
    """An archive whose every entry matched its checksum: nothing read from it is trusted before this."""

    data: dict[str, Any]
    files: dict[str, bytes]  # blobs/... and originals/... entries
    sha256: str


def read_archive(path: Path) -> CheckedArchive:
    """Read and check the whole archive; any fault is one line and nothing is written."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ArchiveRefused(f"{path.name}: cannot read it ({exc.strerror or exc})") from exc
    import io

    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            names = archive.namelist()
            if len(names) != len(set(names)):
                raise ArchiveRefused(f"{path.name}: an entry appears twice: refused, nothing was imported")
            manifest = json.loads(archive.read("manifest.json"))
            listed = manifest.get("entries") if isinstance(manifest, dict) else None
            if manifest.get("format") != FORMAT or not isinstance(listed, dict):
                raise ArchiveRefused(f"{path.name} is not a Folio matter archive")
            if manifest.get("version") not in READABLE:
                raise ArchiveRefused(f"{path.name} was written by another Folio (archive version "
                                     f"{manifest.get('version')}); update Folio")  # fmt: skip
            present = set(names) - {"manifest.json"}
            if present != set(listed):
                odd = sorted(present ^ set(listed))[0]
                raise ArchiveRefused(
                    f"{path.name} is damaged or was changed: entry {odd} is not as listed; nothing was imported"
                )
            contents: dict[str, bytes] = {}
            for name in sorted(listed):
                body = archive.read(name)
                if hashlib.sha256(body).hexdigest() != listed[name]:
                    raise ArchiveRefused(
                        f"{path.name} is damaged or was changed: {name} does not match its checksum; "
                        "nothing was imported"
                    )
                contents[name] = body
    except (zipfile.BadZipFile, KeyError, ValueError, AttributeError, EOFError) as exc:
        raise ArchiveRefused(f"{path.name} is damaged or not a Folio matter archive ({exc})") from exc
    for name, body in contents.items():
        if name.startswith("blobs/"):
            stem = Path(name).name.split(".", 1)[0]
            if hashlib.sha256(body).hexdigest() != stem:
                raise ArchiveRefused(f"{path.name}: {name} does not hold what its name says; nothing was imported")
    data = json.loads(contents.pop("matter.json"))
    contents.pop("audit.jsonl", None)
    return CheckedArchive(data, contents, hashlib.sha256(raw).hexdigest())


def load_matter(
    db: Database, checked: CheckedArchive, write_blob: Any, new_name: str | None = None
) -> tuple[Matter, int, int]:
    """Write the matter's rows; call inside a transaction, after the files are in the blob folder.
    `write_blob(bytes, suffix) -> name` stores a file (content-addressed); `new_name` imports the matter
    under another name (the archive's is taken here). Returns (matter, documents stored, documents reused)."""
    data = checked.data
    matters = Matters(db)
    meta = data["matter"]
    called = " ".join((new_name or meta["name"]).split())
    if not called:
        raise FolioError("the matter's new name is empty")
    if matters.find(called) is not None:
        how = "import it under another name with --as NAME" if new_name is None else "choose another name"
        raise FolioError(f"a matter named {called!r} already exists here; {how}")
    matter = matters.create(
        called, number=meta.get("number", ""), description=meta.get("description", ""),
        retain_until=meta.get("retain_until"),
    )  # fmt: skip
    db.execute(
        "UPDATE matters SET opened_at = ?, closed = ? WHERE id = ?",
        [meta["opened_at"], int(bool(meta.get("closed"))), matter.id],
    )
    originals = {Path(n).name.split(".", 1)[0]: n for n in checked.files if n.startswith("originals/")}
    ids: dict[str, int] = {}
    stored = reused = 0
    for doc in data["documents"]:
        row = dict(doc["document"])
        existing = db.execute("SELECT id FROM documents WHERE sha256 = ?", [row["sha256"]]).fetchone()
        if existing is not None:
            ids[row["sha256"]] = int(existing[0])
            reused += 1
            continue
        if not row.get("original_blob") and row["sha256"] in originals:
            name = originals[row["sha256"]]
            row["original_blob"] = write_blob(checked.files[name], Path(name).suffix)
        doc_id = insert_row(db, "documents", row)
        ids[row["sha256"]] = doc_id
        stored += 1
        db.table("pages").insert_all({**p, "document_id": doc_id} for p in doc["pages"])
        db.table("segments").insert_all({**s, "document_id": doc_id} for s in doc["segments"])
        db.table("document_sources").insert_all({**s, "document_id": doc_id} for s in doc["sources"])
        # Only for a document stored here: one already in the library keeps its own runs and logs.
        for check in _listed(doc, "check_runs"):
            check_id = insert_row(db, "check_runs", {**check["run"], "document_id": doc_id})
            db.table("check_findings").insert_all({**f, "run_id": check_id} for f in check["findings"])
        db.table("redactions").insert_all({**r, "document_id": doc_id} for r in _listed(doc, "redactions"))
    for doc in data["documents"]:  # attachments name documents that may come later in the list
        email_id = ids[doc["document"]["sha256"]]
        for att in doc["attachments"]:
            part = att.get("document_sha256")
            db.execute(
                "INSERT OR IGNORE INTO attachments (email_id, position, name, document_id, note) "
                "VALUES (?, ?, ?, ?, ?)",
                [email_id, att["position"], att["name"], ids.get(part) if part else None, att["note"]],
            )
    for doc_id in ids.values():
        matters.link(matter.id, doc_id)

    def doc_id_of(row: dict[str, Any]) -> dict[str, Any]:
        sha = row.pop("document_sha256", None)
        row["document_id"] = ids.get(sha) if sha else None
        return row

    for conv in data["conversations"]:
        conv_id = insert_row(db, "conversations", {**conv["conversation"], "matter_id": matter.id})
        for d in conv["documents"]:
            db.table("conversation_documents").insert({**doc_id_of(dict(d)), "conversation_id": conv_id})
        for m in conv["messages"]:
            message_id = insert_row(db, "messages", {**m["message"], "conversation_id": conv_id})
            for c in m["claims"]:
                db.table("claims").insert({**doc_id_of(dict(c)), "message_id": message_id})
            db.table("answer_parts").insert_all({**p, "message_id": message_id} for p in _listed(m, "parts"))
    for run in data["extraction_runs"]:
        run_id = insert_row(db, "extraction_runs", {**run["run"], "matter_id": matter.id})
        for table, key in (("documents", "extraction_run_documents"), ("cells", "extraction_cells"),
                           ("reviews", "extraction_reviews")):  # fmt: skip
            for r in run[table]:
                db.table(key).insert({**doc_id_of(dict(r)), "run_id": run_id})
        for review in _listed(run, "playbook_reviews"):
            review_id = insert_row(
                db, "playbook_reviews", {**doc_id_of(dict(review["review"])), "run_id": run_id, "matter_id": matter.id}
            )
            db.table("playbook_findings").insert_all({**f, "review_id": review_id} for f in review["findings"])
            db.table("playbook_decisions").insert_all({**d, "review_id": review_id} for d in review["decisions"])
    return matters.by_id(matter.id), stored, reused


def _review_count(data: dict[str, Any]) -> int:
    """The playbook reviews an archive's runs carry (none in a version 1 archive)."""
    return sum(len(_listed(run, "playbook_reviews")) for run in data["extraction_runs"])


# -- the two commands' work ----------------------------------------------------------------------
def export_matter(
    library: Library, audit: AuditLog, settings: dict[str, Any], matter: Matter, out: Path, *, overwrite: bool
) -> ArchiveSummary:
    """Write the archive atomically (refusing to replace a file unless told) and record the export."""
    from common.files import atomic_write_bytes

    if out.exists() and not overwrite:
        raise FolioError(f"{out} exists; add --force to replace it")
    payload, summary = write_archive(library.db, matter, library.blobs_dir, out)
    atomic_write_bytes(out, payload)
    audit.record(
        "export",
        documents=[],
        model_sha256=None,
        settings=settings,
        details={"kind": "matter", "matter": matter.name, "path": str(out), "sha256": summary.sha256,
                 "documents": summary.documents, "conversations": summary.conversations,
                 "extraction_runs": summary.extraction_runs, "playbook_reviews": summary.playbook_reviews},
        matter_id=matter.id,
    )  # fmt: skip
    return summary


def import_matter(
    library: Library, audit: AuditLog, settings: dict[str, Any], path: Path, new_name: str | None = None
) -> ArchiveSummary:
    """Check the whole archive, then store its files and, in one transaction, its rows and the audit entry.
    `new_name`: the matter's name here, when it is not the archive's (a matter of that name exists)."""
    checked = read_archive(path)
    db = library.db
    with library.writing_blobs() as write:
        for name in sorted(checked.files):
            if name.startswith("blobs/"):
                write(checked.files[name], Path(name).suffix)
        with db.atomic():
            matter, stored, reused = load_matter(db, checked, write, new_name)
            audit.record(
                "import",
                documents=[d["document"]["sha256"] for d in checked.data["documents"]],
                model_sha256=None,
                settings=settings,
                details={"matter": matter.name, "named_in_archive": checked.data["matter"]["name"],
                         "archive": path.name, "sha256": checked.sha256,
                         "documents_stored": stored, "documents_reused": reused,
                         "conversations": len(checked.data["conversations"]),
                         "extraction_runs": len(checked.data["extraction_runs"]),
                         "playbook_reviews": _review_count(checked.data)},
                matter_id=matter.id,
            )  # fmt: skip
    audit.sync_head()
    return ArchiveSummary(
        matter.name,
        stored,
        reused,
        len(checked.data["conversations"]),
        len(checked.data["extraction_runs"]),
        _review_count(checked.data),
        len(checked.files),
        checked.sha256,
    )
