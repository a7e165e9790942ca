"""kill -9 trials: a real `folio` command is SIGKILLed at a random moment of a phase - ingest (`folio add`),
prefill and generation (`folio ask`), export (`folio export`) - and the files it leaves are checked.

The moments are drawn from a seeded generator (FOLIO_CRASH_SEED), each as a fraction of the phase's
length measured on this machine just before (calibration), so a failing trial can be replayed:
FOLIO_CRASH_SEED=<seed> FOLIO_CRASH_ONLY=<trial> re-runs exactly that phase and fraction. Timing
on a shared machine still varies, so a replay lands near, not exactly on, the same instruction.

Only the command's own process is killed, as `kill -9 PID` or the out-of-memory killer would; its
llama.cpp engine child must then notice and exit by itself. After every kill, checked with SQLite
directly (not with Folio's code):
- PRAGMA integrity_check and foreign_key_check, and both full-text indexes' integrity-check;
- no half-added document: every document has all its pages, segments and source; its page images
  exist; the file being added is either absent or complete, exactly as a reference ingest stored it;
  once Folio has started again (`folio list`), no file in blobs/ that no row names;
- every message that existed before is still there, unchanged; a question is never stored without
  its answer row; an answer is either complete or marked incomplete/error/cancelled - never a
  partial text marked complete;
- the audit log's hash chain and head file verify; every committed state snapshot verifies;
- an export target is either absent or a whole, readable file.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from app.store.library import NAMED_BLOBS_SQL
from tests.conftest import REPO

PHASES = ("ingest", "prefill", "generation", "export")
SEED_ENV, ONLY_ENV = "FOLIO_CRASH_SEED", "FOLIO_CRASH_ONLY"
DEFAULT_SEED = 20261122
QUESTION = "What must the Client pay, and when?"
ANSWER_TOKENS = 40
ORPHAN_GRACE_S = 30.0


def seed() -> int:
    return int(os.environ.get(SEED_ENV, DEFAULT_SEED))


def only() -> list[int] | None:
    raw = os.environ.get(ONLY_ENV, "").strip()
    return [int(x) for x in raw.split(",") if x.strip()] if raw else None


@dataclass
class Trial:
    index: int
    phase: str
    fraction: float  # where in the phase the kill was aimed (0 = its start, 1 = its end)
    delay_s: float = 0.0
    landed: str = ""  # 'running': killed mid-command | 'after exit': the command had already finished
    problems: list[str] = field(default_factory=list)

    def replay(self, seed_value: int) -> str:
        return f"{SEED_ENV}={seed_value} {ONLY_ENV}={self.index}"


class _Output:
    """Reads a command's stdout and stderr as they come, with the time of what it waits for."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.out = bytearray()
        self.err = bytearray()
        self.first_out: float | None = None
        self._threads = [
            threading.Thread(target=self._pump, args=(proc.stdout, self.out, True), daemon=True),
            threading.Thread(target=self._pump, args=(proc.stderr, self.err, False), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _pump(self, stream: Any, into: bytearray, is_out: bool) -> None:
        while True:
            chunk = stream.read1(4096)
            if not chunk:
                return
            if is_out and self.first_out is None:
                self.first_out = time.monotonic()
            into.extend(chunk)

    def wait_for(self, proc: subprocess.Popen[bytes], ready: Any, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return True
            if proc.poll() is not None:
                return False
            time.sleep(0.01)
        raise TimeoutError(f"the command made no progress in {timeout:.0f} s: {self.err.decode(errors='replace')}")

    def join(self, timeout: float) -> None:
        for t in self._threads:
            t.join(timeout)


def _engine_children(pid: int) -> list[psutil.Process]:
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for child in children:
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                out.append(child)
        except psutil.NoSuchProcess:
            continue
    return out


def make_ingest_pdf(path: Path, number: int, scan_png: bytes) -> Path:
    """A 26-page agreement: 24 text pages and 2 scanned pages (OCR'd when Tesseract is there)."""
    import pymupdf

    doc = pymupdf.open()
    for page_no in range(1, 25):
        page = doc.new_page(width=595, height=842)
        clauses = "\n\n".join(
            f"{page_no}.{k} The Supplier shall deliver the goods listed in Schedule {k} of agreement "
            f"{number:06d} within {10 + k} business days, and the Client shall pay each invoice within "
            f"thirty (30) days of receipt, failing which interest accrues at one percent per month."
            for k in range(1, 6)
        )
        page.insert_textbox(pymupdf.Rect(60, 60, 535, 800), clauses, fontsize=10)
    for _ in range(2):
        page = doc.new_page(width=595, height=842)
        page.insert_image(page.rect, stream=scan_png)
    doc.set_metadata({"title": f"Supply agreement {number:06d}"})
    doc.save(path)
    doc.close()
    return path


def make_reading_pdf(path: Path) -> Path:
    """The document asked about: about 1,000 tokens, so prefill takes a few seconds."""
    from tests.fixtures.pdfs import make_text_pdf

    pages = [
        "\n".join(
            f"Clause {p}.{k}. The Client shall pay the monthly fee of {1000 * p + k} US dollars within "
            f"thirty (30) days of each invoice; late amounts accrue interest at one percent per month."
            for k in range(1, 7)
        )
        for p in range(1, 4)
    ]
    return make_text_pdf(path, pages)


@dataclass
class Windows:
    ingest: float
    prefill: float
    generation: float
    export: float

    def of(self, phase: str) -> float:
        return float(getattr(self, phase))


class CrashLab:
    def __init__(self, home: Path, work: Path, seed_value: int) -> None:
        self.home, self.work, self.seed = home, work, seed_value
        self.db_path = home / "data" / "folio.sqlite3"
        self.env = {**os.environ, "FOLIO_HOME": str(home)}
        self.windows: Windows | None = None
        self.reference: tuple[int, int] = (0, 0)  # (pages, segments) of an ingest variant
        self.reading_doc = 0
        self.conversation = 0
        self._scan_png = b""

    # -- running commands ------------------------------------------------------------------------
    def start(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", *args],
            cwd=REPO,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # so a leftover can be cleaned up as a group; trials kill one pid
        )

    def run(self, *args: str, timeout: float = 600) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "app.cli", *args], cwd=REPO, env=self.env, capture_output=True, timeout=timeout
        )
        if proc.returncode != 0:
            raise AssertionError(f"folio {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
        return proc.stdout.decode()

    # -- set-up and calibration ------------------------------------------------------------------
    def setup(self) -> None:
        import cv2

        from tests.fixtures.media import make_scan, render_text_page

        (self.home / "config" / "settings.toml").write_text(
            f"schema_version = 1\nmax_answer_tokens = {ANSWER_TOKENS}\nthreads = 1\n"
        )
        ok, png = cv2.imencode(".png", make_scan(render_text_page(), degrees=1.5))
        assert ok
        self._scan_png = png.tobytes()
        self.work.mkdir(parents=True, exist_ok=True)
        reading = make_reading_pdf(self.work / "reading.pdf")
        self.run("add", str(reading))
        self.reading_doc = self._one("SELECT id FROM documents ORDER BY id DESC LIMIT 1")
        # Ingest, as a trial will run it.
        variant = make_ingest_pdf(self.work / "calibration.pdf", 0, self._scan_png)
        t0 = time.monotonic()
        self.run("add", str(variant))
        ingest = time.monotonic() - t0
        doc = self._one("SELECT id FROM documents ORDER BY id DESC LIMIT 1")
        self.reference = (
            self._one("SELECT count(*) FROM pages WHERE document_id = ?", doc),
            self._one("SELECT count(*) FROM segments WHERE document_id = ?", doc),
        )
        # Ask, from a cold start with nothing cached: loading, then prefill, then generation.
        shutil.rmtree(self.home / "cache" / "states", ignore_errors=True)
        proc = self.start("ask", str(self.reading_doc), QUESTION)
        t0 = time.monotonic()
        output = _Output(proc)
        output.wait_for(proc, lambda: b"model ready" in output.err, 600)
        ready = time.monotonic()
        output.wait_for(proc, lambda: output.first_out is not None, 600)
        assert proc.wait(600) == 0, output.err.decode(errors="replace")
        end = time.monotonic()
        output.join(10)
        assert output.first_out is not None
        self.conversation = self._one("SELECT max(conversation_id) FROM messages")
        export = 0.0
        for attempt in range(2):  # the second run, with the file system cache as warm as in the trials
            t0 = time.monotonic()
            out = self.work / f"calibration-{attempt}.pdf"
            self.run("export", "conversation", str(self.conversation), "--out", str(out))
            export = time.monotonic() - t0
        self.windows = Windows(ingest, output.first_out - ready, end - output.first_out, export)

    def _one(self, sql: str, *params: Any) -> int:
        con = sqlite3.connect(self.db_path)
        try:
            return int(con.execute(sql, params).fetchone()[0])
        finally:
            con.close()

    # -- one trial -------------------------------------------------------------------------------
    def trial(self, index: int) -> Trial:
        assert self.windows is not None
        rng = random.Random(f"{self.seed}:{index}")
        trial = Trial(index, PHASES[index % len(PHASES)], rng.random())
        window = self.windows.of(trial.phase)
        trial.delay_s = round(trial.fraction * window, 3)
        before = self._state()
        target: Path | None = None
        variant_sha = ""
        if trial.phase == "ingest":
            variant = make_ingest_pdf(self.work / f"trial-{index}.pdf", index + 1, self._scan_png)
            variant_sha = _sha256(variant)
            proc = self.start("add", str(variant))
            output = _Output(proc)
            started = True
        elif trial.phase in ("prefill", "generation"):
            if trial.phase == "prefill":
                shutil.rmtree(self.home / "cache" / "states", ignore_errors=True)  # make it read the document
            follow_up = index % 3 == 1
            args = ["--conversation", str(self.conversation)] if follow_up else [str(self.reading_doc)]
            proc = self.start("ask", *args, f"{QUESTION} (trial {index})")
            output = _Output(proc)
            if trial.phase == "prefill":
                started = output.wait_for(proc, lambda: b"model ready" in output.err, 600)
            else:
                started = output.wait_for(proc, lambda: output.first_out is not None, 600)
        else:
            target = self.work / f"export-{index}.{'pdf' if index % 2 else 'md'}"
            proc = self.start("export", "conversation", str(self.conversation), "--out", str(target))
            output = _Output(proc)
            started = True
        if started:
            time.sleep(trial.delay_s)
        engines = _engine_children(proc.pid)
        trial.landed = "running" if proc.poll() is None else "after exit"
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        trial.problems += self._orphans(engines)
        output.join(ORPHAN_GRACE_S)
        if trial.landed == "after exit" and proc.returncode != 0:
            trial.problems.append(f"the command failed on its own: {output.err.decode(errors='replace')[-400:]}")
        trial.problems += self.check(before, variant_sha, target)
        trial.problems += self._orphan_blobs()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the group (multiprocessing's helper)
        return trial

    def _orphan_blobs(self) -> list[str]:
        """Page images an add killed before its commit wrote are deleted at the next start."""
        self.run("list")
        con = sqlite3.connect(self.db_path)
        try:
            named = {r[0] for r in con.execute(NAMED_BLOBS_SQL)}
        finally:
            con.close()
        blobs = self.home / "data" / "blobs"
        orphans = sorted(p.relative_to(blobs).as_posix() for p in blobs.rglob("*.png")) if blobs.exists() else []
        orphans = [name for name in orphans if name not in named]
        return [f"{len(orphans)} orphan page image(s) after a restart, e.g. {orphans[0]}"] if orphans else []

    def _orphans(self, engines: list[psutil.Process]) -> list[str]:
        """An engine whose app was killed must notice (its pipe breaks) and exit by itself."""
        _gone, alive = psutil.wait_procs(engines, timeout=ORPHAN_GRACE_S)
        for proc in alive:
            proc.kill()
        return [f"engine pid {p.pid} outlived its killed app by {ORPHAN_GRACE_S:.0f} s" for p in alive]

    # -- what must hold after a kill ------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        con = sqlite3.connect(self.db_path)
        try:
            return {
                "messages": {r[0]: r[1:] for r in con.execute("SELECT * FROM messages")},
                "documents": {r[0]: r[1:] for r in con.execute("SELECT id, sha256, page_count FROM documents")},
                "audit": con.execute("SELECT count(*) FROM audit_log").fetchone()[0],
            }
        finally:
            con.close()

    def check(self, before: dict[str, Any], variant_sha: str, target: Path | None) -> list[str]:
        problems: list[str] = []
        con = sqlite3.connect(self.db_path)
        try:
            problems += _database_checks(con)
            problems += self._document_checks(con, before, variant_sha)
            problems += _message_checks(con, before)
            problems += self._audit_and_snapshot_checks(con)
            if target is not None:
                problems += _export_checks(con, target)
        finally:
            con.close()
        return problems

    def _document_checks(self, con: sqlite3.Connection, before: dict[str, Any], variant_sha: str) -> list[str]:
        problems = []
        rows = con.execute(
            "SELECT d.id, d.sha256, d.page_count, (SELECT count(*) FROM pages p WHERE p.document_id = d.id), "
            "(SELECT count(*) FROM segments s WHERE s.document_id = d.id), "
            "(SELECT count(*) FROM document_sources x WHERE x.document_id = d.id) FROM documents d"
        ).fetchall()
        for doc_id, sha, page_count, pages, segments, sources in rows:
            if pages != page_count or segments == 0 or sources == 0:
                problems.append(f"document {doc_id} is half there: {pages}/{page_count} pages, {segments} segments")
            if sha == variant_sha and (pages, segments) != self.reference:
                problems.append(f"the added document has {(pages, segments)}, a full ingest gives {self.reference}")
        for doc_id, values in before["documents"].items():
            if con.execute("SELECT sha256, page_count FROM documents WHERE id = ?", [doc_id]).fetchone() != values:
                problems.append(f"document {doc_id} changed or vanished")
        blobs = con.execute(NAMED_BLOBS_SQL).fetchall()
        missing = [b[0] for b in blobs if not (self.home / "data" / "blobs" / b[0]).is_file()]
        if missing:
            problems.append(f"{len(missing)} stored file(s) missing from blobs/, e.g. {missing[0]}")
        return problems

    def _audit_and_snapshot_checks(self, con: sqlite3.Connection) -> list[str]:
        from sqlite_utils import Database

        from app.store.audit import AuditLog
        from inference.state_cache import StateStore

        problems = []
        result = AuditLog(Database(con), self.home / "data" / "audit-head.json").verify()
        if not result.ok:
            problems.append(f"audit log: {result.problem}")
        states = self.home / "cache" / "states"
        store = StateStore(states, 1 << 40)
        for record in states.glob("*.json") if states.exists() else []:
            if store.lookup(record.stem) is None:
                problems.append(f"snapshot {record.stem} is committed but does not verify")
        return problems


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _database_checks(con: sqlite3.Connection) -> list[str]:
    problems = []
    integrity = con.execute("PRAGMA integrity_check").fetchall()
    if integrity != [("ok",)]:
        problems.append(f"integrity_check: {integrity[:3]}")
    if con.execute("PRAGMA foreign_key_check").fetchall():
        problems.append("foreign_key_check found rows pointing nowhere")
    for table in ("segments_fts", "messages_fts"):
        try:
            con.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
        except sqlite3.DatabaseError as exc:
            problems.append(f"{table}: {exc}")
    con.rollback()
    return problems


def _message_checks(con: sqlite3.Connection, before: dict[str, Any]) -> list[str]:
    problems = []
    now = {r[0]: r[1:] for r in con.execute("SELECT * FROM messages")}
    for message_id, values in before["messages"].items():
        if now.get(message_id) != values:
            problems.append(f"message {message_id}, stored before the kill, changed or vanished")
    columns = [d[1] for d in con.execute("PRAGMA table_info(messages)")]
    rows = [dict(zip(columns, (k, *v), strict=True)) for k, v in now.items() if k not in before["messages"]]
    by_place = {(r["conversation_id"], r["seq"]): r for r in rows}
    for r in rows:
        if r["role"] == "user":
            answer = by_place.get((r["conversation_id"], r["seq"] + 1))
            if answer is None or answer["role"] != "assistant":
                problems.append(f"question {r['id']} was stored without its answer row")
        elif r["status"] == "complete":
            if not r["text"] or r["completion_tokens"] is None:
                problems.append(f"answer {r['id']} is marked complete but has no text or token count")
        elif r["status"] not in ("incomplete", "error", "cancelled"):
            problems.append(f"answer {r['id']} has status {r['status']!r}")
    empty = con.execute(
        "SELECT count(*) FROM conversations c "
        "WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id)"
    ).fetchone()[0]
    if empty:
        problems.append(f"{empty} conversation(s) without any message")
    return problems


def _export_checks(con: sqlite3.Connection, target: Path) -> list[str]:
    if not target.exists():
        return []
    data = target.read_bytes()
    problems = []
    if target.suffix == ".pdf":
        import pymupdf

        try:
            with pymupdf.open(stream=data, filetype="pdf") as doc:
                if doc.page_count < 1:
                    problems.append(f"{target.name} has no pages")
        except Exception as exc:
            problems.append(f"{target.name} is not a readable PDF ({exc})")
    elif not data.decode("utf-8", errors="replace").startswith("# ") or not data.endswith(b"\n"):
        problems.append(f"{target.name} is not a whole Markdown export")
    import hashlib

    for (details,) in con.execute("SELECT details FROM audit_log WHERE action = 'export'"):
        info = json.loads(details)
        if info.get("path") == str(target) and info.get("sha256") != hashlib.sha256(data).hexdigest():
            problems.append(f"{target.name} differs from what the audit log recorded")
    return problems
