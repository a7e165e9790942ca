"""The model's summary of a redline: what changed that matters, cited in both versions and checked.

Both versions (D1 old, D2 new) and the complete redline go to the model through the session that
chat and extraction share (one engine). When they do not fit the model's context together, the
summary is written change group by change group (the changes of one clause, with only the pages they
are on) and says so. Every sentence is grounded like a chat answer (app/citations), and every change
no sentence mentions (app/compare/mentions.py) is listed under "Other changes": the summary may leave
a change out, the reader never loses one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.citations.grounding import AnswerGrounding, ground_answer
from app.compare.changes import Change
from app.compare.mentions import NEW_DOC, OLD_DOC, Sentence, mentioned
from app.compare.redline import Redline
from app.context import AppContext
from app.engine.documents import prompt_documents
from app.engine.progress import Progress
from app.engine.session import CancelToken, Prepared, Session
from app.errors import Cancelled, FolioError
from app.store.audit import audited_settings
from assets import read_text
from inference.chat_format import Message, template_for
from inference.engine_api import Sampling
from inference.prompt import PromptDocument, build_messages, render_prompt
from inference.thinking import ThinkingSplitter

QUOTED_WORDS = 40  # of an inserted or deleted clause, in the redline the model reads
ProgressSink = Callable[[Progress], None]


@dataclass(frozen=True)
class Part:
    """One answer of the model: the whole summary, or one change group's when they are asked apart."""

    title: str  # '' for the whole summary; the clause of the change group
    text: str
    claims: list[dict[str, Any]]  # each sentence with its grounding verdict (ClaimVerdict.to_dict)
    changes: tuple[int, ...]  # the redline changes this answer was given
    stop_reason: str = "stop"


@dataclass(frozen=True)
class Summary:
    model_label: str
    demo: bool  # the starter model wrote it
    note: str  # '' when both versions and the redline were read at once; else why and how they were split
    parts: tuple[Part, ...]
    mentioned: frozenset[int]  # indexes into Redline.changes that some sentence mentions
    unread: tuple[int, ...] = field(default=())  # changes of groups too long for the context on their own

    def other(self, redline: Redline) -> tuple[int, ...]:
        """The changes the summary does not mention, in the redline's order."""
        return tuple(k for k in range(len(redline.changes)) if k not in self.mentioned)


def summarise(
    ctx: AppContext,
    session: Session,
    redline: Redline,
    old_id: int,
    new_id: int,
    *,
    on_progress: ProgressSink | None = None,
    cancel: CancelToken | None = None,
) -> Summary:
    """The model's summary of the redline of library documents old_id -> new_id. A stop (`cancel`)
    ends the request under way and every later one: Cancelled."""
    token = cancel or CancelToken()
    emit = on_progress or (lambda _p: None)
    if not redline.changes:
        raise FolioError("the two versions have the same words: there is nothing to summarise")
    if old_id == new_id:
        raise FolioError("the two versions are the same document")
    settings = ctx.settings
    answer_tokens = settings.max_answer_tokens
    instructions = read_text("prompts", "compare.md")
    everything = tuple(range(len(redline.changes)))

    def build(changes: tuple[int, ...]) -> Callable[[list[PromptDocument]], list[Message]]:
        return lambda documents: build_messages(instructions, documents, [], question(redline, changes))

    who = session.model_identity(ctx)
    label, sha256, demo = who.label, who.sha256, who.demo
    fits = None
    if who.record is not None:
        model = who.record
        ceiling = session.context_ceiling(model)
        template = template_for(model.architecture, model.facts.chat_template)

        def fits(changes: tuple[int, ...], pages: dict[int, set[int]] | None) -> bool:
            documents = prompt_documents(ctx, [old_id, new_id], pages=pages)
            rendered = render_prompt(template, build(changes)(documents), enable_thinking=False)
            count = session.count_tokens(model, rendered)
            return not ceiling or count.total + answer_tokens <= ceiling

    note = ""
    groups: list[tuple[str, tuple[int, ...], dict[int, set[int]] | None]] = [("", everything, None)]
    emit(Progress("measuring both versions and the redline against the model's context"))
    if fits is not None and not fits(everything, None):
        groups = [(title, ks, pages_of(redline, ks, old_id, new_id)) for title, ks in change_groups(redline)]
        note = (
            f"Both versions and the redline do not fit the model's context together: the summary was written "
            f"clause by clause ({len(groups)} change groups), each from the pages its changes are on."
        )
        emit(Progress(note))
    rows = [ctx.library.get(old_id), ctx.library.get(new_id)]
    ctx.audit.record(
        "comparison",
        documents=[d.sha256 for d in rows],
        model_sha256=sha256,
        settings=audited_settings(settings),
        details={"model": label, "changes": len(redline.changes), "groups": len(groups)},
    )
    sources = session.sources(ctx, rows)
    parts: list[Part] = []
    said: set[int] = set()
    unread: list[int] = []
    for n, (title, changes, pages) in enumerate(groups, start=1):
        if token.cancelled:
            raise Cancelled()
        if pages is not None:
            if fits is not None and not fits(changes, pages):
                unread.extend(changes)
                emit(Progress(f"{title}: its pages and changes alone do not fit the model's context (listed below)"))
                continue
            emit(Progress(f"change group {n} of {len(groups)}: {title}"))
        with session.turn():  # measuring the prompt and answering it: one hold of the engine
            prepared = session.prepare(
                ctx, [old_id, new_id], build(changes), think=False, answer_tokens=answer_tokens, pages=pages
            )
            text, stop_reason = _answer(session, prepared, answer_tokens, emit, token)
        emit(Progress("checking every sentence against both versions"))
        grounded = ground_answer(text, sources)
        # A sentence may mention a change of another group (the whole document was in view): it counts.
        said |= mentioned(redline.changes, sentences(text, grounded))
        parts.append(Part(title, text, [v.to_dict() for v in grounded.claims], changes, stop_reason))
    return Summary(label, demo, note, tuple(parts), frozenset(said), tuple(unread))


def _answer(
    session: Session, prepared: Prepared, answer_tokens: int, emit: ProgressSink, token: CancelToken
) -> tuple[str, str]:
    """The model's answer without its thinking, and why it stopped ('stop', 'length')."""
    sampling = Sampling.recommended(thinking=False, max_tokens=answer_tokens)
    result = session.run(prepared, prepared.request(sampling=sampling, thinking=False), cancel=token, on_progress=emit)
    if result.cancelled:
        raise Cancelled()
    splitter = ThinkingSplitter(in_thinking=prepared.starts_in_thinking)
    splitter.feed(result.text)
    splitter.finish()
    return splitter.answer_text.strip(), result.stats.stop_reason


def question(redline: Redline, changes: tuple[int, ...]) -> str:
    """The user turn: what to write, and the redline's changes (all of them, or one group's)."""
    lines = [
        "Summarise the material changes from D1 (the old version) to D2 (the new version), citing both.",
        f"The redline: {len(changes)} of the {len(redline.changes)} changes between them, each with its place in both.",
        "",
    ]
    lines += [change_line(redline.changes[k]) for k in changes]
    return "\n".join(lines)


def change_line(change: Change) -> str:
    """One change as the model reads it: anchors written the way it is to cite them ([D1 p. 3]), and a
    changed passage whole as it was and as it is (a small model quotes plain text more faithfully than
    the redline's ~~struck~~ **bold** notation, which markdown.py writes for people)."""
    old, new = f"[D{OLD_DOC} {change.old_at.cited()}]", f"[D{NEW_DOC} {change.new_at.cited()}]"
    where = f"clause {change.clause}"
    if change.kind == "moved":
        return f"- {where} moved: from {old} to {new}"
    if change.kind == "clause inserted":
        return f'- {where} inserted {new}: "{_opening(change.new_words)}"'
    if change.kind == "clause deleted":
        return f'- {where} deleted {old}: "{_opening(change.old_words)}"'
    if change.kind == "renumbered":
        return f"- {where} renumbered {old} {new}: {' '.join(change.old_words)} -> {' '.join(change.new_words)}"
    before, after = " ".join(change.before), " ".join(change.after)
    was = " ".join(p for p in (before, " ".join(change.old_words), after) if p)
    now = " ".join(p for p in (before, " ".join(change.new_words), after) if p)
    return f'- {where}, {change.kind}: was "{was}" {old}; now "{now}" {new}'


def _opening(words: tuple[str, ...]) -> str:
    return " ".join(words[:QUOTED_WORDS]) + (" ..." if len(words) > QUOTED_WORDS else "")


def change_groups(redline: Redline) -> list[tuple[str, tuple[int, ...]]]:
    """The changes cut into groups of one clause each (consecutive changes under one clause title)."""
    groups: list[tuple[str, list[int]]] = []
    for k, change in enumerate(redline.changes):
        if groups and groups[-1][0] == change.clause:
            groups[-1][1].append(k)
        else:
            groups.append((change.clause, [k]))
    return [(title, tuple(ks)) for title, ks in groups]


def pages_of(redline: Redline, changes: tuple[int, ...], old_id: int, new_id: int) -> dict[int, set[int]]:
    """The pages (paragraphs) the changes are on, in each version."""
    old: set[int] = set()
    new: set[int] = set()
    for k in changes:
        change = redline.changes[k]
        old.update(range(change.old_at.first, change.old_at.last + 1))
        new.update(range(change.new_at.first, change.new_at.last + 1))
    return {old_id: old, new_id: new}


def sentences(answer: str, grounded: AnswerGrounding) -> list[Sentence]:
    """Each claim with the pages it cites, and its words without the citations' own numbers."""
    out = []
    for verdict in grounded.claims:
        claim = verdict.claim
        text = claim.text
        cited: set[tuple[int, int]] = set()
        for i in sorted(verdict.citations, key=lambda i: -grounded.citations[i].start):
            citation = grounded.citations[i]
            cited.update((citation.doc_index, page) for page in citation.pages)
            a, b = citation.start - claim.start, citation.end - claim.start
            if 0 <= a <= b <= len(text):
                text = text[:a] + " " + text[b:]
        out.append(Sentence(text, frozenset(cited)))
    return out
