"""Reading a document before the first question (`folio read`, read-ahead).

A read renders the prompt a question about that one document uses (the same instructions, the same
planned context) and has the local engine read only the documents (`GenerateRequest.read_only`).
The engine writes checkpoints while it reads and the snapshot at the end (inference.engine); what
it saved and how far it came go into the document's reading record (app.engine.readings).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from app.caches import NOTE_EVERY_S, Readings, ReadState
from app.chat import question_messages
from app.engine.session import Progress, Session, progress_of
from app.errors import FolioError
from inference.engine_api import Sampling
from inference.events import Finished, GenerationStats, PrefixReused, StateSaved

if TYPE_CHECKING:
    from app.context import AppContext


def read_document(
    ctx: AppContext,
    session: Session,
    document_id: int,
    on_progress: Callable[[Progress], None],
) -> GenerationStats:
    """Read one document into the active local model, as a first question about it would, and keep
    it on disk. A cancel (session.cancel) stops between chunks and keeps a checkpoint of what was read."""
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
