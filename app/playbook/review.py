"""Review a document against a playbook: its fields read by the extraction runner, each rule decided by code.

The playbook compiles to an extraction template (`Playbook.template`); the extraction runner asks its
fields on the document the engine has read once (the chat's prefix and kept state), every request
through `Session.run`: a clause's presence and a value's being stated are the model's scored decisions,
the clause or value is quoted with its page and grounded by the chat's own check. Nothing here talks to
the model. Each rule is then decided by code on those cells (`judge`): a clause present or absent as the
rule wants, a value one of the places or words, a duration or amount against the lines
(app.playbook.values). The review is stored with its findings and an audit entry in one transaction;
an interrupted review resumes where the extraction stopped (the cells are kept per field).

A reviewer accepts or rejects each finding (`decide_finding`), stored beside the finding and audited.
The .docx export proposes the standard wording for the accepted findings that fall short; when nobody
has reviewed any finding yet it proposes every one (a review exported before anyone looked at it shows
all it found, and says so, rather than an empty redline that reads like a clean contract).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.errors import Cancelled, FolioError, NotFound
from app.extraction.cells import BAD_OUTPUT, CUT_OFF, Cell
from app.extraction.templates import TemplateStore
from app.playbook.book import ABSENT, AT_LEAST, ONE_OF, PRESENT, Playbook, Rule
from app.playbook.values import (
    MET,
    MISSING,
    NEEDS_PERSON,
    NOT_MET,
    SHORT,
    VERDICT_TEXT,
    VERDICTS,
    Outcome,
    choose_value,
    compare_value,
)
from app.store.audit import audited_settings, os_user
from app.store.extraction import ExtractionStore
from app.store.matters import Matters
from app.store.playbook import ReviewStore

if TYPE_CHECKING:
    from app.context import AppContext
    from app.engine.session import CancelToken, Session
    from app.extraction.runner import ExtractionEvent

ACCEPTED = "accepted"
REJECTED = "rejected"
CLEARED = "cleared"
DECISIONS = (ACCEPTED, REJECTED, CLEARED)
MAX_NOTE = 2000
_UNGROUNDED = "unsupported"  # app.citations.grounding's verdict for words no page holds


@dataclass(frozen=True)
class Finding:
    """One rule's verdict on one document, with the clause it rests on."""

    rule_key: str
    verdict: str  # one of app.playbook.values.VERDICTS
    reason: str  # one sentence
    value: str = ""  # what the model read: the short answer, or 'yes' / 'no' for a clause
    read_value: str = ""  # the value as code read it ('12 months'); '' for a clause
    quote: str = ""  # the clause as the page has it (else as the model copied it)
    page: int | None = None
    label: str | None = None  # the printed page label, when the page has one
    grounding: str = ""  # the chat's verdict on the clause or value (quoted, supported, ...)
    score: float | None = None  # P(yes) of the scored decision
    confidence: float | None = None  # the probability that the decision is right
    decided_by: str = ""  # logits | logprobs | generated
    decision: str = ""  # the reviewer's: accepted | rejected, '' when not reviewed
    note: str = ""

    @property
    def short(self) -> bool:
        """The contract falls short of the rule: the standard wording is proposed."""
        return self.verdict in SHORT

    @property
    def verdict_text(self) -> str:
        return VERDICT_TEXT[self.verdict]

    @property
    def where(self) -> str:
        if self.page is None:
            return ""
        return f"p. {self.label}" if self.label and self.label != str(self.page) else f"p. {self.page}"

    def row(self) -> dict[str, Any]:
        """What is stored of it: the reviewer's decision is kept apart, beside it."""
        return {k: v for k, v in self.__dict__.items() if k not in ("decision", "note")}


@dataclass(frozen=True)
class PlaybookReview:
    id: int
    playbook: Playbook  # as it was when the review ran
    document_id: int
    title: str
    sha256: str
    run_id: int
    model: str
    model_sha256: str
    created_at: str
    matter: str
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def reviewed(self) -> bool:
        return any(f.decision for f in self.findings)

    def proposed(self) -> list[tuple[Rule, Finding]]:
        """The edits an export carries: each finding that falls short and has wording to propose (a
        removal for an absent rule without wording); only the accepted ones once anyone reviewed any."""
        out = []
        for f in self.findings:
            rule = self.playbook.rule(f.rule_key)
            if not f.short or (not rule.proposed_wording and rule.kind != ABSENT):
                continue
            if self.reviewed and f.decision != ACCEPTED:
                continue
            out.append((rule, f))
        return out

    def counts(self) -> dict[str, int]:
        return {v: sum(1 for f in self.findings if f.verdict == v) for v in VERDICTS}

    def to_dict(self) -> dict[str, Any]:
        rules = {r.key: r for r in self.playbook.rules}
        return {
            "review_id": self.id,
            "playbook": {"key": self.playbook.key, "name": self.playbook.name, "version": self.playbook.version,
                         "sha256": self.playbook.sha256},
            "document": {"id": self.document_id, "title": self.title, "sha256": self.sha256},
            "extraction_run": self.run_id,
            "model": {"label": self.model, "sha256": self.model_sha256},
            "created_at": self.created_at,
            "matter": self.matter,
            "counts": self.counts(),
            "findings": [
                {"rule": f.rule_key, "name": rules[f.rule_key].name, "position": rules[f.rule_key].position,
                 **f.__dict__, "verdict_text": f.verdict_text}
                for f in self.findings
            ],
        }  # fmt: skip


# -- deciding a rule by code ------------------------------------------------------------------------
def judge(rule: Rule, cell: Cell | None) -> Finding:
    """The rule's verdict from the field's cell: what the model read, decided by code."""
    if cell is None or set(cell.flags) & {CUT_OFF, BAD_OUTPUT}:
        return Finding(rule.key, NEEDS_PERSON, f"The model's answer on {rule.field.name.lower()} did not finish.")
    outcome = _outcome(rule, cell)
    there = cell.found
    return Finding(
        rule.key,
        outcome.verdict,
        outcome.reason,
        value=cell.value if not cell.yes_no else ("yes" if there else "no"),
        read_value=outcome.read,
        quote=(cell.passage or cell.quote) if there else "",
        page=cell.page if there else None,
        label=cell.label if there else None,
        grounding=cell.verdict,
        score=cell.score,
        confidence=cell.confidence,
        decided_by=cell.decided_by,
    )


def _outcome(rule: Rule, cell: Cell) -> Outcome:
    what = rule.field.name
    where = f" ({cell.anchor_text})" if cell.anchor_text else ""
    if cell.found and cell.verdict == _UNGROUNDED:  # what the model gave stands on no page: a person looks
        return Outcome(
            NEEDS_PERSON, f"The model found {what.lower()}, but no page of the document holds what it quoted."
        )
    if rule.kind == PRESENT:
        if cell.found:
            return Outcome(MET, f"The contract has {_a(what.lower())} clause{where}.")
        return Outcome(MISSING, f"No {what.lower()} clause was found in the contract.")
    if rule.kind == ABSENT:
        if cell.found:
            return Outcome(NOT_MET, f"The contract has {_a(what.lower())} clause{where}; the position is to have none.")
        return Outcome(MET, f"No {what.lower()} clause was found, as the position wants.")
    if not cell.found:
        if rule.if_absent == MET:
            return Outcome(MET, f"The contract states no {what.lower()}, which the position allows.")
        return Outcome(MISSING, f"The contract states no {what.lower()}.")
    if rule.kind == ONE_OF:
        return choose_value(
            cell.value, rule.value, acceptable=rule.acceptable, fallback=rule.fallback, unacceptable=rule.unacceptable
        )
    return compare_value(
        cell.value,
        rule.value,
        at_least=rule.kind == AT_LEAST,
        acceptable=rule.acceptable[0],
        fallback=rule.fallback[0] if rule.fallback else "",
        unacceptable=rule.unacceptable[0] if rule.unacceptable else "",
    )


def _a(words: str) -> str:
    """'an insurance', 'an uncapped liability', 'a cap on liability': the reason reads as a sentence."""
    return f"{'an' if words[:1] in 'aeiou' else 'a'} {words}"


# -- running, storing, reading back ---------------------------------------------------------------------
class PlaybookReviewer:
    """Reviews documents on the engine it is given (shared with chat and extraction in the window)."""

    def __init__(self, ctx: AppContext, session: Session | None = None) -> None:
        from app.extraction.runner import ExtractionService

        self.ctx = ctx
        self.extraction = ExtractionService(ctx, session)

    def cancel(self) -> None:
        self.extraction.cancel()

    def close(self) -> None:
        self.extraction.close()

    def review(
        self,
        document_id: int,
        playbook: Playbook,
        on_event: Callable[[ExtractionEvent], None] | None = None,
        *,
        cancel: CancelToken | None = None,
    ) -> PlaybookReview:
        """Ask the playbook's fields (resuming the latest run of the same fields with this model), decide
        every rule, store and audit the review. A stop raises Cancelled: the fields asked so far are kept."""
        template = playbook.template()
        run_id = self.extraction.start_run(template, [document_id])
        finished = self.extraction.run(run_id, [document_id], on_event=on_event, cancel=cancel)
        if finished.status == "cancelled":
            raise Cancelled()
        table = self.extraction.table(run_id, [document_id])
        findings = [judge(rule, table.cell(document_id, rule.field.key)) for rule in playbook.rules]
        info = table.run
        review_id = store_review(self.ctx, playbook, document_id, run_id, findings, info.model, info.model_sha256)
        return load_review(self.ctx, review_id)


def store_review(
    ctx: AppContext,
    playbook: Playbook,
    document_id: int,
    run_id: int,
    findings: Sequence[Finding],
    model: str,
    model_sha256: str,
) -> int:
    """Store a review's findings and its audit entry in one transaction; the review's id."""
    store = ReviewStore(ctx.db)
    doc = ctx.library.get(document_id)
    matter_id = ExtractionStore(ctx.db).matter_of(run_id)
    review = {
        "playbook_key": playbook.key,
        "playbook_version": playbook.version,
        "playbook_sha256": playbook.sha256,
        "playbook_json": playbook.to_json(inline=True),
        "document_id": document_id,
        "run_id": run_id,
        "model": model,
        "model_sha256": model_sha256,
        "matter_id": matter_id,
        "created_at": now_iso(),
    }
    with ctx.db.atomic():
        review_id = store.save(review, [f.row() for f in findings])
        ctx.audit.record(
            "playbook",
            documents=[doc.sha256],
            model_sha256=model_sha(model_sha256),
            settings=audited_settings(ctx.settings),
            details={
                "event": "review",
                "review_id": review_id,
                "playbook": playbook.key,
                "playbook_version": playbook.version,
                "playbook_sha256": playbook.sha256,
                "extraction_run": run_id,
                "verdicts": {f.rule_key: f.verdict for f in findings},
            },
            matter_id=matter_id,
        )
    ctx.audit.sync_head()
    return review_id


def model_sha(key: str) -> str | None:
    """What the audit log names a model by: its sha256; a server's model has no file to hash."""
    return None if key.startswith("server:") else key


def load_review(ctx: AppContext, review_id: int) -> PlaybookReview:
    store = ReviewStore(ctx.db)
    row = store.review(review_id)
    templates = TemplateStore.for_config(ctx.paths.config_dir)
    playbook = Playbook.from_dict(json.loads(row["playbook_json"]), templates, source=f"review {review_id}")
    decisions = current_decisions(ctx, review_id)
    findings = []
    for r in store.findings(review_id):
        decision, note = decisions.get(r["rule_key"], ("", ""))
        values = {k: r[k] for k in Finding.__dataclass_fields__ if k in r and k not in ("decision", "note")}
        findings.append(Finding(**values, decision=decision, note=note))
    doc = ctx.library.get(row["document_id"])
    matter = Matters(ctx.db).by_id(row["matter_id"]).name if row["matter_id"] is not None else ""
    return PlaybookReview(
        row["id"], playbook, doc.id, doc.title, doc.sha256, row["run_id"], row["model"], row["model_sha256"],
        row["created_at"], matter, tuple(findings),
    )  # fmt: skip


def current_decisions(ctx: AppContext, review_id: int) -> dict[str, tuple[str, str]]:
    """The reviewer's decision in force per rule: (accepted | rejected, note); a cleared one is not."""
    current: dict[str, tuple[str, str]] = {}
    for rule, decision, note, _who, _at in ReviewStore(ctx.db).decisions(review_id):
        if decision == CLEARED:
            current.pop(rule, None)
        else:
            current[rule] = (decision, note)
    return current


@dataclass(frozen=True)
class ReviewSummary:
    """A review as a list of reviews shows it, read without its findings or its playbook's rules."""

    id: int
    document_id: int
    title: str
    playbook_key: str
    playbook_version: int
    playbook_name: str
    created_at: str
    findings: int  # one per rule
    short: int  # findings not met or missing: those the export proposes wording for

    @property
    def when(self) -> str:
        return self.created_at[:16].replace("T", " ")


def review_summaries(ctx: AppContext) -> list[ReviewSummary]:
    """The reviews of the context's matter, the newest first, as one query (a list of many reviews
    would otherwise read every review whole just to name it)."""
    return [ReviewSummary(**row) for row in ReviewStore(ctx.db).summaries(ctx.matter_id, SHORT)]


def review_ids(ctx: AppContext) -> list[int]:
    """The reviews of the context's matter, the newest first."""
    return ReviewStore(ctx.db).review_ids(ctx.matter_id)


def decide_finding(ctx: AppContext, review_id: int, rule_key: str, decision: str, note: str = "") -> Finding:
    """A reviewer accepts or rejects a finding (or clears the decision): stored beside the finding with
    its audit entry, in one transaction."""
    if decision not in DECISIONS:
        raise FolioError(f"a decision on a finding is one of {', '.join(DECISIONS)}")
    note = note.strip()
    if len(note) > MAX_NOTE:
        raise FolioError(f"a note is at most {MAX_NOTE} characters")
    review = load_review(ctx, review_id)
    finding = next((f for f in review.findings if f.rule_key == rule_key), None)
    if finding is None:
        keys = ", ".join(f.rule_key for f in review.findings)
        raise NotFound(f"review {review_id} has no finding for rule {rule_key!r} (rules: {keys})")
    store = ReviewStore(ctx.db)
    matter_id = store.review(review_id)["matter_id"]
    with ctx.db.atomic():
        store.add_decision({"review_id": review_id, "rule_key": rule_key, "decision": decision, "note": note,
                            "reviewer": os_user(), "at": now_iso()})  # fmt: skip
        ctx.audit.record(
            "playbook",
            documents=[review.sha256],
            model_sha256=model_sha(review.model_sha256),
            settings=audited_settings(ctx.settings),
            details={
                "event": "decision",
                "review_id": review_id,
                "rule": rule_key,
                "decision": decision,
                "note": note,
                "verdict": finding.verdict,
            },
            matter_id=matter_id,
        )
    ctx.audit.sync_head()
    return next(f for f in load_review(ctx, review_id).findings if f.rule_key == rule_key)
