"""A table cell: what the model answered for one field of one document, and where the document says so.

An answer (app.extraction_schema) becomes a Cell here. Every cell with a value is grounded on the
document in one place, ground_cell(): the verdict says what was checked and nothing more, in the
words of the grounding issue (13):

- quoted: the evidence the model copied is on the page it cited, and holds the value;
- supported: the copied words are not there (or do not hold the value), but the cited page holds the
  value itself;
- wrong_page: the evidence (or the value) is on another page than the one cited (page = that one);
- added: the model cited no page (or none that exists); Folio found the page and says it did;
- unsupported: neither the evidence nor the value is in the document. Such a cell keeps its value,
  visibly unsupported: it never turns into 'not stated'.

A cell without a value (the model left the evidence empty and said 'not stated', or found no clause
of the kind) has no verdict: there is nothing to ground.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from app.citations import DocumentIndex, normalize_for_match, parse_timestamp, resolve_page
from app.context import AppContext
from app.extraction_prompt import FieldAsk
from app.extraction_schema import ANSWER, CLAUSE, EVIDENCE, NOT_STATED, PAGE, PASSAGE, PRESENT, YES
from app.quotes import find_quote, quote_in
from app.templates import TemplateField
from ingest.document import Anchor

# Flags: what went wrong with an answer, or what the reader must know about it.
CUT_OFF = "cut_off"  # the answer did not finish within the context
BAD_OUTPUT = "bad_output"  # the answer did not parse (should not happen under the grammar)
NO_QUOTE = "no_quote"  # a value without a supporting quote
QUOTE_NOT_FOUND = "quote_not_found"  # the quote is not in the document
QUOTE_LACKS_VALUE = "quote_lacks_value"  # the quote is in the document but does not hold the value
BAD_PAGE = "page_not_in_document"  # the cited page or time does not exist
PARTIAL_DOCUMENT = "partial_document"  # only some pages were read: the document does not fit the context
OFFERED = "passage_offered"  # the model picked this passage among those Folio's word search offered

QUOTED = "quoted"
SUPPORTED = "supported"
WRONG_PAGE = "wrong_page"
ADDED = "added"
UNSUPPORTED = "unsupported"
VERDICTS = (QUOTED, SUPPORTED, WRONG_PAGE, ADDED, UNSUPPORTED)
# What a reader sees for each verdict (the window, the exports, the CLI).
VERDICT_TEXT = {
    QUOTED: "quoted",
    SUPPORTED: "supported",
    WRONG_PAGE: "wrong page",
    ADDED: "page added by Folio",
    UNSUPPORTED: "unsupported",
}


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

    @property
    def verified(self) -> bool:
        """The quote itself was found in the document (exactly or fuzzily)."""
        return self.quote_status in ("exact", "fuzzy")

    @property
    def grounded(self) -> bool:
        """Some page of the document holds this cell's evidence or value."""
        return self.verdict in (QUOTED, SUPPORTED, WRONG_PAGE, ADDED)

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


@dataclass(frozen=True)
class Unit:
    """A stretch of a document the model can cite: one page, or one time stamp of a video."""

    page: int | None
    label: str | None
    t_seconds: float | None
    text: str


def document_units(ctx: AppContext, document_id: int) -> list[Unit]:
    units: list[Unit] = []
    for seg in ctx.library.segments(document_id):
        if not seg.text:
            continue
        last = units[-1] if units else None
        if last and last.page == seg.page and last.t_seconds == seg.t_seconds:
            units[-1] = dataclasses.replace(last, text=f"{last.text}\n{seg.text}")
        else:
            units.append(Unit(seg.page, seg.label, seg.t_seconds, seg.text))
    return units


_NONE_RE = re.compile(r"\W*(?:not (?:stated|specified|mentioned|found|given)|none|n/?a|unknown)\W*", re.IGNORECASE)
_CITED_PREFIX_RE = re.compile(r"^\s*\[?\s*(?:pages?|pp?\.?)?\s*", re.IGNORECASE)


def resolve_cited(cited: str, units: list[Unit], index: DocumentIndex) -> list[int]:
    """Indexes of the units a cited marker ('4', 'p. 4', '[p. iv]', 't 00:01:23') points to."""
    text = cited.strip().strip("[]").strip()
    if not text:
        return []
    time_match = re.fullmatch(r"t?\s*(\d{1,2}(?::\d{1,2}){1,2})", text, re.IGNORECASE)
    if time_match:
        seconds = parse_timestamp(time_match.group(1))
        if seconds is None:
            return []
        timed = [(i, u.t_seconds) for i, u in enumerate(units) if u.t_seconds is not None]
        before = [i for i, t in timed if t is not None and t <= seconds + 0.5]
        return before[-1:] if before else []
    label = _CITED_PREFIX_RE.sub("", text).strip().rstrip(".")
    page = resolve_page(label, index) if label else None
    return [i for i, u in enumerate(units) if page is not None and u.page == page]


@dataclass(frozen=True)
class CellSources:
    """One document as grounding reads it."""

    units: list[Unit]
    index: DocumentIndex
    threshold: float

    @classmethod
    def load(cls, ctx: AppContext, document_id: int, threshold: float) -> CellSources:
        doc = ctx.library.get(document_id)
        index = DocumentIndex(
            label_to_page=ctx.library.page_labels(document_id),
            page_count=doc.page_count,
            duration_s=doc.duration_s,
            page_text=lambda _p: "",
        )
        return cls(document_units(ctx, document_id), index, threshold)


@dataclass(frozen=True)
class CellGrounding:
    verdict: str
    unit: int | None  # the unit holding the support (or the cited one when nothing supports it)
    passage: str
    quote_status: str
    quote_score: float
    flags: tuple[str, ...]


def ground_cell(sources: CellSources, value: str, quote: str, cited: str) -> CellGrounding:
    """The one place a cell is grounded: its quote first, then its value, on the cited page first."""
    units = sources.units
    cited_units = resolve_cited(cited, units, sources.index)
    flags: list[str] = []
    if cited.strip() and not cited_units:
        flags.append(BAD_PAGE)
    match = find_quote(quote, [u.text for u in units], cited_units, sources.threshold)
    if match.status == "empty":
        flags.append(NO_QUOTE)
    elif not match.verified:
        flags.append(QUOTE_NOT_FOUND)

    def elsewhere() -> str:
        return WRONG_PAGE if cited.strip() else ADDED

    # The quote counts as the cell's evidence only when it holds the value (the model may copy one
    # passage and answer from another): a date answered beside a signature line is not quoted.
    if match.verified and match.unit is not None:
        if value == quote or holds(quote, value):
            verdict = QUOTED if match.unit in cited_units else elsewhere()
            return CellGrounding(verdict, match.unit, quote, match.status, round(match.score, 4), tuple(flags))
        flags.append(QUOTE_LACKS_VALUE)
    # The copied words are not in the document: does the document hold the value itself?
    holder = _value_unit(value, units, cited_units, sources.threshold)
    if holder is not None:
        verdict = SUPPORTED if holder in cited_units else elsewhere()
        return CellGrounding(verdict, holder, value, match.status, round(match.score, 4), tuple(flags))
    where = cited_units[0] if cited_units else None
    return CellGrounding(UNSUPPORTED, where, "", match.status, round(match.score, 4), tuple(flags))


def _value_unit(value: str, units: list[Unit], preferred: list[int], threshold: float) -> int | None:
    if not value.strip():
        return None
    order = list(dict.fromkeys([*preferred, *range(len(units))]))
    return next((i for i in order if quote_in(value, units[i].text, threshold) or holds(units[i].text, value)), None)


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
    document_id: int, ask: FieldAsk, raw: Any, sources: CellSources, extra_flags: tuple[str, ...] = ()
) -> Cell:
    """A cell from the model's answer for one field (already checked against the schema)."""
    field = ask.field
    if ask.choosing:
        picked = int(raw.get(PASSAGE, 0))
        passage = ask.candidates[picked - 1] if 1 <= picked <= len(ask.candidates) else None
        quote = passage.text if passage else ""
        cited = (passage.label or str(passage.page)) if passage else ""
        present = passage is not None and raw.get(PRESENT) == YES
        value, claim = ("yes" if present else "no"), quote
        extra_flags = (*extra_flags, OFFERED) if passage else extra_flags
    elif field.yes_no:
        quote, present = _clean(raw.get(CLAUSE, "")), raw.get(PRESENT) == YES
        value, cited = ("yes" if present else "no"), _clean(raw.get(PAGE, ""))
        claim = quote  # a clause is its own claim: the question is whether it is in the document
    else:
        quote, value, cited = _clean(raw.get(EVIDENCE, "")), _clean(raw.get(ANSWER, "")), _clean(raw.get(PAGE, ""))
        # After copying a passage the model may still conclude that it does not state the field.
        present = bool(value) and not _NONE_RE.fullmatch(value)
        claim = value
    if not present:
        # Nothing to ground. A passage the model copied (or picked) and then judged not to answer
        # the field stays with the cell, so a reviewer can see what was considered.
        return Cell(document_id, field.key, False, value, quote, cited, flags=extra_flags, yes_no=field.yes_no)
    grounding = ground_cell(sources, claim, quote, cited)
    unit = sources.units[grounding.unit] if grounding.unit is not None else None
    return Cell(
        document_id,
        field.key,
        found=True,
        value=value,
        quote=quote,
        cited=cited,
        page=unit.page if unit else None,
        label=unit.label if unit else None,
        t_seconds=unit.t_seconds if unit else None,
        quote_status=grounding.quote_status,
        quote_score=grounding.quote_score,
        flags=(*grounding.flags, *extra_flags),
        verdict=grounding.verdict,
        passage=grounding.passage,
        yes_no=field.yes_no,
    )


def failed_cell(document_id: int, field: TemplateField, flags: tuple[str, ...]) -> Cell:
    """A cell whose request gave no usable answer (cut off, unparsable): no value, and it says why."""
    return Cell(document_id, field.key, found=False, flags=flags, yes_no=field.yes_no)
