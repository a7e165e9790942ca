"""The document library: add (one transaction, sha256-deduplicated, audited), list, resolve, read back."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.db import insert_row
from app.errors import NotFound
from ingest import Document, Limits, Segment
from ingest import load as ingest_load
from ingest.document import VideoInfo
from ingest.image_size import png_size
from ingest.limits import vision_tokens
from ingest.load import file_sha256

_REFERENCED = """
    SELECT image_blob FROM pages WHERE image_blob = :name
    UNION ALL SELECT image_blob FROM segments WHERE image_blob = :name
    UNION ALL SELECT contact_sheet_blob FROM documents WHERE contact_sheet_blob = :name
    LIMIT 1
"""

if TYPE_CHECKING:
    from sqlite_utils import Database

    from app.audit import DocumentAudit

# Rough chars-per-token for the library column; the exact count is taken when a prompt is built.
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class DocumentRow:
    id: int
    sha256: str
    kind: str
    title: str
    page_count: int
    duration_s: float | None
    token_estimate: int
    status: str
    source_path: str
    size_bytes: int
    added_at: str

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> DocumentRow:
        return cls(**{k: row[k] for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class AddResult:
    document: DocumentRow
    created: bool  # False when the same content was already in the library


@dataclass(frozen=True)
class StoredSegment:
    seq: int
    kind: str
    page: int | None
    label: str | None
    bbox: tuple[float, float, float, float] | None
    t_seconds: float | None
    role: str
    text: str
    image_blob: str | None


@dataclass(frozen=True)
class StoredPage:
    number: int
    label: str
    width: float
    height: float
    scanned: bool
    ocr: bool
    image_blob: str | None  # the cleaned page image of a scanned page (see Library.blob)


@dataclass(frozen=True)
class StoredKeyframe:
    seq: int
    t_seconds: float
    image_blob: str


class Library:
    def __init__(self, db: Database, blobs_dir: Path, *, audit: DocumentAudit) -> None:
        self.db = db
        self.blobs_dir = blobs_dir
        self.audit = audit  # every add goes into the audit log, from the CLI and the window alike

    # -- adding ---------------------------------------------------------------------------------
    def add(
        self,
        path: str | Path,
        *,
        password: str | None = None,
        limits: Limits | None = None,
        load: Callable[..., Document] = ingest_load,  # the window reads in a child process
    ) -> AddResult:
        source = Path(path).expanduser().resolve()
        if source.is_file():
            existing = self._by_sha(file_sha256(source))
            if existing is not None:
                self._remember_source(existing, source)
                return AddResult(existing, created=False)
        document = load(source, password=password, limits=limits)
        return self.store(document)

    def store(self, document: Document) -> AddResult:
        existing = self._by_sha(document.sha256)
        if existing is not None:
            self._remember_source(existing, Path(document.source_path))
            return AddResult(existing, created=False)
        # Blobs are content-addressed and written first: an orphan blob after a crash is harmless,
        # a row pointing at a missing blob is not.
        blob_names = [self._write_blob(s.image_png) if s.image_png else None for s in document.segments]
        page_blobs = [self._write_blob(p.image_png) if p.image_png else None for p in document.pages]
        sheet_blob = self._write_blob(document.contact_sheet_png) if document.contact_sheet_png else None
        tokens = sum(len(s.text) for s in document.segments) // CHARS_PER_TOKEN + sum(
            _png_tokens(s.image_png) for s in document.segments if s.image_png
        )
        now = now_iso()
        with self.db.atomic():
            doc_id = insert_row(
                self.db,
                "documents",
                {
                    "sha256": document.sha256,
                    "kind": document.kind,
                    "title": document.title,
                    "mime": document.mime,
                    "size_bytes": document.size_bytes,
                    "page_count": document.page_count,
                    "duration_s": document.duration_s,
                    "token_estimate": tokens,
                    "status": "ready",
                    "source_path": document.source_path,
                    "metadata": json.dumps(document.metadata),
                    "added_at": now,
                    "contact_sheet_blob": sheet_blob,
                },
            )
            self.db.table("pages").insert_all(
                {
                    "document_id": doc_id,
                    "number": p.number,
                    "label": p.label,
                    "width": p.width,
                    "height": p.height,
                    "scanned": int(p.scanned),
                    "ocr": int(p.ocr),
                    "image_blob": blob,
                }
                for p, blob in zip(document.pages, page_blobs, strict=True)
            )
            self.db.table("segments").insert_all(
                _segment_row(doc_id, seq, segment, blob)
                for seq, (segment, blob) in enumerate(zip(document.segments, blob_names, strict=True))
            )
            self.db.table("document_sources").insert(
                {"document_id": doc_id, "path": document.source_path, "added_at": now}
            )
            row = self.get(doc_id)
            self.audit.added(row.sha256, _audit_details(row, document.source_path, created=True))
        self.audit.log.sync_head()
        return AddResult(row, created=True)

    def _write_blob(self, data: bytes) -> str:
        from common.files import atomic_write_bytes

        digest = hashlib.sha256(data).hexdigest()
        name = f"{digest[:2]}/{digest}.png"
        target = self.blobs_dir / name
        if not target.exists():
            atomic_write_bytes(target, data)
        return name

    def _remember_source(self, doc: DocumentRow, source: Path) -> None:
        """The same content from another path: remembered (and audited) once per path."""
        with self.db.atomic():
            inserted = self.db.execute(
                "INSERT OR IGNORE INTO document_sources(document_id, path, added_at) VALUES (?, ?, ?)",
                [doc.id, str(source), now_iso()],
            ).rowcount
            if inserted:
                self.audit.added(doc.sha256, _audit_details(doc, str(source), created=False))
        if inserted:
            self.audit.log.sync_head()

    # -- reading --------------------------------------------------------------------------------
    def _by_sha(self, sha256: str) -> DocumentRow | None:
        rows = list(self.db.table("documents").rows_where("sha256 = ?", [sha256]))
        return DocumentRow.from_row(rows[0]) if rows else None

    def get(self, doc_id: int) -> DocumentRow:
        rows = list(self.db.table("documents").rows_where("id = ?", [doc_id]))
        if not rows:
            raise NotFound(f"no document with id {doc_id} in the library")
        return DocumentRow.from_row(rows[0])

    def all(self) -> list[DocumentRow]:
        return [DocumentRow.from_row(r) for r in self.db.table("documents").rows_where(order_by="id")]

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM documents").fetchone()[0])

    def resolve(self, ref: str) -> DocumentRow:
        """A document by its id or by the path it was added from."""
        ref = ref.strip()
        if ref.isdigit():
            rows = list(self.db.table("documents").rows_where("id = ?", [int(ref)]))
            if rows:
                return DocumentRow.from_row(rows[0])
        path = Path(ref).expanduser().resolve()
        if path.is_file():
            found = self._by_sha(file_sha256(path))
            if found:
                return found
            raise NotFound(f"{ref} is not in the library (add it with: folio add {ref!r})")
        row = self.db.execute(
            "SELECT document_id FROM document_sources WHERE path = ? ORDER BY id DESC LIMIT 1", [str(path)]
        ).fetchone()
        if row:
            return self.get(int(row[0]))
        raise NotFound(f"no document {ref!r} in the library (use an id from 'folio list' or a path)")

    def segments(self, doc_id: int) -> list[StoredSegment]:
        rows = self.db.execute(
            "SELECT seq, kind, page, label, bbox, t_seconds, role, text, image_blob "
            "FROM segments WHERE document_id = ? ORDER BY seq",
            [doc_id],
        ).fetchall()
        return [
            StoredSegment(
                seq=r[0],
                kind=r[1],
                page=r[2],
                label=r[3],
                bbox=_bbox(r[4]),
                t_seconds=r[5],
                role=r[6],
                text=r[7],
                image_blob=r[8],
            )
            for r in rows
        ]

    # -- pictures, for the viewer and the engine -------------------------------------------------
    def blob_path(self, name: str) -> Path:
        return self.blobs_dir / name

    def empty_trash(self) -> int:
        """Delete the image files a purge queued (`blob_trash`) that no document uses any more;
        returns how many files were deleted. A file that cannot be deleted stays queued."""
        db = self.db
        names = [str(r[0]) for r in db.execute("SELECT name FROM blob_trash ORDER BY name")]
        removed = 0
        for name in names:
            if db.execute(_REFERENCED, {"name": name}).fetchone() is None:
                path = self.blob_path(name)
                if path.exists():
                    try:
                        path.unlink()
                    except OSError:
                        continue  # kept in the queue: tried again next time
                    removed += 1
            with db.atomic():
                db.execute("DELETE FROM blob_trash WHERE name = ?", [name])
        return removed

    def blob(self, name: str) -> bytes:
        """The bytes of a stored image (PNG) by the name kept in pages/segments/documents."""
        try:
            return self.blob_path(name).read_bytes()
        except OSError as exc:
            raise NotFound(f"stored image {name} is missing from {self.blobs_dir}") from exc

    def pages(self, doc_id: int) -> list[StoredPage]:
        rows = self.db.execute(
            "SELECT number, label, width, height, scanned, ocr, image_blob FROM pages "
            "WHERE document_id = ? ORDER BY number",
            [doc_id],
        ).fetchall()
        return [StoredPage(r[0], r[1], r[2], r[3], bool(r[4]), bool(r[5]), r[6]) for r in rows]

    def page_image(self, doc_id: int, page: int) -> bytes | None:
        """The cleaned image of a scanned page as the model sees it (PNG), or None for a text page."""
        row = self.db.execute(
            "SELECT image_blob FROM pages WHERE document_id = ? AND number = ?", [doc_id, page]
        ).fetchone()
        if row is None:
            raise NotFound(f"document {doc_id} has no page {page}")
        return self.blob(row[0]) if row[0] else None

    def keyframes(self, doc_id: int) -> list[StoredKeyframe]:
        """A video's keyframes in time order; read each picture with blob(k.image_blob)."""
        rows = self.db.execute(
            "SELECT seq, t_seconds, image_blob FROM segments WHERE document_id = ? AND role = 'keyframe' "
            "AND image_blob IS NOT NULL ORDER BY t_seconds, seq",
            [doc_id],
        ).fetchall()
        return [StoredKeyframe(int(r[0]), float(r[1]), str(r[2])) for r in rows]

    def contact_sheet(self, doc_id: int) -> bytes | None:
        """A video's keyframes in one labelled grid (PNG), or None for other documents."""
        row = self.db.execute("SELECT contact_sheet_blob FROM documents WHERE id = ?", [doc_id]).fetchone()
        if row is None:
            raise NotFound(f"no document with id {doc_id} in the library")
        return self.blob(row[0]) if row[0] else None

    def video_info(self, doc_id: int) -> VideoInfo | None:
        row = self.db.execute("SELECT kind, metadata FROM documents WHERE id = ?", [doc_id]).fetchone()
        if row is None:
            raise NotFound(f"no document with id {doc_id} in the library")
        if row[0] != "video":
            return None
        meta = json.loads(row[1] or "{}")
        return VideoInfo(
            fps=float(meta.get("fps", 0)),
            width=int(meta.get("width", 0)),
            height=int(meta.get("height", 0)),
            frame_count=int(meta.get("frames", 0)),
            codec=str(meta.get("codec", "")),
        )

    def page_labels(self, doc_id: int) -> dict[str, int]:
        rows = self.db.execute("SELECT number, label FROM pages WHERE document_id = ?", [doc_id]).fetchall()
        return {str(label): int(number) for number, label in rows}

    def page_text(self, doc_id: int, page: int) -> str:
        rows = self.db.execute(
            "SELECT text FROM segments WHERE document_id = ? AND page = ? ORDER BY seq", [doc_id, page]
        ).fetchall()
        return "\n".join(r[0] for r in rows)


def _audit_details(doc: DocumentRow, source: str, *, created: bool) -> dict[str, Any]:
    return {
        "document_id": doc.id,
        "title": doc.title,
        "kind": doc.kind,
        "path": source,
        "bytes": doc.size_bytes,
        "pages": doc.page_count,
        "duration_s": doc.duration_s,
        "created": created,  # False: content already in the library, added again from another path
    }


def _png_tokens(png: bytes) -> int:
    """Vision tokens for a PNG, from the size in its header (ingest wrote it: it is a PNG)."""
    size = png_size(png[:24])
    return vision_tokens(*size) if size else 0


def _bbox(raw: str | None) -> tuple[float, float, float, float] | None:
    if not raw:
        return None
    x0, y0, x1, y1 = json.loads(raw)
    return (float(x0), float(y0), float(x1), float(y1))


def _segment_row(doc_id: int, seq: int, segment: Segment, blob: str | None) -> dict[str, Any]:
    anchor = segment.anchor
    return {
        "document_id": doc_id,
        "seq": seq,
        "kind": segment.kind,
        "page": anchor.page,
        "label": anchor.label,
        "bbox": json.dumps([round(v, 2) for v in anchor.bbox]) if anchor.bbox else None,
        "t_seconds": anchor.t_seconds,
        "role": segment.role,
        "text": segment.text,
        "image_blob": blob,
    }
