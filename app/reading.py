"""Reading a document before the first question, and the reading state each document shows.

A read renders the prompt a question about that one document uses (the same instructions, the same
planned context) and has the local engine read only the documents (`GenerateRequest.read_only`).
The engine writes checkpoints while it reads and the snapshot at the end (inference.engine); each
one it reports (`StateSaved`) is noted in a small record per (model, document), with the reading
process's id and its progress while it runs. The state shown is checked each time it is shown:
"ready" only while the snapshot's file is there, "reading" only while that process is alive.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.engine.session import Progress, Session, progress_of
from app.errors import FolioError
from common.files import atomic_write_bytes, private_dir
from inference.engine_api import Sampling
from inference.events import Finished, GenerationStats, PrefixReused, StateSaved
from inference.state_cache import StateStore

if TYPE_CHECKING:
    from app.context import AppContext
    from app.paths import Paths

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
        self, model_sha: str, doc_sha: str, on_progress: Callable[[ReadState], None], poll_s: float = 1.0
    ) -> None:
        """Return once no other process is reading this document with this model (it finished, was
        stopped or died): a question then starts from what it read instead of reading it twice."""
        while (state := self.state(model_sha, doc_sha)).kind == "reading":
            on_progress(state)
            time.sleep(poll_s)


def read_document(
    ctx: AppContext,
    session: Session,
    document_id: int,
    on_progress: Callable[[Progress], None],
) -> GenerationStats:
    """Read one document into the active local model, as a first question about it would, and keep
    it on disk. A cancel (session.cancel) stops between chunks and keeps a checkpoint of what was read."""
    from app.chat import question_messages

    if session.served_label() is not None:
        raise FolioError("reading ahead is for a local model; a model server keeps its own cache")
    if not ctx.settings.state_cache_gb:
        raise FolioError("nothing read could be kept: the snapshot cache is off (state_cache_gb = 0)")
    doc = ctx.library.get(document_id)
    settings = ctx.settings
    # The question's words come after the documents: they do not change what is read and kept.
    plan = session.prepare(
        ctx,
        [document_id],
        question_messages([], "?"),
        think=settings.thinking,
        answer_tokens=settings.max_answer_tokens,
    )
    assert plan.sha256 is not None
    readings = Readings(ctx.paths)
    model_sha = plan.sha256
    readings.note(model_sha, doc.sha256, pid=os.getpid(), done=0, eta_s=0.0)
    request = plan.request(sampling=Sampling(max_tokens=1), read_only=True)
    stats: GenerationStats | None = None
    last_note = 0.0
    reused = 0  # tokens restored from a checkpoint: part of what is read
    try:
        for event in session.generate(plan.config, request):
            if isinstance(event, StateSaved):
                if event.complete:
                    readings.note(model_sha, doc.sha256, key=event.key, total=event.tokens, checkpoint="", kept=0)
                else:
                    readings.note(model_sha, doc.sha256, checkpoint=event.key, kept=event.tokens)
                continue
            if isinstance(event, Finished):
                stats = event.stats
                continue
            if isinstance(event, PrefixReused):
                reused = event.tokens
            progress = progress_of(event, plan.label)
            if progress is not None and progress.reading:
                # Counted over the whole document: what an earlier read kept is read too.
                progress = replace(progress, done=reused + progress.done, total=reused + progress.total)
                if time.monotonic() - last_note >= NOTE_EVERY_S:
                    last_note = time.monotonic()
                    readings.note(model_sha, doc.sha256, done=progress.done, total=progress.total, eta_s=progress.eta_s)
            if progress is not None:
                on_progress(progress)
    finally:
        readings.note(model_sha, doc.sha256, pid=0)
    assert stats is not None
    return stats


def _local_model_sha(ctx: AppContext) -> str | None:
    """The active local model's sha256; None with a model server (it keeps its own cache)."""
    if ctx.settings.server_url.strip():
        return None
    try:
        return ctx.models.active(ctx.settings).sha256
    except FolioError:
        return None


def reading_states(ctx: AppContext, doc_shas: list[str]) -> list[ReadState] | None:
    """Each document's reading state with the active local model; None when a server answers."""
    model_sha = _local_model_sha(ctx)
    if model_sha is None:
        return None
    readings = Readings(ctx.paths)
    return [readings.state(model_sha, sha) for sha in doc_shas]


def wait_for_reading(ctx: AppContext, document_ids: list[int], on_progress: Callable[[ReadState], None]) -> None:
    """A question about one document that another Folio process is reading waits for that read
    (and then starts from it) instead of reading the document a second time."""
    model_sha = _local_model_sha(ctx)
    if model_sha is None or len(document_ids) != 1:
        return  # a selection of several documents is a different prefix: nothing to wait for
    doc = ctx.library.get(document_ids[0])
    Readings(ctx.paths).wait_for_other_reader(model_sha, doc.sha256, on_progress)
