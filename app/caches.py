"""What Folio keeps only to be fast, and clearing it: document snapshots, remembered GGUF facts, and
the reading records that say which documents were read with which model.

All rebuild themselves on demand (a snapshot by reading the document again, facts by reading the
GGUF header again), so clearing them never loses the user's work.

A reading record is kept per (model, document) by a read (app.reading): the snapshot and checkpoint
the engine reported saving (`StateSaved`), and while the read runs the reading process's id and its
progress. The state shown is checked each time it is shown: "ready" only while the snapshot's file
is there, "reading" only while that process is alive and reporting. A question about several
documents keeps the state where each of them ends; a record per (model, documents in that order)
says which documents that state holds, so a later selection can put them first (`read_first`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.paths import Paths
from common.files import atomic_write_bytes, private_dir
from inference.state_cache import StateStore


@dataclass(frozen=True)
class CacheUsage:
    name: str
    path: Path
    files: int
    bytes: int


def _facts_dir(paths: Paths) -> Path:
    return paths.models_dir / "facts"


def cache_usage(paths: Paths) -> list[CacheUsage]:
    snapshots = StateStore(paths.state_cache_dir, 0).entries()
    facts = sorted(_facts_dir(paths).glob("*.json")) if _facts_dir(paths).is_dir() else []
    pages = sorted(paths.scan_pages_dir.rglob("*.json")) if paths.scan_pages_dir.is_dir() else []
    return [
        CacheUsage("document snapshots", paths.state_cache_dir, len(snapshots), sum(size for _, _, size in snapshots)),
        CacheUsage("model facts", _facts_dir(paths), len(facts), sum(_size(p) for p in facts)),
        CacheUsage("scanned pages of unfinished adds", paths.scan_pages_dir, len(pages), sum(_size(p) for p in pages)),
    ]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def clear_caches(paths: Paths) -> int:
    """Delete committed snapshots and cached facts; returns the bytes freed. A snapshot being written
    right now (a temp file) is left alone: its writer commits or removes it."""
    freed = 0
    store = StateStore(paths.state_cache_dir, 0)
    for _, key, size in store.entries():
        store.discard(key)
        freed += size
    if _facts_dir(paths).is_dir():
        for path in _facts_dir(paths).glob("*.json"):
            size = _size(path)
            path.unlink(missing_ok=True)
            freed += size
    if paths.scan_pages_dir.is_dir():  # an interrupted add then reads its scan from the first page again
        freed += sum(_size(p) for p in paths.scan_pages_dir.rglob("*.json"))
        shutil.rmtree(paths.scan_pages_dir, ignore_errors=True)
    return freed


def human_size(n: int) -> str:
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


NOTE_EVERY_S = 1.0  # how often a running read writes its progress for other processes
STALE_S = 120.0  # a "reading" record this old without news is not believed (a process hung or a pid reused)


@dataclass(frozen=True)
class ReadState:
    kind: str  # ready | reading | partial | unread
    done: int = 0  # tokens read (reading) or kept in the last checkpoint (partial)
    total: int = 0
    eta_s: float = 0.0

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    def words(self) -> str:
        if self.kind == "ready":
            return "ready — questions start at once"
        if self.kind == "reading":
            return f"reading {self.percent}% · about {_minutes(self.eta_s)} left"
        if self.kind == "partial":
            return f"read {self.percent}% · continues where it stopped"
        return "not read yet"


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min"


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _int(value: object) -> int:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


def _alive(pid: int) -> bool:
    import psutil

    return pid > 0 and psutil.pid_exists(pid)


class Readings:
    """The reading records of one Folio home: what was read, with which model, how far."""

    def __init__(self, paths: Paths) -> None:
        self.folder = paths.cache_dir / "reading"
        self.store = StateStore(paths.state_cache_dir, 0)

    def _file(self, model_sha: str, doc_sha: str) -> Path:
        return self.folder / f"{model_sha[:16]}-{doc_sha[:16]}.json"

    def record(self, model_sha: str, doc_sha: str) -> dict[str, Any]:
        try:
            data = json.loads(self._file(model_sha, doc_sha).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def note(self, model_sha: str, doc_sha: str, **fields: Any) -> None:
        private_dir(self.folder)
        record = {**self.record(model_sha, doc_sha), **fields, "updated": time.time()}
        atomic_write_bytes(self._file(model_sha, doc_sha), json.dumps(record).encode())

    def forget_document(self, doc_sha: str) -> None:
        """Delete the document's reading records, with every model (a purge leaves no trace of it)."""
        if self.folder.is_dir():
            for path in self.folder.glob(f"*-{doc_sha[:16]}.json"):
                path.unlink(missing_ok=True)
            for path in self.folder.glob("*-set-*.json"):
                if doc_sha in _load(path).get("documents", []):
                    path.unlink(missing_ok=True)

    def _set_file(self, model_sha: str, doc_shas: list[str]) -> Path:
        digest = hashlib.sha256("\n".join(doc_shas).encode()).hexdigest()[:16]
        return self.folder / f"{model_sha[:16]}-set-{digest}.json"

    def note_documents(self, model_sha: str, doc_shas: list[str], *, key: str, tokens: int) -> None:
        """The engine kept the state that holds these documents, in this order and nothing after them
        (the first of a selection's documents, or all of them)."""
        if len(doc_shas) == 1:  # the state a question about that document alone starts from
            self.note(model_sha, doc_shas[0], key=key, total=tokens, checkpoint="", kept=0)
            return
        private_dir(self.folder)
        record = {"model": model_sha, "documents": doc_shas, "key": key, "total": tokens, "updated": time.time()}
        atomic_write_bytes(self._set_file(model_sha, doc_shas), json.dumps(record).encode())

    def read_first(self, model_sha: str, doc_shas: list[str]) -> list[str]:
        """The documents of a selection to put first, in their order, so that its reading starts from
        the longest state on disk (a document or several read before, or a document's checkpoint);
        [] when nothing of them was read with this model."""
        best: tuple[int, list[str]] = (0, [])
        wanted = set(doc_shas)
        for sha in doc_shas:
            rec = self.record(model_sha, sha)
            for key_field, size_field in (("key", "total"), ("checkpoint", "kept")):
                size = _int(rec.get(size_field))
                if size > best[0] and rec.get(key_field) and self.store.has(str(rec[key_field])):
                    best = (size, [sha])
        if self.folder.is_dir():
            for path in sorted(self.folder.glob(f"{model_sha[:16]}-set-*.json")):
                rec = _load(path)
                docs, size = rec.get("documents"), _int(rec.get("total"))
                if (
                    rec.get("model") == model_sha
                    and isinstance(docs, list)
                    and len(set(docs)) == len(docs) > 0
                    and set(docs) <= wanted
                    and size > best[0]
                    and self.store.has(str(rec.get("key")))
                ):
                    best = (size, [str(d) for d in docs])
        return best[1]

    def reading_figures(self, model_sha: str) -> tuple[int, float]:
        """Tokens this model read, and the milliseconds it took, in the reads that finished (each
        document's last read; `folio read` or read-ahead): (0, 0.0) before the first."""
        tokens, ms = 0, 0.0
        if self.folder.is_dir():
            for path in self.folder.glob(f"{model_sha[:16]}-*.json"):
                rec = _load(path)
                if _int(rec.get("read_tokens")) > 0 and isinstance(rec.get("read_ms"), (int, float)):
                    tokens += _int(rec["read_tokens"])
                    ms += float(rec["read_ms"])
        return tokens, ms

    def state(self, model_sha: str, doc_sha: str) -> ReadState:
        rec = self.record(model_sha, doc_sha)
        total = int(rec.get("total", 0))
        if rec.get("key") and self.store.has(str(rec["key"])):
            return ReadState("ready", total, total)
        pid = int(rec.get("pid") or 0)
        if pid and pid != os.getpid() and _alive(pid) and time.time() - float(rec.get("updated", 0)) < STALE_S:
            return ReadState("reading", int(rec.get("done", 0)), total, float(rec.get("eta_s", 0.0)))
        if rec.get("checkpoint") and self.store.has(str(rec["checkpoint"])):
            return ReadState("partial", int(rec.get("kept", 0)), total)
        return ReadState("unread", 0, total)

    def wait_for_other_reader(
        self, model_sha: str, doc_shas: list[str], on_progress: Callable[[ReadState], None], poll_s: float = 1.0
    ) -> None:
        """Return once no other process is reading any of these documents with this model (each read
        finished, was stopped or died): a question then starts from what was read instead of reading
        it twice."""
        while True:
            reading = [state for sha in doc_shas if (state := self.state(model_sha, sha)).kind == "reading"]
            if not reading:
                return
            on_progress(reading[0])
            time.sleep(poll_s)
