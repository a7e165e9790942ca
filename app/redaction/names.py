"""Names to offer for redaction: the people and organisations the model reads in a document, and the
parties an extraction table holds for it.

The model's part is one function, `suggest_names`, on the session every model request shares (the
same instructions-and-document prefix as a chat question, so a document already read is not read
again). Its answer is held to a JSON schema and grounded: a name is kept only where the document
prints it exactly as the model wrote it, and the candidate finder then offers every place it is
printed. Names the model made up or changed are counted, never offered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from app.context import AppContext
from app.engine.progress import Progress
from app.engine.session import CancelToken, Session
from app.errors import Cancelled, DoesNotFit
from app.redaction.candidates import EXTRACTION, MODEL, ORGANISATION, PARTY, PERSON, Name
from app.redaction.pagetext import term_pattern
from app.store.audit import audited_settings
from assets import read_text
from inference.engine_api import Sampling
from inference.prompt import build_messages

MAX_NAMES = 30  # of each kind in one answer
NAMES_TOKENS = 800  # the longest answer asked for (the user's answer-length cap applies when lower)
MAX_NAME_CHARS = 80
WINDOW_PAGES = (10, 2)  # pages read at a time when the whole document does not fit the context
SCHEMA = {
    "type": "object",
    "properties": {
        kind: {
            "type": "array",
            "items": {"type": "string", "minLength": 2, "maxLength": MAX_NAME_CHARS},
            "maxItems": MAX_NAMES,
        }
        for kind in ("people", "organisations")
    },
    "required": ["people", "organisations"],
}


@dataclass
class Suggestions:
    names: list[Name] = field(default_factory=list)  # grounded: printed in the document as written
    dropped: int = 0  # names the model gave that the document does not print as written
    note: str = ""  # how the document was read, when not in one piece
    model: str = ""


def suggest_names(
    ctx: AppContext,
    session: Session,
    document_id: int,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: CancelToken | None = None,
) -> Suggestions:
    """Ask the model for the people and organisations a library document names; keep those it prints.
    A stop (`cancel`) ends the request under way and every later one: Cancelled."""
    token = cancel or CancelToken()
    emit = on_progress or (lambda _p: None)
    doc = ctx.library.get(document_id)
    pages = [p.number for p in ctx.library.pages(document_id)]
    text = "\n".join(ctx.library.page_text(document_id, n) for n in pages)
    question = read_text("prompts", "redaction_names.md")
    instructions = read_text("prompts", "answer.md")  # a chat's prefix: a document already read is reused
    out = Suggestions()
    tokens = min(NAMES_TOKENS, ctx.settings.max_answer_tokens)
    windows: list[list[int] | None] = [None]
    for size in (0, *WINDOW_PAGES):
        if size:
            windows = [pages[i : i + size] for i in range(0, len(pages), size)]
            out.note = f"the document does not fit the model's context: read {size} page(s) at a time"
        try:
            answers = []
            for n, window in enumerate(windows, start=1):
                if token.cancelled:
                    raise Cancelled()
                if window is not None:
                    emit(Progress(f"names: pages {window[0]}-{window[-1]} ({n} of {len(windows)})"))
                prepared = session.prepare(
                    ctx,
                    [document_id],
                    lambda documents: build_messages(instructions, documents, [], question),
                    think=False,
                    answer_tokens=tokens,
                    pages={document_id: set(window)} if window is not None else None,
                )
                out.model = prepared.label
                sampling = Sampling(
                    temperature=0.0, top_p=1.0, top_k=1, min_p=0.0, presence_penalty=0.0, max_tokens=1200
                )
                request = prepared.request(sampling=sampling, json_schema=json.dumps(SCHEMA))
                result = session.run(prepared, request, cancel=token, on_progress=emit)
                if result.cancelled:
                    raise Cancelled()
                answers.append(result.text)
            break
        except DoesNotFit:
            if size == WINDOW_PAGES[-1]:
                raise
    ctx.audit.record(
        "question",
        documents=[doc.sha256],
        model_sha256=prepared.sha256,
        settings=audited_settings(ctx.settings),
        details={"purpose": "names to redact", "question": question, "model": out.model, "requests": len(windows)},
    )
    seen: set[tuple[str, str]] = set()
    for reply in answers:
        for key, kind in (("people", PERSON), ("organisations", ORGANISATION)):
            for name in _listed(reply, key):
                name = " ".join(name.split())
                pattern = term_pattern(name, case=True)
                if (kind, name) in seen or pattern is None:
                    continue
                seen.add((kind, name))
                if pattern.search(text):
                    out.names.append(Name(name, kind, MODEL))
                else:
                    out.dropped += 1
    return out


def _listed(reply: str, key: str) -> list[str]:
    """The strings of one array of the answer, read leniently: an answer cut off by its length limit
    still gives the names it finished."""
    found = re.search(rf'"{key}"\s*:\s*\[(.*?)(?:\]|$)', reply, re.S)
    if found is None:
        return []
    names = []
    for raw in re.findall(r'"((?:[^"\\]|\\.)*)"', found.group(1)):
        try:
            names.append(str(json.loads(f'"{raw}"')))
        except ValueError:
            continue
    return names


def party_names(ctx: AppContext, document_id: int) -> list[Name]:
    """The parties an extraction table holds for the document (a reviewer's correction first), one
    name per party: 'Acme Corp. (the "Supplier"); Beta LLC' gives Acme Corp. and Beta LLC."""
    from app.extraction.review import field_values

    names: list[Name] = []
    for value in field_values(ctx, document_id, "parties"):
        for part in re.split(r";|\n|\band\b(?=\s+[A-Z])", value):
            part = re.sub(r"\([^)]*\)", " ", part)  # a defined term: (the "Supplier")
            part = " ".join(part.strip(" ,.\"'“”").split())
            if len(part) >= 3 and any(ch.isalpha() for ch in part):
                names.append(Name(part, PARTY, EXTRACTION))
    return list(dict.fromkeys(names))
