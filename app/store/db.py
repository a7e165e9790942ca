"""The one SQLite file: WAL, foreign keys on, numbered migrations recorded in the DB."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.errors import FolioError, NewerDatabase

if TYPE_CHECKING:
    from sqlite_utils import Database

MIGRATION_SET = "folio"

# Each entry is one numbered migration. Never edit a released one: add a new number. Kept in name
# order (branches that each add one merge in any order; the migrations table lists them by name).
MIGRATIONS: list[tuple[str, str]] = [
    (
        "m001_initial",
        """
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            sha256 TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            mime TEXT NOT NULL,
            size_bytes INTEGER NOT NULL,
            page_count INTEGER NOT NULL DEFAULT 0,
            duration_s REAL,
            token_estimate INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'ready',
            source_path TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            added_at TEXT NOT NULL
        );
        CREATE TABLE document_sources (
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            added_at TEXT NOT NULL,
            UNIQUE (document_id, path)
        );
        CREATE INDEX document_sources_path ON document_sources(path);
        CREATE TABLE pages (
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            number INTEGER NOT NULL,
            label TEXT NOT NULL,
            width REAL NOT NULL,
            height REAL NOT NULL,
            scanned INTEGER NOT NULL DEFAULT 0,
            image_blob TEXT,
            UNIQUE (document_id, number)
        );
        CREATE TABLE segments (
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            page INTEGER,
            label TEXT,
            bbox TEXT,
            t_seconds REAL,
            role TEXT NOT NULL DEFAULT 'body',
            text TEXT NOT NULL DEFAULT '',
            image_blob TEXT,
            UNIQUE (document_id, seq)
        );
        CREATE INDEX segments_page ON segments(document_id, page);
        CREATE VIRTUAL TABLE segments_fts USING fts5(
            text, content='segments', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER segments_ai AFTER INSERT ON segments BEGIN
            INSERT INTO segments_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER segments_ad AFTER DELETE ON segments BEGIN
            INSERT INTO segments_fts(segments_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER segments_au AFTER UPDATE ON segments BEGIN
            INSERT INTO segments_fts(segments_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO segments_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TABLE conversations (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE conversation_documents (
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, document_id)
        );
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            text TEXT NOT NULL DEFAULT '',
            thinking TEXT NOT NULL DEFAULT '',
            citations TEXT NOT NULL DEFAULT '[]',
            model TEXT,
            model_sha256 TEXT,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            cached_tokens INTEGER,
            prefill_ms REAL,
            generate_ms REAL,
            status TEXT NOT NULL DEFAULT 'complete',
            error TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (conversation_id, seq)
        );
        CREATE TABLE models (
            id INTEGER PRIMARY KEY,
            sha256 TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            path TEXT NOT NULL,
            architecture TEXT NOT NULL,
            context_length INTEGER NOT NULL,
            quantization TEXT NOT NULL,
            size_bytes INTEGER NOT NULL,
            mmproj_path TEXT,
            mmproj_sha256 TEXT,
            is_starter INTEGER NOT NULL DEFAULT 0,
            facts TEXT NOT NULL DEFAULT '{}',
            added_at TEXT NOT NULL
        );
        """,
    ),
    (
        "m002_messages_fts",
        """
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            text, content='messages', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER messages_au AFTER UPDATE OF text ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
        END;
        INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
        """,
    ),
    (
        "m003_media",
        """
        ALTER TABLE documents ADD COLUMN contact_sheet_blob TEXT;
        ALTER TABLE pages ADD COLUMN ocr INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX segments_time ON segments(document_id, t_seconds);
        """,
    ),
    (
        "m005_extraction",
        """
        CREATE TABLE extraction_runs (
            id INTEGER PRIMARY KEY,
            template_key TEXT NOT NULL,
            template_name TEXT NOT NULL,
            template_version INTEGER NOT NULL,
            template_sha256 TEXT NOT NULL,
            template_json TEXT NOT NULL,
            model TEXT NOT NULL,
            model_sha256 TEXT NOT NULL,
            settings TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL DEFAULT 'running',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX extraction_runs_lookup ON extraction_runs(template_sha256, model_sha256);
        CREATE TABLE extraction_run_documents (
            run_id INTEGER NOT NULL REFERENCES extraction_runs(id) ON DELETE CASCADE,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            PRIMARY KEY (run_id, document_id)
        );
        CREATE TABLE extraction_cells (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES extraction_runs(id) ON DELETE CASCADE,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            field_key TEXT NOT NULL,
            found INTEGER NOT NULL,
            value TEXT NOT NULL DEFAULT '',
            quote TEXT NOT NULL DEFAULT '',
            cited TEXT NOT NULL DEFAULT '',
            page INTEGER,
            label TEXT,
            t_seconds REAL,
            quote_status TEXT NOT NULL,
            quote_score REAL NOT NULL DEFAULT 0,
            flags TEXT NOT NULL DEFAULT '[]',
            raw TEXT NOT NULL DEFAULT '',
            prompt_tokens INTEGER,
            cached_tokens INTEGER,
            completion_tokens INTEGER,
            prefill_ms REAL,
            generate_ms REAL,
            created_at TEXT NOT NULL,
            UNIQUE (run_id, document_id, field_key)
        );
        """,
    ),
    (
        "m005b_audit",
        """
        CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            os_user TEXT NOT NULL,
            action TEXT NOT NULL,
            documents TEXT NOT NULL DEFAULT '[]',
            model_sha256 TEXT,
            settings TEXT NOT NULL DEFAULT '{}',
            details TEXT NOT NULL DEFAULT '{}',
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL UNIQUE
        );
        CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN
            SELECT RAISE(ABORT, 'the audit log is append-only');
        END;
        CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN
            SELECT RAISE(ABORT, 'the audit log is append-only');
        END;
        """,
    ),
    (
        "m007_recent_documents",
        """
        CREATE TABLE document_opens (
            document_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            opened_at TEXT NOT NULL
        );
        CREATE INDEX document_opens_recent ON document_opens(seq);
        """,
    ),
    (
        "m009_purge",
        """
        CREATE TABLE blob_trash (
            name TEXT PRIMARY KEY,
            queued_at TEXT NOT NULL
        );
        """,
    ),
    (
        "m013_claims",
        """
        CREATE TABLE claims (
            id INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            char_start INTEGER NOT NULL,
            char_end INTEGER NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            verdict TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            doc_index INTEGER,
            document_id INTEGER,
            page INTEGER,
            label TEXT,
            t_seconds REAL,
            passage TEXT NOT NULL DEFAULT '',
            score REAL NOT NULL DEFAULT 0,
            quote TEXT,
            quote_found INTEGER,
            checked TEXT NOT NULL DEFAULT '[]',
            missing TEXT NOT NULL DEFAULT '[]',
            cited TEXT NOT NULL DEFAULT '[]',
            citations TEXT NOT NULL DEFAULT '[]',
            UNIQUE (message_id, seq)
        );
        """,
    ),
    (
        "m016_ocr_words",
        """
        ALTER TABLE segments ADD COLUMN words TEXT;
        """,
    ),
    (
        "m016b_email_attachments",
        """
        ALTER TABLE documents ADD COLUMN original_blob TEXT;
        CREATE TABLE attachments (
            email_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            document_id INTEGER REFERENCES documents(id) ON DELETE SET NULL,
            note TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (email_id, position)
        );
        CREATE INDEX attachments_document ON attachments(document_id);
        """,
    ),
    (
        "m016c_claim_place",
        """
        ALTER TABLE claims ADD COLUMN place TEXT NOT NULL DEFAULT '';
        """,
    ),
    (
        "m017_speculative",
        """
        ALTER TABLE messages ADD COLUMN drafted_tokens INTEGER;
        ALTER TABLE messages ADD COLUMN accepted_tokens INTEGER;
        """,
    ),
    (
        # Grounded cells, the request design a run was asked with, and reviewers' decisions: stored
        # beside the model's answer (one row per decision, the latest counts), never over it.
        "m019_extraction_review",
        """
        ALTER TABLE extraction_runs ADD COLUMN design TEXT NOT NULL DEFAULT 'v1';
        ALTER TABLE extraction_cells ADD COLUMN verdict TEXT NOT NULL DEFAULT '';
        ALTER TABLE extraction_cells ADD COLUMN passage TEXT NOT NULL DEFAULT '';
        CREATE TABLE extraction_reviews (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES extraction_runs(id) ON DELETE CASCADE,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            field_key TEXT NOT NULL,
            decision TEXT NOT NULL CHECK (decision IN ('accepted', 'corrected', 'rejected', 'cleared')),
            value TEXT NOT NULL DEFAULT '',
            note TEXT NOT NULL DEFAULT '',
            reviewer TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX extraction_reviews_cell ON extraction_reviews(run_id, document_id, field_key, id);
        """,
    ),
    (
        "m020_draft_note",
        """
        ALTER TABLE messages ADD COLUMN draft_note TEXT NOT NULL DEFAULT '';
        """,
    ),
    (
        # A cell's decision (is the clause there? is the value stated?) as the model scored it: its
        # probability, the line it was judged against, how it was read, and how sure the decision is.
        "m029_cell_scores",
        """
        ALTER TABLE extraction_cells ADD COLUMN score REAL;
        ALTER TABLE extraction_cells ADD COLUMN threshold REAL;
        ALTER TABLE extraction_cells ADD COLUMN decided_by TEXT NOT NULL DEFAULT '';
        ALTER TABLE extraction_cells ADD COLUMN confidence REAL;
        """,
    ),
    (
        # Checks that need no model (app/checks): one run per document and rules (and extraction values
        # the key dates used), kept like extraction results; its findings one row each.
        "m033_checks",
        """
        CREATE TABLE check_runs (
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            fingerprint TEXT NOT NULL,
            rules TEXT NOT NULL,
            inputs_from TEXT NOT NULL DEFAULT 'document',
            problems INTEGER NOT NULL DEFAULT 0,
            elapsed_ms REAL NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        );
        CREATE INDEX check_runs_document ON check_runs(document_id, fingerprint, id);
        CREATE TABLE check_findings (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES check_runs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            section TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            problem INTEGER NOT NULL DEFAULT 0,
            text TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            page INTEGER,
            label TEXT,
            detail TEXT NOT NULL DEFAULT '{}',
            UNIQUE (run_id, seq)
        );
        """,
    ),
    (
        # The log of each redacted copy written: what kinds were removed on which pages and how many,
        # what else was taken out of the file, and what the proof checked; never the redacted words.
        # A purged document leaves its logs (they hold no text of it) without the link.
        "m034_redactions",
        """
        CREATE TABLE redactions (
            id INTEGER PRIMARY KEY,
            document_id INTEGER REFERENCES documents(id) ON DELETE SET NULL,
            source_sha256 TEXT NOT NULL,
            output_path TEXT NOT NULL,
            output_sha256 TEXT NOT NULL,
            output_bytes INTEGER NOT NULL,
            areas TEXT NOT NULL,
            removed TEXT NOT NULL,
            proof TEXT NOT NULL,
            labelled INTEGER NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX redactions_document ON redactions(document_id);
        """,
    ),
    (
        # A model's number is its models.id, given when it is registered. The starter demo model is
        # registered only when first used, so its number is reserved here, once per library: 1 in a
        # new library, its id where it is registered already, else the next free number. Listing
        # models never registers anything, and `folio models use N` means the same model every time.
        "m036_model_numbers",
        """
        CREATE TABLE model_numbers (
            role TEXT PRIMARY KEY,
            number INTEGER NOT NULL UNIQUE
        );
        INSERT INTO model_numbers (role, number) VALUES ('starter', COALESCE(
            (SELECT MIN(id) FROM models WHERE is_starter = 1),
            (SELECT COALESCE(MAX(id), 0) + 1 FROM models)
        ));
        """,
    ),
    (
        # Matters: a client matter, deal or case that documents, conversations, extraction runs and audit
        # entries belong to. A document (one copy, by sha256) may be in several matters (matter_documents).
        # Everything already in the library goes into "Unfiled", so nothing is lost or left outside one.
        # Audit entries written before this migration keep no matter: the log is append-only.
        "m037_matters",
        """
        CREATE TABLE matters (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            number TEXT NOT NULL DEFAULT '',
            description TEXT NOT NULL DEFAULT '',
            opened_at TEXT NOT NULL,
            retain_until TEXT,
            closed INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE matter_documents (
            matter_id INTEGER NOT NULL REFERENCES matters(id) ON DELETE CASCADE,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            added_at TEXT NOT NULL,
            PRIMARY KEY (matter_id, document_id)
        );
        CREATE INDEX matter_documents_document ON matter_documents(document_id);
        ALTER TABLE conversations ADD COLUMN matter_id INTEGER REFERENCES matters(id);
        ALTER TABLE extraction_runs ADD COLUMN matter_id INTEGER REFERENCES matters(id);
        ALTER TABLE audit_log ADD COLUMN matter_id INTEGER;
        CREATE INDEX conversations_matter ON conversations(matter_id);
        CREATE INDEX extraction_runs_matter ON extraction_runs(matter_id);
        INSERT INTO matters (name, description, opened_at) VALUES (
            'Unfiled', 'Documents and work that belong to no other matter',
            strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now')
        );
        INSERT INTO matter_documents (matter_id, document_id, added_at)
            SELECT (SELECT id FROM matters WHERE name = 'Unfiled'), id, added_at FROM documents;
        UPDATE conversations SET matter_id = (SELECT id FROM matters WHERE name = 'Unfiled');
        UPDATE extraction_runs SET matter_id = (SELECT id FROM matters WHERE name = 'Unfiled');
        """,
    ),
    (
        # The answer of each part of a question read in parts (app/passes), kept as it finishes under
        # the key of its exact request: the same question asked again after a crash or a stop takes the
        # parts done from here instead of asking the model again.
        "m038_answer_parts",
        """
        CREATE TABLE answer_parts (
            message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            request_key TEXT NOT NULL,
            text TEXT NOT NULL,
            thinking TEXT NOT NULL DEFAULT '',
            claims TEXT NOT NULL DEFAULT '[]',
            citations TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (message_id, seq)
        );
        CREATE INDEX answer_parts_key ON answer_parts(request_key);
        """,
    ),
    (
        # Playbook reviews (app/playbook): a document checked against a playbook's rules, on the
        # extraction run that read its fields (the review goes with that run, or with the document);
        # one finding per rule; and each reviewer's accept or reject of a finding beside it, never over it.
        "m039_playbook_reviews",
        """
        CREATE TABLE playbook_reviews (
            id INTEGER PRIMARY KEY,
            playbook_key TEXT NOT NULL,
            playbook_version INTEGER NOT NULL,
            playbook_sha256 TEXT NOT NULL,
            playbook_json TEXT NOT NULL,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            run_id INTEGER NOT NULL REFERENCES extraction_runs(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            model_sha256 TEXT NOT NULL,
            matter_id INTEGER REFERENCES matters(id),
            created_at TEXT NOT NULL
        );
        CREATE INDEX playbook_reviews_document ON playbook_reviews(document_id);
        CREATE INDEX playbook_reviews_run ON playbook_reviews(run_id);
        CREATE INDEX playbook_reviews_matter ON playbook_reviews(matter_id);
        CREATE TABLE playbook_findings (
            review_id INTEGER NOT NULL REFERENCES playbook_reviews(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            rule_key TEXT NOT NULL,
            verdict TEXT NOT NULL,
            reason TEXT NOT NULL,
            value TEXT NOT NULL DEFAULT '',
            read_value TEXT NOT NULL DEFAULT '',
            quote TEXT NOT NULL DEFAULT '',
            page INTEGER,
            label TEXT,
            grounding TEXT NOT NULL DEFAULT '',
            score REAL,
            confidence REAL,
            decided_by TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (review_id, rule_key)
        );
        CREATE TABLE playbook_decisions (
            id INTEGER PRIMARY KEY,
            review_id INTEGER NOT NULL REFERENCES playbook_reviews(id) ON DELETE CASCADE,
            rule_key TEXT NOT NULL,
            decision TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            reviewer TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX playbook_decisions_review ON playbook_decisions(review_id);
        """,
    ),
]

KNOWN = [name for name, _ in MIGRATIONS]


def _statements(script: str) -> list[str]:
    # Split on ';' at line ends, keeping trigger bodies (which end in 'END;') whole.
    statements: list[str] = []
    current: list[str] = []
    for line in script.strip().splitlines():
        current.append(line)
        stripped = line.strip()
        in_trigger = current[0].strip().upper().startswith("CREATE TRIGGER")
        if stripped.endswith(";") and (not in_trigger or stripped.upper() == "END;"):
            statements.append("\n".join(current))
            current = []
    return statements


def _load_sqlite_utils() -> None:
    """Import sqlite_utils without numpy and pandas. It imports them, when installed, only to map their
    scalar types to column types of tables it creates from values, and Folio's tables all come from the
    migrations; numpy's import was a third of the start of `folio list` (0.1 of 0.35 s). Imported
    already (the window's OCR, a test), they stay; hidden, they import as usual afterwards. The first
    call runs before any worker thread exists (opening the library), so no other import can see them
    hidden."""
    if "sqlite_utils.db" in sys.modules:
        return
    hidden = [name for name in ("numpy", "pandas") if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # `import numpy` raises ImportError
    try:
        import sqlite_utils.db  # noqa: F401
    finally:
        for name in hidden:
            if sys.modules.get(name) is None:
                del sys.modules[name]


def build_migrations() -> object:
    _load_sqlite_utils()
    from sqlite_utils.migrations import Migrations

    migrations = Migrations(MIGRATION_SET)
    for name, script in MIGRATIONS:

        def apply(db: Database, script: str = script) -> None:
            for statement in _statements(script):
                db.execute(statement)

        apply.__name__ = name
        migrations(name=name)(apply)
    return migrations


def applied_migrations(db: Database) -> list[str]:
    if not db["_sqlite_migrations"].exists():
        return []
    rows = db.execute(
        "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY id", [MIGRATION_SET]
    ).fetchall()
    return [row[0] for row in rows]


def insert_row(db: Database, table: str, row: dict[str, Any]) -> int:
    """Insert one row and return its integer primary key."""
    pk = db.table(table).insert(row).last_pk
    if pk is None:
        raise FolioError(f"database did not return an id for the new {table} row")
    return int(pk)


def data_version(db: Database) -> int:
    """A number that changes whenever another connection (another thread, `folio` in a terminal) commits
    to the database, and never for this connection's own writes: one pragma, no table read."""
    return int(db.execute("PRAGMA data_version").fetchone()[0])


def open_db(path: Path, *, migrate: bool = True) -> Database:
    import sqlite3

    _load_sqlite_utils()
    from sqlite_utils import Database

    if not path.exists():
        from common.files import private_dir

        private_dir(path.parent)
        # Create it user-only before SQLite does, so it is never world-readable even briefly.
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    try:
        conn = sqlite3.connect(str(path), timeout=10.0, check_same_thread=False)
        # No sqlite-utils plugins: Folio's connection gets no functions from whatever else is installed
        # beside it, and finding them (every installed package's entry points, importlib.metadata and
        # pluggy's registry) was a tenth of `folio list`'s start.
        db = Database(conn, execute_plugins=False)
        mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA busy_timeout=10000")
    except sqlite3.DatabaseError as exc:
        text = str(exc).lower()
        if "not a database" in text or "malformed" in text:
            raise FolioError(f"{path} is not a Folio database or is damaged ({exc})") from exc
        raise  # a full, read-only or busy disk: app.errors words it (FAULTS)
    if mode.lower() != "wal":
        raise FolioError(f"{path}: cannot switch the database to WAL mode (got {mode})")
    unknown = [name for name in applied_migrations(db) if name not in KNOWN]
    if unknown:
        db.close()
        raise NewerDatabase(f"{path} was written by a newer Folio (schema {unknown[-1]}); update Folio to open it")
    if migrate:
        build_migrations().apply(db)  # type: ignore[attr-defined]
    return db
