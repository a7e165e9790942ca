"""A table cell: what the model answered for one field of one document, and where the document says so.

An answer (app.extraction.schema) becomes a Cell here. Every cell with a value is grounded by the
same code as a chat answer's sentences (app.citations.grounding, issue 13), so a cell gets the same verdicts
with the same meaning:

- quoted: the evidence the model copied is on the page it cited, and that passage holds the value;
- supported: the cited page holds the value (its facts, names and words), whatever the copied words;
- wrong_page: the value (or its evidence) stands on another page than the one cited (page = that one);
- added: the model cited no page; Folio found the page and says it did;
- unsupported: no page holds the value. Such a cell keeps its value, visibly unsupported: it never
  turns into 'not stated'.

A value too short to look for by itself ('Delaware', 'Consulting Agreement') is grounded through
its evidence, when the evidence holds it. A cell without a value (the model left the evidence empty
and said 'not stated', or found no clause of the kind) has no verdict: there is nothing to ground.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from app.citations.grounding import (
    ADDED,
    EXEMPT,
    PARTLY,
    QUOTED,
    SUPPORTED,
    UNSUPPORTED,
    WRONG_PAGE,
    Cited,
    Grounding,
    Sources,
)
from app.citations.markers import parse_timestamp, resolve_page
from app.citations.quotes import DEFAULT_THRESHOLD, find_quote, normalize_for_match
from app.citations.verdicts import LABELS
from app.extraction.prompt import FieldAsk
from app.extraction.schema import ANSWER, CLAUSE, EVIDENCE, NOT_STATED, PAGE, PASSAGE, PRESENT, YES
from app.extraction.templates import TemplateField
from ingest.document import Anchor, parse_cited

# Flags: what went wrong with an answer, or what the reader must know about it.
CUT_OFF = "cut_off"  # the answer did not finish within the context
BAD_OUTPUT = "bad_output"  # the answer did not parse (should not happen under the grammar)
NO_QUOTE = "no_quote"  # a value without a supporting quote
QUOTE_NOT_FOUND = "quote_not_found"  # the quote is not in the document
QUOTE_LACKS_VALUE = "quote_lacks_value"  # the quote is in the document but does not hold the value
BAD_PAGE = "page_not_in_document"  # the cited page or time does not exist
PARTIAL_DOCUMENT = "partial_document"  # only some pages were read: the document does not fit the context
OFFERED = "passage_offered"  # the model picked this passage among those Folio's word search offered
PRESUPPOSED = "presupposed_not_stated"  # not asked: the short answer it presupposes is not stated
NOT_NAMED = "not_named_so"  # a value the document never calls by the field's words (app.extraction.named)
NOT_HELD = "not_in_document"  # a value no page of the document holds (app.extraction.held)
MOVED = "evidence_found"  # Folio's evidence: the sentence that calls the value so (app.extraction.named)
# Flags that describe the evidence the model gave; a cell given other evidence drops them.
EVIDENCE_FLAGS = (NO_QUOTE, QUOTE_NOT_FOUND, QUOTE_LACKS_VALUE, BAD_PAGE, OFFERED)

# A cell's verdicts are the chat's (app.citations.grounding), named the same way everywhere (app.citations.verdicts).
VERDICTS = (QUOTED, SUPPORTED, WRONG_PAGE, ADDED, PARTLY, UNSUPPORTED)
VERDICT_TEXT = {v: LABELS[v] for v in VERDICTS}


@dataclass(frozen=True)
class Cell:
    document_id: int
    field_key: str
    found: bool  # a value (short answer) or a clause judged present (yes/no)
    value: str = ""  # the answer; 'yes' / 'no' for a yes/no clause
    quote: str = ""  # the evidence or clause as the model copied it
    cited: str = ""  # the page/time as the model wrote it
    page: int | None = None  # where the support is: grounding's page, else the cited page
    label: str | None = None
    t_seconds: float | None = None
    quote_status: str = "none"  # exact | fuzzy | not_found | empty | none
    quote_score: float = 0.0
    flags: tuple[str, ...] = ()
    verdict: str = ""  # one of VERDICTS for a cell with a value; '' when there is nothing to ground
    passage: str = ""  # the supporting words as the page has them (what the viewer marks)
    yes_no: bool = False
    # The decision (a clause present, a value stated) as the model scored it (app.extraction.decide):
    # P(yes) from its own next-token probabilities, the line it was judged against, how it was read
    # ('logits', 'logprobs', or 'generated' where no probabilities were available), and the
    # probability that the decision is right. None where the decision was not scored.
    score: float | None = None
    threshold: float | None = None
    decided_by: str = ""
    confidence: float | None = None

    @property
    def verified(self) -> bool:
        """The quote itself was found in the document (exactly or fuzzily)."""
        return self.quote_status in ("exact", "fuzzy")

    @property
    def grounded(self) -> bool:
        """Some page of the document holds this cell's evidence or value."""
        return self.verdict in (QUOTED, SUPPORTED, WRONG_PAGE, ADDED, PARTLY)

    @property
    def anchor_text(self) -> str:
        if self.t_seconds is not None:
            return Anchor(t_seconds=self.t_seconds).marker()
        if self.page is not None:
            return Anchor(page=self.page, label=self.label).marker()
        return ""

    @property
    def display(self) -> str:
        if self.yes_no and not (set(self.flags) & {CUT_OFF, BAD_OUTPUT}):
            return "Yes" if self.found else "No"
        if self.found:
            return self.value
        return "no answer" if set(self.flags) & {CUT_OFF, BAD_OUTPUT} else NOT_STATED

    @property
    def verdict_text(self) -> str:
        return VERDICT_TEXT.get(self.verdict, "")

    @property
    def sureness(self) -> str:
        """The decision's confidence in a word (high / check / low), '' when it was not scored."""
        from app.extraction.decide import confidence_word

        return confidence_word(self.confidence)

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["flags"] = list(self.flags)
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Cell:
        values = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        values["flags"] = tuple(values.get("flags", ()))
        values["found"] = bool(values["found"])
        return cls(**values)


_NONE_RE = re.compile(r"\W*(?:not (?:stated|specified|mentioned|found|given)|none|n/?a|unknown)\W*", re.IGNORECASE)
_CITED_PREFIX_RE = re.compile(r"^\s*\[?\s*(?:pages?|pp?\.?)?\s*", re.IGNORECASE)


def cited_anchors(cited: str, sources: Sources) -> list[Cited]:
    """What a cited marker ('4', 'p. 4', '[p. iv]', 't 00:01:23', '§ 12.3', '¶ 41') points to, in
    grounding's terms: a page, paragraph or time of the one document, or an anchor to nothing when no
    such place exists."""
    text = cited.strip().strip("[]").strip()
    if not text:
        return []
    time_match = re.fullmatch(r"t?\s*(\d{1,2}(?::\d{1,2}){1,2})", text, re.IGNORECASE)
    if time_match:
        seconds = parse_timestamp(time_match.group(1))
        if seconds is not None and sources.unit_of(1, None, seconds) is not None:
            return [Cited(1, None, seconds, cited)]
        return [Cited(1, None, None, cited)]
    place = parse_cited(text)
    if place is not None and place.kind in ("section", "paragraph"):
        index = sources.indexes[0]
        if place.kind == "paragraph":
            return [Cited(1, int(place.value), None, cited)]
        at = index.label_to_page.get(place.value) if index.unit == "paragraph" else None
        pages = (at,) if at is not None else index.section_pages(place.value)
        return [Cited(1, pages[0] if pages else None, None, cited)]
    label = _CITED_PREFIX_RE.sub("", text).strip().rstrip(".")
    page = resolve_page(label, sources.indexes[0]) if label else None
    return [Cited(1, page, None, cited)]


@dataclass(frozen=True)
class CellGrounding:
    grounding: Grounding  # issue 13's verdict and where the support is
    quote_status: str
    quote_score: float
    flags: tuple[str, ...]

    @property
    def verdict(self) -> str:
        return self.grounding.verdict


def ground_cell(
    sources: Sources, value: str, quote: str, cited: str, threshold: float, field_name: str = ""
) -> CellGrounding:
    """The one place a cell is grounded: the value as a claim, with the copied evidence as its quote."""
    anchors = cited_anchors(cited, sources)
    cited_units = [u for c in anchors if (u := sources.unit_of(c.doc_index, c.page, c.t_seconds)) is not None]
    flags: list[str] = []
    if anchors and not cited_units:
        flags.append(BAD_PAGE)
    match = find_quote(quote, [u.text for u in sources.units], cited_units, threshold)
    if match.status == "empty":
        flags.append(NO_QUOTE)
    elif not match.verified:
        flags.append(QUOTE_NOT_FOUND)
    # The quote counts as the cell's evidence only when it holds the value (the model may copy one
    # passage and answer from another): a date answered beside a signature line is not quoted.
    evidence = quote if quote and (value == quote or holds(quote, value)) else None
    if match.verified and evidence is None:
        flags.append(QUOTE_LACKS_VALUE)
    grounding = sources.ground(value, cited=anchors, quote=evidence)
    if grounding.verdict in (EXEMPT, UNSUPPORTED):
        # Nothing in the value to look for by itself ('French law'), or a value the passages do not
        # hold as a sentence would ('Non-Competition Agreement Amendment No. 1' from a title set in
        # lines): the evidence is the claim when it holds the value and is in the document, else the
        # value is read under its field's name, as a chat sentence under its heading.
        if evidence is not None and match.verified:
            grounding = sources.ground(evidence, cited=anchors, quote=evidence)
        elif grounding.verdict == EXEMPT:
            grounding = sources.ground(value, cited=anchors, context=field_name)
        if grounding.verdict == EXEMPT:
            grounding = Grounding(UNSUPPORTED, quote=quote or None, quote_found=match.verified, cited=(cited,))
    return CellGrounding(grounding, match.status, round(match.score, 4), tuple(flags))


_WORD_RE = re.compile(r"[^\W_]+")
_STOP = frozenset("a an and the of or to in on by for as at is be with".split())  # noqa: SIM905 (a word list)


def _words(text: str) -> list[str]:
    # A plural and its singular are one word here ('one (1) years' holds '1 year').
    return [w.removesuffix("s") if len(w) > 3 else w for w in _WORD_RE.findall(normalize_for_match(text))]


def holds(text: str, value: str) -> bool:
    """Every word of the value stands in the text within a short stretch (a value in other words
    order, with the text's own punctuation and defined terms between: 'Acme LLC and Beta Inc.' in
    'Acme LLC (the "Seller") and Beta Inc. (the "Buyer")')."""
    need = [w for w in _words(value) if w not in _STOP]
    if not need:
        return False
    tokens = _words(text)
    span = max(3 * len(need), 24)
    wanted = set(need)
    return any(token in wanted and wanted <= set(tokens[start : start + span]) for start, token in enumerate(tokens))


def _clean(text: Any) -> str:
    # The grammar allows any \uXXXX escape, so a lone surrogate could arrive; SQLite cannot store it.
    return str(text).encode("utf-8", "replace").decode("utf-8").strip()


def cell_from_answer(
    document_id: int,
    ask: FieldAsk,
    raw: Any,
    sources: Sources,
    extra_flags: tuple[str, ...] = (),
    threshold: float = DEFAULT_THRESHOLD,
) -> Cell:
    """A cell from the model's answer for one field (already checked against the schema)."""
    field = ask.field
    picked = int(raw.get(PASSAGE, 0)) if ask.choosing else 0
    passage = ask.candidates[picked - 1] if 1 <= picked <= len(ask.candidates) else None
    if passage is not None:
        # The passage Folio offered is the evidence, word for word as its page has it.
        quote, cited = passage.text, passage.label or str(passage.page)
        extra_flags = (*extra_flags, OFFERED)
    else:
        quote = _clean(raw.get(CLAUSE if field.yes_no else EVIDENCE, ""))
        cited = _clean(raw.get(PAGE, ""))
    if field.yes_no:
        present = raw.get(PRESENT) == YES and bool(quote)
        value = "yes" if present else "no"
        claim = quote  # a clause is its own claim: the question is whether it is in the document
    else:
        value = _clean(raw.get(ANSWER, ""))
        # After picking or copying a passage the model may still conclude that it does not state the field.
        present = bool(value) and not _NONE_RE.fullmatch(value)
        claim = value
    if not present:
        # Nothing to ground. A passage the model copied (or picked) and then judged not to answer
        # the field stays with the cell, so a reviewer can see what was considered.
        return Cell(document_id, field.key, False, value, quote, cited, flags=extra_flags, yes_no=field.yes_no)
    return grounded_cell(document_id, field, value, claim, quote, cited, sources, extra_flags, threshold)


def grounded_cell(
    document_id: int,
    field: TemplateField,
    value: str,
    claim: str,
    quote: str,
    cited: str,
    sources: Sources,
    extra_flags: tuple[str, ...] = (),
    threshold: float = DEFAULT_THRESHOLD,
) -> Cell:
    """A found cell: its claim grounded with its quote, opening where the grounding (or the cited page) says."""
    checked = ground_cell(sources, claim, quote, cited, threshold, field.name)
    g = checked.grounding
    where = (g.page, g.label, g.t_seconds)
    if g.page is None and g.t_seconds is None:
        # Nothing holds it: the cell still opens where the model said it stands, if that exists.
        units = [u for c in cited_anchors(cited, sources) if (u := sources.unit_of(1, c.page, c.t_seconds)) is not None]
        if units:
            unit = sources.units[units[0]]
            where = (unit.page, unit.label, unit.t_seconds)
    return Cell(
        document_id,
        field.key,
        found=True,
        value=value,
        quote=quote,
        cited=cited,
        page=where[0],
        label=where[1],
        t_seconds=where[2],
        quote_status=checked.quote_status,
        quote_score=checked.quote_score,
        flags=(*checked.flags, *extra_flags),
        verdict=g.verdict,
        passage=g.passage,
        yes_no=field.yes_no,
    )


def not_stated_cell(document_id: int, field: TemplateField, flags: tuple[str, ...]) -> Cell:
    """A short answer whose plain answer says the document does not state it (app.extraction.plain)."""
    return Cell(document_id, field.key, False, NOT_STATED, flags=flags)


def failed_cell(document_id: int, field: TemplateField, flags: tuple[str, ...]) -> Cell:
    """A cell whose request gave no usable answer (cut off, unparsable): no value, and it says why."""
    return Cell(document_id, field.key, found=False, flags=flags, yes_no=field.yes_no)
