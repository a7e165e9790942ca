"""What one extraction request says: the chat's own system + document turn, then short user turns.

A short answer is asked twice in one conversation: first its plain question, as a user would ask it
in the chat (the look, app.extraction.plain), then, unless that answer says it is not stated, the
form. A yes/no clause goes straight to the form. The form's user turn names the field(s), what
counts, and the passages a word search (SQLite FTS5 over the stored segments, BM25; a short answer
also gets the document's opening) found for each, numbered: pointers into the whole document, never
a cut of it. It then asks for the evidence before the answer (app.extraction.schema): the number of
the passage that states it, or the passage copied.
Because every request starts with exactly the chat's prefix, the engine's
state cache serves all of a document's fields (and its chat) from one reading: a field costs only
its own few dozen tokens.

When a document does not fit the model's context, Folio does not cut it silently: it reads its opening
pages and then the pages the word search ranks highest for the template's fields, in document order,
says so in the prompt (the document's title carries the page list) and flags every cell of that
document.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from app.context import AppContext
from app.extraction.schema import ANSWER, CLAUSE, EVIDENCE, NOT_STATED, PAGE, PASSAGE, PRESENT, STATED
from app.extraction.templates import TemplateField
from app.pages import page_ranges
from app.store.search import Passage, Search, content_words
from assets import read_text
from inference.chat_format import Message
from inference.prompt import PromptDocument, build_messages
from ingest.document import Anchor

CANDIDATES = 3  # passages a yes/no clause may be picked from
FIELD_CANDIDATES = 4  # passages a short answer may be picked from (the opening counts as one)
OPENING_WORDS = 96  # a title and an opening paragraph that names three parties with their addresses
# Bumped whenever the request's shape changes in a way the prompt files do not show (schema, hint
# rules): a run is keyed on the design, so cells asked one way never mix with cells asked another.
DESIGN_VERSION = 8
LOOK_TOKENS = 120  # the longest plain answer: the chat's instructions ask for concise answers
# A document that does not fit: the share of the page budget read from its start, in order, before
# the word search's pages (10-25% measured on CUAD, benchmarks/bench_page_choice.py; 15% read the
# most evidence pages).
OPENING_SHARE = 0.15

_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]+")
PROMPT_FILES = (
    "answer.md",
    "extract.md",
    "extract_field.md",
    "extract_field_choice.md",
    "extract_clause.md",
    "extract_choice.md",
    "decide_clause.md",
    "decide_field.md",
    "choose_passage.md",
)
_PLACEHOLDER_RE = re.compile(r"\{(key|name|description|hints|candidates)\}")


@dataclass(frozen=True)
class PageChoice:
    """The pages of a document that are read when it does not fit whole (None: all of it)."""

    pages: tuple[int, ...] | None = None
    page_count: int = 0

    @property
    def partial(self) -> bool:
        return self.pages is not None

    def note(self) -> str:
        if self.pages is None:
            return ""
        return (
            f"only {len(self.pages)} of {self.page_count} pages ({page_ranges(self.pages)}), chosen by word search "
            "for the template's fields; the whole document does not fit the model's context"
        )


def search_words(field: TemplateField) -> list[str]:
    """The words a passage holding the field is likely to use: the template's search words for it,
    else the content words of its name and description."""
    return content_words(field.search or f"{field.name} {field.description}")


def hint_pages(ctx: AppContext, document_id: int, field: TemplateField, limit: int) -> list[int]:
    """Pages of the document where FTS5 finds the field's words, best first."""
    return Search(ctx.db).document_pages(document_id, search_words(field), limit=limit)


@dataclass(frozen=True)
class FieldAsk:
    """How one field is asked of one document: its field, the passages offered to choose from, and
    when there are none, a hint saying the word search found nothing (the model looks itself)."""

    field: TemplateField
    hint: str = ""
    candidates: tuple[Passage, ...] = ()

    @property
    def choosing(self) -> bool:
        return bool(self.candidates)


def ask_field(
    ctx: AppContext, document_id: int, field: TemplateField, choice: PageChoice | None = None, *, hints: bool = True
) -> FieldAsk:
    """The passages that use the field's words, to pick from. The model still reads the whole
    document: a short answer may come from elsewhere (it then copies its evidence itself), and a
    search that finds nothing is said as such: a hint, never a verdict.

    Picking beats copying for a small model: measured with the 1.5B on CUAD, a copied "evidence" was
    often a line of the instructions or a passage cut before the second party (issue 19)."""
    words = search_words(field) if hints else []
    if not words:
        return FieldAsk(field)
    search = Search(ctx.db)
    keep = choice.pages if choice is not None and choice.pages is not None else None
    limit = CANDIDATES if field.yes_no else FIELD_CANDIDATES
    found = [p for p in search.document_passages(document_id, words, limit=limit * 4) if keep is None or p.page in keep]
    if not field.yes_no:
        found = _with_opening(search.opening(document_id, words=OPENING_WORDS), found, words, keep)
    if found:
        return FieldAsk(field, candidates=tuple(found[:limit]))
    return FieldAsk(field, f"A word search for words such a passage uses ({', '.join(words[:6])}) found none.")


def _with_opening(
    opening: Passage | None, found: list[Passage], words: list[str], keep: Collection[int] | None
) -> list[Passage]:
    """The document's opening goes first when it uses one of the field's words: a title, the parties
    and the date stand there, and BM25 ranks a long opening paragraph low. Passages cut from the
    opening are then left out, so that no passage is offered twice."""
    if opening is None or (keep is not None and opening.page not in keep):
        return found
    have = [w.lower() for w in _WORD_RE.findall(opening.text)]
    if not any(h.startswith(w) for w in words for h in have):
        return found
    flat = " ".join(opening.text.split())
    return [opening, *(p for p in found if not (p.page == opening.page and p.text in flat))]


def _candidate_lines(ask: FieldAsk) -> str:
    return "\n".join(
        f'({n}) {Anchor(page=p.page, label=p.label).marker()} "{p.text}"' for n, p in enumerate(ask.candidates, 1)
    )


def field_block(ask: FieldAsk) -> str:
    """One field's question: what counts, where a word search points (or what it offers), and what to
    write in which order."""
    f = ask.field
    values = {
        "key": f.key,
        "name": f.name,
        "description": f.description or "-",
        "hints": ask.hint,
        "candidates": _candidate_lines(ask),
    }
    if ask.choosing:
        name = "extract_choice.md" if f.yes_no else "extract_field_choice.md"
    else:
        name = "extract_clause.md" if f.yes_no else "extract_field.md"
    # One pass, so a field's own text (a user template's) is never read as a placeholder.
    text = _PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1), m.group(0)), read_text("prompts", name).strip())
    return "\n".join(line for line in text.splitlines() if line.strip())


def _filled(name: str, f: TemplateField, candidates: str = "") -> str:
    values = {"key": f.key, "name": f.name, "description": f.description or "-", "hints": "", "candidates": candidates}
    # One pass, so a field's own text (a user template's) is never read as a placeholder.
    text = _PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1), m.group(0)), read_text("prompts", name).strip())
    return "\n".join(line for line in text.splitlines() if line.strip())


def decide_messages(
    documents: list[PromptDocument], field: TemplateField, choice: PageChoice | None = None
) -> list[Message]:
    """A scored decision's request (app.extraction.decide): the chat's system + document turn and
    the field's yes/no question, answered by the first token alone."""
    name = "decide_clause.md" if field.yes_no else "decide_field.md"
    return _messages(documents, [], _filled(name, field), choice)


def choose_messages(documents: list[PromptDocument], ask: FieldAsk, choice: PageChoice | None = None) -> list[Message]:
    """Which of the passages the word search offered is the clause: scored on the passages' numbers."""
    return _messages(documents, [], _filled("choose_passage.md", ask.field, _candidate_lines(ask)), choice)


def user_turn(blocks: list[str]) -> str:
    """The request's question: the fields' blocks inside the reply instructions."""
    return read_text("prompts", "extract.md").strip().replace("{fields}", "\n\n".join(blocks))


@dataclass(frozen=True)
class Look:
    """A short answer's plain question and what the model answered, before the form."""

    question: str
    answer: str

    def history(self) -> list[Message]:
        return [Message("user", self.question), Message("assistant", self.answer)]


def look_messages(
    documents: list[PromptDocument], field: TemplateField, choice: PageChoice | None = None
) -> list[Message]:
    """A short answer's first request: the chat's system + document turn and the field's plain question."""
    return _messages(documents, [], field.plain_question, choice)


def extraction_messages(
    documents: list[PromptDocument], asks: list[FieldAsk], choice: PageChoice | None = None, look: Look | None = None
) -> list[Message]:
    """The chat messages for one form request: the very system + document turn a chat would start
    with (or, for a document that does not fit, its chosen pages, labelled), the plain question and
    its answer when the field was looked at first, then the fields' form.
    `documents` are read with `pages_of(choice)`."""
    history = look.history() if look is not None else []
    return _messages(documents, history, user_turn([field_block(a) for a in asks]), choice)


def _messages(
    documents: list[PromptDocument], history: list[Message], user: str, choice: PageChoice | None
) -> list[Message]:
    if choice is not None and choice.partial:
        documents = [_labelled(d, choice) for d in documents]
    return build_messages(read_text("prompts", "answer.md"), documents, history, user)


def pages_of(document_id: int, choice: PageChoice | None) -> dict[int, Collection[int]] | None:
    """The pages of the document to read for this choice (None: all of them)."""
    return {document_id: choice.pages} if choice is not None and choice.pages is not None else None


def _labelled(document: PromptDocument, choice: PageChoice) -> PromptDocument:
    return dataclasses.replace(document, title=f"{document.title} ({choice.note()})")


def choose_pages(ctx: AppContext, document_id: int, fields: Sequence[TemplateField], budget_tokens: int) -> PageChoice:
    """Pages to read when the whole document does not fit: the opening pages in order, up to
    OPENING_SHARE of the budget (the first page always), then each field's best FTS5 pages in turn,
    until the estimated budget is used."""
    doc = ctx.library.get(document_id)
    texts: dict[int, int] = {}
    for seg in ctx.library.segments(document_id):
        if seg.page is not None:
            texts[seg.page] = texts.get(seg.page, 0) + len(seg.text) + 1
    chars = sum(texts.values()) or 1
    per_char = max(doc.token_estimate, 1) / chars
    ranked = [hint_pages(ctx, document_id, f, limit=12) for f in fields]
    chosen: list[int] = []
    used = 0.0

    def take(page: int, limit: float = budget_tokens) -> bool:
        nonlocal used
        cost = texts.get(page, 0) * per_char + 8  # the page marker and line breaks
        if page in chosen or page not in texts or used + cost > limit:
            return False
        chosen.append(page)
        used += cost
        return True

    if texts:
        take(min(texts))
    # The opening pages next, in order: the title, the parties, the dates and, in most contracts, the
    # term and its renewal stand in the first sections, where a word search over a long document ranks
    # them below its addenda (GOOSEHEAD's term and renewal, p. 5, came after state riders that repeat
    # "renewal"). Measured against CUAD's evidence pages by benchmarks/bench_page_choice.py.
    for page in sorted(texts):
        if page not in chosen and not take(page, budget_tokens * OPENING_SHARE):
            break
    depth = 0
    while any(depth < len(r) for r in ranked):
        for pages in ranked:
            if depth < len(pages):
                take(pages[depth])
        depth += 1
    return PageChoice(tuple(sorted(chosen)), doc.page_count)


def design_key() -> str:
    """What a run's cells were asked with: the prompt texts and the design version, hashed."""
    digest = hashlib.sha256(f"design {DESIGN_VERSION}\n".encode())
    for name in PROMPT_FILES:
        digest.update(read_text("prompts", name).encode("utf-8"))
    for key in (EVIDENCE, CLAUSE, PAGE, ANSWER, PRESENT, NOT_STATED, STATED, PASSAGE):
        digest.update(key.encode())
    return f"v{DESIGN_VERSION}-{digest.hexdigest()[:16]}"
