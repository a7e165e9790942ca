"""The document library: add (one transaction, sha256-deduplicated, audited), list, resolve, read back."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.errors import LibraryGone, NotFound
from app.store.db import insert_row
from app.store.matters import Matters
from ingest.document import OcrWord, VideoInfo
from ingest.image_size import png_size
from ingest.limits import vision_tokens
from ingest.ocr import OcrOptions

# Every column that names a file in blobs/, with the column that says whose document it is. The
# purge, the orphan sweep and the tests' orphan checks all read this one list, so a new blob column
# added here is counted everywhere.
BLOB_COLUMNS = (
    ("pages", "image_blob", "document_id"),
    ("segments", "image_blob", "document_id"),
    ("documents", "contact_sheet_blob", "id"),
    ("documents", "original_blob", "id"),
)
# The name of every blob some row holds (one column, no duplicates).
NAMED_BLOBS_SQL = " UNION ".join(f"SELECT {col} FROM {table} WHERE {col} IS NOT NULL" for table, col, _ in BLOB_COLUMNS)
# The blobs one document's rows hold (parameter :d, the document's id).
DOCUMENT_BLOBS_SQL = " UNION ".join(
    f"SELECT {col} FROM {table} WHERE {owner} = :d AND {col} IS NOT NULL" for table, col, owner in BLOB_COLUMNS
)
# Whether any row holds the blob :name.
_REFERENCED = " UNION ALL ".join(f"SELECT {col} FROM {table} WHERE {col} = :name" for table, col, _ in BLOB_COLUMNS) + (
    " LIMIT 1"
)

if TYPE_CHECKING:
    from sqlite_utils import Database

    from app.store.audit import DocumentAudit
    from ingest.document import Attachment, Document, Segment
    from ingest.limits import Limits
    from ingest.progress import ProgressFn

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


_DOCUMENT_COLUMNS = ", ".join(f"d.{name}" for name in DocumentRow.__dataclass_fields__)
LISTING_PAGE = 100  # documents per page of the window's list: a screenful or a few, never the library


def _document(row: tuple[Any, ...]) -> DocumentRow:
    return DocumentRow(*row)


def _first_email(document: str) -> str:
    """SQL for the e-mail an attachment is listed under: the first (lowest id) that holds it."""
    return f"(SELECT min(b.email_id) FROM attachments b WHERE b.document_id = {document})"


@dataclass(frozen=True)
class ListedDocument:
    """A document as the window lists it; an e-mail's attachment with its number, under its e-mail."""

    document: DocumentRow
    attachment: int | None = None


@dataclass(frozen=True)
class AddResult:
    document: DocumentRow
    created: bool  # False when the same content was already in the library
    linked: bool = False  # already in the library, and now in one more matter (a link, no copy)


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
    words: tuple[OcrWord, ...] = ()  # OCR text: each word with its box (page units) and line


@dataclass(frozen=True)
class StoredAttachment:
    """One attachment of an e-mail: its number as cited ([attachment 1, p. 2]), its file name, and
    the document read from it (None when Folio could not read it; `note` says why)."""

    email_id: int
    position: int
    name: str
    document_id: int | None
    note: str


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
    def __init__(
        self,
        db: Database,
        blobs_dir: Path,
        *,
        audit: DocumentAudit,
        ocr: OcrOptions | None = None,
        resume_dir: Path | None = None,
        matter_id: int | None = None,
    ) -> None:
        self._written: list[str] = []  # blobs the add in progress wrote (taken back if it fails)
        self._journal = Path()  # the add in progress notes each blob here before writing it
        self.db = db
        self.blobs_dir = blobs_dir
        self.audit = audit  # every add goes into the audit log, from the CLI and the window alike
        self.ocr = ocr or OcrOptions()  # how scanned pages of files added from here are read
        # Where a scanned PDF's pages are kept while it is read, so an interrupted add resumes.
        self.resume_dir = resume_dir
        # The matter every document added from here is put in (None: "Unfiled"); a document already
        # in the library is linked to it, never stored a second time.
        self._matter_id = matter_id

    @property
    def matter_id(self) -> int:
        if self._matter_id is None:
            self._matter_id = Matters(self.db).unfiled().id
        return self._matter_id

    # -- adding ---------------------------------------------------------------------------------
    def add(
        self,
        path: str | Path,
        *,
        password: str | None = None,
        limits: Limits | None = None,
        load: Callable[..., Document] | None = None,  # None: ingest.load here; the window reads in a child process
        progress: ProgressFn | None = None,
    ) -> AddResult:
        # Imported here: reading files (sniffing, OCR engines, the page memo) is for adding only, and
        # `folio list` and the other light commands start faster without it.
        from ingest.load import file_sha256
        from ingest.load import load as ingest_load
        from ingest.page_memo import forget

        source = Path(path).expanduser().resolve()
        if source.is_file():
            existing = self._by_sha(file_sha256(source))
            if existing is not None:
                linked = self._remember_source(existing, source)
                return AddResult(existing, created=False, linked=linked)
        document = (load or ingest_load)(
            source, password=password, limits=limits, ocr=self.ocr, progress=progress, resume_dir=self.resume_dir
        )
        result = self.store(document)
        if self.resume_dir is not None:
            forget(self.resume_dir, document.sha256)  # stored: the pages kept for a resume are done with
        return result

    def store(self, document: Document) -> AddResult:
        """Store a document (and an e-mail's attachments, each a document linked to it) in one transaction."""
        existing = self._by_sha(document.sha256)
        if existing is not None:
            linked = self._remember_source(existing, Path(document.source_path))
            return AddResult(existing, created=False, linked=linked)
        # Blobs are content-addressed and written first: a row pointing at a missing blob would be a
        # broken document. Those this add wrote are taken back if it fails (a full disk, a locked
        # library), so a failed add leaves no files behind either.
        if not self.blobs_dir.parent.is_dir():  # the data folder was removed: do not make a new one
            raise LibraryGone(
                f"the library at {self.blobs_dir.parent} was removed while Folio was running: nothing more can be "
                "saved there; restore the folder from a backup, or start again with an empty library"
            )
        with self.writing_blobs():
            prepared = self._prepare(document, original=None)
            with self.db.atomic():
                doc_id = self._insert(prepared)
        self.audit.log.sync_head()
        return AddResult(self.get(doc_id), created=True)

    def _prepare(self, document: Document, original: str | None) -> _Prepared:
        write = self._write_blob
        attachments: list[tuple[Attachment, _Prepared | None]] = []
        for attachment in document.attachments:
            part = attachment.document
            if part is None or self._by_sha(part.sha256) is not None:
                attachments.append((attachment, None))
            else:
                attachments.append((attachment, self._prepare(part, write(attachment.data, _suffix(attachment.name)))))
        return _Prepared(
            document,
            [write(s.image_png) if s.image_png else None for s in document.segments],
            [write(p.image_png) if p.image_png else None for p in document.pages],
            write(document.contact_sheet_png) if document.contact_sheet_png else None,
            original,
            attachments,
        )

    def _insert(self, prepared: _Prepared) -> int:
        document = prepared.document
        now = now_iso()
        tokens = sum(len(s.text) for s in document.segments) // CHARS_PER_TOKEN + sum(
            _png_tokens(s.image_png) for s in document.segments if s.image_png
        )
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
                "contact_sheet_blob": prepared.sheet_blob,
                "original_blob": prepared.original,
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
            for p, blob in zip(document.pages, prepared.page_blobs, strict=True)
        )
        self.db.table("segments").insert_all(
            _segment_row(doc_id, seq, segment, blob)
            for seq, (segment, blob) in enumerate(zip(document.segments, prepared.segment_blobs, strict=True))
        )
        if prepared.original is None:  # an attachment's only copy is its blob, not a path outside
            self.db.table("document_sources").insert(
                {"document_id": doc_id, "path": document.source_path, "added_at": now}
            )
        # Every document stored is audited in the same transaction: an e-mail and each attachment.
        self._link(doc_id)
        row = self.get(doc_id)
        self.audit.added(row.sha256, _audit_details(row, document.source_path, created=True), matter_id=self.matter_id)
        for position, (attachment, part) in enumerate(prepared.attachments, start=1):
            part_id = None
            if attachment.document is not None:
                # Already in the library (added before, or attached twice to this e-mail): linked, not copied.
                same = self._by_sha(attachment.document.sha256)
                part_id = same.id if same is not None else self._insert(part) if part is not None else None
                if part_id is not None:
                    self._link(part_id)
            self.db.table("attachments").insert(
                {
                    "email_id": doc_id,
                    "position": position,
                    "name": attachment.name,
                    "document_id": part_id,
                    "note": attachment.skipped,
                }
            )
        return doc_id

    @contextlib.contextmanager
    def writing_blobs(self) -> Iterator[Callable[[bytes, str], str]]:
        """Write files into the blob folder (content-addressed, each noted in a journal first): those the
        block wrote are taken back if it fails, so a failed add or import leaves no files behind."""
        self._written = []
        self._journal = self.pending_dir / f"{os.getpid()}-{uuid.uuid4().hex}.txt"
        try:
            yield self._write_blob
        except BaseException:
            self._take_back(self._written)
            raise
        finally:
            with contextlib.suppress(OSError):
                self._journal.unlink(missing_ok=True)

    def _write_blob(self, data: bytes, suffix: str = ".png") -> str:
        from common.files import atomic_write_bytes, private_dir

        digest = hashlib.sha256(data).hexdigest()
        name = f"{digest[:2]}/{digest}{suffix}"
        target = self.blobs_dir / name
        if not target.exists():
            # Noted before it is written: an add killed before its commit leaves the name behind,
            # and the next start deletes the file unless a row names it (sweep_pending).
            private_dir(self._journal.parent)
            fd = os.open(self._journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as journal:
                journal.write(name + "\n")
            atomic_write_bytes(target, data)
            self._written.append(name)
        return name

    @property
    def pending_dir(self) -> Path:
        return self.blobs_dir.parent / "pending-blobs"

    def sweep_pending(self) -> int:
        """Delete page images that adds killed before their commit wrote (their journals name them),
        unless a row names one; journals of adds still running are left alone. Returns files deleted."""
        import time

        removed = 0
        for journal in sorted(self.pending_dir.glob("*.txt")) if self.pending_dir.is_dir() else []:
            pid = int(journal.name.split("-", 1)[0]) if journal.name.split("-", 1)[0].isdigit() else 0
            try:
                young = time.time() - journal.stat().st_mtime < 86400
                names = journal.read_text(encoding="utf-8").split()
            except OSError:
                continue
            if pid and young and _alive(pid):
                continue
            for name in names:
                if self.db.execute(_REFERENCED, {"name": name}).fetchone() is None:
                    with contextlib.suppress(OSError):
                        (self.blobs_dir / name).unlink()
                        removed += 1
            with contextlib.suppress(OSError):  # a read-only disk: tried again at the next start
                journal.unlink(missing_ok=True)
        return removed

    def _take_back(self, names: list[str]) -> None:
        """Delete blobs a failed add wrote, unless a row names one (another process stored the same
        page meanwhile). When the library cannot even be read, they stay: an unused file is harmless."""
        for name in names:
            try:
                if self.db.execute(_REFERENCED, {"name": name}).fetchone() is None:
                    (self.blobs_dir / name).unlink(missing_ok=True)
            except (OSError, sqlite3.Error):
                continue

    def _remember_source(self, doc: DocumentRow, source: Path) -> bool:
        """The same content from another path, or into another matter: remembered (and audited) once per
        path and matter. The document is linked to the matter, not copied."""
        with self.db.atomic():
            inserted = self.db.execute(
                "INSERT OR IGNORE INTO document_sources(document_id, path, added_at) VALUES (?, ?, ?)",
                [doc.id, str(source), now_iso()],
            ).rowcount
            linked = self._link(doc.id)
            if inserted or linked:
                self.audit.added(doc.sha256, _audit_details(doc, str(source), created=False), matter_id=self.matter_id)
        if inserted or linked:
            self.audit.log.sync_head()
        return linked

    def _link(self, doc_id: int) -> bool:
        """Put the document in this library's matter, an e-mail with its attachments (a question about
        an e-mail reads them too). True when the document was not in the matter yet."""
        matters = Matters(self.db)
        linked = matters.link(self.matter_id, doc_id)
        if linked:
            for attachment in self.attachments(doc_id):
                if attachment.document_id is not None and attachment.document_id != doc_id:
                    self._link(attachment.document_id)
        return linked

    # -- reading --------------------------------------------------------------------------------
    def _by_sha(self, sha256: str) -> DocumentRow | None:
        rows = list(self.db.table("documents").rows_where("sha256 = ?", [sha256]))
        return DocumentRow.from_row(rows[0]) if rows else None

    def get(self, doc_id: int) -> DocumentRow:
        rows = list(self.db.table("documents").rows_where("id = ?", [doc_id]))
        if not rows:
            raise NotFound(f"no document with id {doc_id} in the library")
        return DocumentRow.from_row(rows[0])

    def all(self, matter_id: int | None = None) -> list[DocumentRow]:
        """Every document, or those of one matter."""
        if matter_id is None:
            return [DocumentRow.from_row(r) for r in self.db.table("documents").rows_where(order_by="id")]
        where = "id IN (SELECT document_id FROM matter_documents WHERE matter_id = ?)"
        rows = self.db.table("documents").rows_where(where, [matter_id], order_by="id")
        return [DocumentRow.from_row(r) for r in rows]

    def listing(
        self, matter_id: int, *, after: int = 0, limit: int | None = LISTING_PAGE, through: int | None = None
    ) -> list[ListedDocument]:
        """One page of a matter's documents as the window lists them: by id from after `after`, `limit`
        of them (or every one up to where document `through` is listed: nothing when the matter does not
        hold it), each e-mail followed by its attachments in the matter. An attachment sits under the
        first e-mail that lists it when that e-mail is in the matter, and stands on its own otherwise.
        A page is a few indexed queries whatever the library's size, so the window draws the first rows
        of a 10,000-document matter at once and fetches more as it scrolls."""
        if through is not None:
            through = self._listed_at(matter_id, through)
            if through is None:
                return []
        bounds = "AND md.document_id <= :through" if through is not None else ""
        top = self.db.execute(
            f"""
            SELECT {_DOCUMENT_COLUMNS} FROM matter_documents md JOIN documents d ON d.id = md.document_id
            WHERE md.matter_id = :m AND md.document_id > :after {bounds} AND NOT EXISTS (
                SELECT 1 FROM attachments a JOIN matter_documents e ON e.document_id = a.email_id AND e.matter_id = :m
                WHERE a.document_id = d.id AND a.email_id != d.id AND a.email_id = {_first_email("d.id")})
            ORDER BY md.document_id LIMIT :limit
            """,
            {"m": matter_id, "after": after, "through": through, "limit": -1 if limit is None else limit},
        ).fetchall()
        documents = [_document(row) for row in top]
        if not documents:
            return []
        marks = ",".join("?" * len(documents))
        nested = self.db.execute(
            f"""
            SELECT a.email_id, min(a.position) AS position, {_DOCUMENT_COLUMNS} FROM attachments a
            JOIN documents d ON d.id = a.document_id
            JOIN matter_documents md ON md.document_id = d.id AND md.matter_id = ?
            WHERE a.email_id IN ({marks}) AND a.document_id != a.email_id
                AND a.email_id = {_first_email("a.document_id")}
            GROUP BY a.email_id, a.document_id ORDER BY a.email_id, position
            """,
            [matter_id, *(d.id for d in documents)],
        ).fetchall()
        under: dict[int, list[ListedDocument]] = {}
        for row in nested:
            under.setdefault(int(row[0]), []).append(ListedDocument(_document(row[2:]), int(row[1])))
        out: list[ListedDocument] = []
        for doc in documents:
            out += [ListedDocument(doc), *under.get(doc.id, [])]
        return out

    def _listed_at(self, matter_id: int, document_id: int) -> int | None:
        """The document a matter's list shows this one under (its e-mail, or itself); None when the
        matter does not hold it."""
        if not Matters(self.db).holds(matter_id, document_id):
            return None
        row = self.db.execute(
            f"""
            SELECT a.email_id FROM attachments a
            JOIN matter_documents e ON e.document_id = a.email_id AND e.matter_id = ?
            WHERE a.document_id = ? AND a.email_id != a.document_id AND a.email_id = {_first_email("a.document_id")}
            """,
            [matter_id, document_id],
        ).fetchone()
        return int(row[0]) if row is not None else document_id

    def attachment_places(self) -> dict[int, tuple[int, int]]:
        """Every document that came in as an e-mail attachment -> (e-mail id, attachment number)."""
        rows = self.db.execute(
            "SELECT document_id, email_id, position FROM attachments WHERE document_id IS NOT NULL "
            "ORDER BY email_id DESC, position DESC"
        ).fetchall()
        return {int(r[0]): (int(r[1]), int(r[2])) for r in rows}

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
            from ingest.load import file_sha256  # imported here: only a reference by path reads a file

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
            "SELECT seq, kind, page, label, bbox, t_seconds, role, text, image_blob, words "
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
                words=_words(r[9]),
            )
            for r in rows
        ]

    # -- e-mails and their attachments -------------------------------------------------------------
    def attachments(self, email_id: int) -> list[StoredAttachment]:
        return self._attachment_rows("email_id = ? ORDER BY position", email_id)

    def attached_to(self, doc_id: int) -> list[StoredAttachment]:
        """Where a document came in as an attachment (usually one e-mail; the same file can come twice)."""
        return self._attachment_rows("document_id = ? ORDER BY email_id, position", doc_id)

    def _attachment_rows(self, where: str, value: int) -> list[StoredAttachment]:
        rows = self.db.execute(
            f"SELECT email_id, position, name, document_id, note FROM attachments WHERE {where}", [value]
        ).fetchall()
        return [StoredAttachment(int(r[0]), int(r[1]), str(r[2]), r[3], str(r[4])) for r in rows]

    def added_from(self, doc_id: int) -> list[Path]:
        """Every path the document was added from, the newest first."""
        rows = self.db.execute(
            "SELECT path FROM document_sources WHERE document_id = ? ORDER BY id DESC", [doc_id]
        ).fetchall()
        return [Path(r[0]) for r in rows]

    def original_path(self, doc_id: int) -> Path | None:
        """The library's own copy of a document's file (e-mail attachments), or None."""
        row = self.db.execute("SELECT original_blob FROM documents WHERE id = ?", [doc_id]).fetchone()
        return self.blob_path(row[0]) if row and row[0] else None

    # -- pictures, for the viewer and the engine -------------------------------------------------
    def blob_path(self, name: str) -> Path:
        return self.blobs_dir / name

    def trash_waiting(self) -> bool:
        """Whether a purge queued page images it did not get to delete (interrupted after its commit)."""
        return self.db.execute("SELECT 1 FROM blob_trash LIMIT 1").fetchone() is not None

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
        """Printed label -> page number; in a flowing document clause number -> paragraph (the first
        paragraph carrying it, when a document numbers two lists the same way)."""
        rows = self.db.execute(
            "SELECT number, label FROM pages WHERE document_id = ? AND label != '' ORDER BY number DESC", [doc_id]
        ).fetchall()
        return {str(label): int(number) for number, label in rows}

    def clause_paragraphs(self, doc_id: int, first: int) -> list[int]:
        """A clause of a flowing document: its numbered paragraph, the paragraphs of its sub-clauses
        ('12.3.1', '12.3(a)') and the unnumbered ones among them, up to the next clause that is not one
        of its own."""
        rows = self.db.execute(
            "SELECT number, label FROM pages WHERE document_id = ? AND number >= ? ORDER BY number", [doc_id, first]
        ).fetchall()
        if not rows or int(rows[0][0]) != first:
            return []
        head = str(rows[0][1])
        out = [first]
        for number, label in rows[1:]:
            label = str(label)
            if label and not (head and label.startswith(head) and label[len(head) : len(head) + 1] in (".", "(")):
                break
            out.append(int(number))
        return out

    def page_text(self, doc_id: int, page: int) -> str:
        rows = self.db.execute(
            "SELECT text FROM segments WHERE document_id = ? AND page = ? ORDER BY seq", [doc_id, page]
        ).fetchall()
        return "\n".join(r[0] for r in rows)


@dataclass(frozen=True)
class _Prepared:
    """A document with its pictures (and an attachment's original bytes) already written as blobs."""

    document: Document
    segment_blobs: list[str | None]
    page_blobs: list[str | None]
    sheet_blob: str | None
    original: str | None  # an e-mail attachment's own bytes, kept because no file outside holds them
    attachments: list[tuple[Attachment, _Prepared | None]]  # None: not read, or already in the library


def _suffix(name: str) -> str:
    """A safe file suffix for a stored attachment ('.pdf'), so the blob can be opened by type."""
    suffix = Path(name).suffix.lower()
    return suffix if len(suffix) <= 8 and suffix[1:].isalnum() else ".bin"


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


def _words(raw: str | None) -> tuple[OcrWord, ...]:
    if not raw:
        return ()
    return tuple((float(w[0]), float(w[1]), float(w[2]), float(w[3]), str(w[4]), int(w[5])) for w in json.loads(raw))


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
        "words": json.dumps(
            [[round(w[0], 1), round(w[1], 1), round(w[2], 1), round(w[3], 1), w[4], w[5]] for w in segment.words]
        )
        if segment.words
        else None,
    }


def _alive(pid: int) -> bool:
    import psutil

    return bool(psutil.pid_exists(pid))
