"""A reviewer's decision on a table cell: accept it, correct it, or reject it.

Decisions are stored beside the model's answer, never over it: one row per decision in
extraction_reviews (the latest one counts; 'cleared' takes a decision back), so the model's value,
its evidence and verdict stay as they were, and the history of who decided what stays too. Every
decision goes into the audit log in the same transaction as the row.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.clock import now_iso
from app.context import AppContext
from app.errors import FolioError, NotFound
from app.store.audit import audited_settings, os_user
from app.store.extraction import ExtractionStore

ACCEPTED = "accepted"
CORRECTED = "corrected"
REJECTED = "rejected"
CLEARED = "cleared"
DECISIONS = (ACCEPTED, CORRECTED, REJECTED, CLEARED)
MAX_VALUE_CHARS = 2000


@dataclass(frozen=True)
class Review:
    decision: str  # accepted | corrected | rejected
    value: str  # the reviewer's value when corrected, else ''
    note: str
    reviewer: str
    at: str

    def final_value(self, model_value: str) -> str:
        """The value a reader should use: the correction, the model's when accepted, none when rejected."""
        if self.decision == CORRECTED:
            return self.value
        return model_value if self.decision == ACCEPTED else ""


def review_cell(
    ctx: AppContext, run_id: int, document_id: int, field_key: str, decision: str, value: str = "", note: str = ""
) -> Review | None:
    """Record a decision on a stored cell; returns the cell's review now in force (None once cleared)."""
    if decision not in DECISIONS:
        raise FolioError(f"a review decision is one of {', '.join(DECISIONS)}")
    value, note = value.strip(), note.strip()
    if decision == CORRECTED and not value:
        raise FolioError("a correction needs the correct value")
    if len(value) > MAX_VALUE_CHARS or len(note) > MAX_VALUE_CHARS:
        raise FolioError(f"a corrected value or note is at most {MAX_VALUE_CHARS} characters")
    store = ExtractionStore(ctx.db)
    cell = store.cell_to_review(run_id, document_id, field_key)
    if cell is None:
        raise NotFound(f"run {run_id} has no answer for {field_key!r} in document {document_id} to review")
    model_value, found, model_key, document_sha = cell
    reviewer = os_user()
    at = now_iso()
    with ctx.db.atomic():
        store.add_review(
            {
                "run_id": run_id,
                "document_id": document_id,
                "field_key": field_key,
                "decision": decision,
                "value": value if decision == CORRECTED else "",
                "note": note,
                "reviewer": reviewer,
                "at": at,
            }
        )
        ctx.audit.record(
            "review",
            documents=[document_sha],
            model_sha256=None if str(model_key).startswith("server:") else model_key,
            settings=audited_settings(ctx.settings),
            details={
                "run_id": run_id,
                "field": field_key,
                "decision": decision,
                "value": value if decision == CORRECTED else "",
                "note": note,
                "model_value": model_value if found else "",
            },
        )
    ctx.audit.sync_head()
    return None if decision == CLEARED else Review(decision, value if decision == CORRECTED else "", note, reviewer, at)


def load_reviews(ctx: AppContext, run_id: int) -> dict[tuple[int, str], Review]:
    """The review in force for each reviewed cell of a run (a cleared one is not in force)."""
    current: dict[tuple[int, str], Review] = {}
    for doc_id, key, decision, value, note, reviewer, at in ExtractionStore(ctx.db).reviews(run_id):
        if decision == CLEARED:
            current.pop((doc_id, key), None)
        else:
            current[(doc_id, key)] = Review(decision, value, note, reviewer, at)
    return current


def field_values(ctx: AppContext, document_id: int, field_key: str) -> list[str]:
    """A field's values for one document in every extraction run, newest first, as a reader should
    use them: a reviewer's correction over the model's value, nothing where the cell was rejected or
    the document does not state it (redaction offers the parties' names from here)."""
    from app.store.extraction import ExtractionStore

    values = []
    for run_id, value, found in ExtractionStore(ctx.db).field_in_runs(document_id, field_key):
        review = load_reviews(ctx, run_id).get((document_id, field_key))
        shown = review.final_value(value if found else "") if review is not None else (value if found else "")
        if shown.strip():
            values.append(shown.strip())
    return list(dict.fromkeys(values))
