"""One document's checks as a list of findings: what the window lists, `folio check` prints, the
database keeps and the exports write.

A finding is one flat record whatever it is about (a defined term, a problem with one, a
cross-reference, a key date or an input to one), so it is stored, exported, printed and sampled for
measurement the same way. `problem` says whether it is something for the lawyer to fix.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from app.checks import dates as key
from app.checks import references as refs
from app.checks import terms
from app.checks.outline import outline
from app.checks.text import CheckText, Place

# Bump when a rule changes: a stored result made by other rules is made again.
RULES_VERSION = "checks-1"

TERMS = "terms"
REFERENCES = "references"
DATES = "dates"
SECTIONS = (TERMS, REFERENCES, DATES)

TERM = "term"  # a defined term, with where it is defined and how often it is used
REFERENCE = "reference"
INPUT = "input"  # an input of the key dates: an agreement date, a term, a notice period
NOTE = "note"  # what the key dates could not be computed from, and why
OK = "ok"

# The words each problem is shown with, everywhere.
PROBLEM_WORDS = {
    terms.NEVER_USED: "defined, never used",
    terms.DEFINED_TWICE: "defined twice",
    terms.OTHER_CASE: "other capitalisation",
    terms.CLOSE_MATCH: "close to a defined term",
    terms.NOT_DEFINED: "used, never defined",
    refs.MISSING: "no such clause",
    refs.ITEM_MISSING: "no such item",
    refs.NOT_ATTACHED: "not attached",
    refs.HEADING_DIFFERS: "heading differs",
    refs.WRONG_DIRECTION: "wrong direction",
}


@dataclass(frozen=True)
class Finding:
    section: str  # TERMS, REFERENCES or DATES
    kind: str  # TERM, a term problem, REFERENCE, INPUT, NOTE, or a key date's kind (expiry, renewal, notice deadline)
    status: str  # OK, a problem (PROBLEM_WORDS), 'unchecked', 'resolved', 'missing'
    text: str  # the term, the reference as printed, the date's label, the input's name
    note: str  # what was found or what is wrong, in plain words
    cited: str = ""  # where it is: 'p. 4', '§ 12.3'
    page: int | None = None
    label: str | None = None
    quote: str = ""  # the words of the document it rests on
    value: str = ""  # a term's uses, a date (ISO), an input's value
    how: str = ""  # a key date's computation
    target_cited: str = ""  # where a reference points, where a term is defined again
    target_page: int | None = None
    target_label: str | None = None
    problem: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        known: dict[str, Any] = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)

    @property
    def shown_status(self) -> str:
        return PROBLEM_WORDS.get(self.status, self.status)


@dataclass(frozen=True)
class CheckReport:
    document_id: int | None
    title: str
    sha256: str
    findings: tuple[Finding, ...]
    rules: str = RULES_VERSION
    elapsed_ms: float = 0.0
    created_at: str = ""
    run_id: int | None = None
    inputs_from: str = "document"  # where the key dates' inputs came from: the document, or an extraction run
    counts: dict[str, int] = field(default_factory=dict)

    def section(self, name: str) -> list[Finding]:
        return [f for f in self.findings if f.section == name]

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.problem]

    def key_dates(self) -> list[Finding]:
        return [f for f in self.findings if f.section == DATES and f.kind in (key.EXPIRY, key.RENEWAL, key.NOTICE)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "document_id": self.document_id,
            "title": self.title,
            "sha256": self.sha256,
            "rules": self.rules,
            "run_id": self.run_id,
            "created_at": self.created_at,
            "elapsed_ms": round(self.elapsed_ms, 1),
            "inputs_from": self.inputs_from,
            "counts": summary_counts(self.findings),
            "findings": [f.to_dict() for f in self.findings],
        }


def summary_counts(findings: tuple[Finding, ...] | list[Finding]) -> dict[str, int]:
    """Findings per section, and problems per kind."""
    out: dict[str, int] = {}
    for f in findings:
        if f.kind in (TERM, REFERENCE):
            out[f"{f.kind}s"] = out.get(f"{f.kind}s", 0) + 1
        if f.section == DATES and f.kind in (key.EXPIRY, key.RENEWAL, key.NOTICE):
            out["key dates"] = out.get("key dates", 0) + 1
        if f.problem:
            out["problems"] = out.get("problems", 0) + 1
            out[f.status] = out.get(f.status, 0) + 1
    return out


def run_checks(
    text: CheckText,
    *,
    document_id: int | None = None,
    sha256: str = "",
    table: dict[str, key.KeyInput] | None = None,
    inputs_from: str = "document",
) -> CheckReport:
    """Every check on one document's text; no model, no database."""
    started = time.perf_counter()
    shape = outline(text)
    found: list[Finding] = []
    report = terms.check_terms(shape)
    found += [_term(t) for t in report.terms]
    found += [_term_problem(p) for p in report.problems]
    found += [_reference(r) for r in refs.find_references(shape)]
    found += _dates(key.key_dates(shape, table))
    elapsed = (time.perf_counter() - started) * 1000
    return CheckReport(document_id, text.title, sha256, tuple(found), elapsed_ms=elapsed, inputs_from=inputs_from)


def _where(place: Place | None) -> dict[str, Any]:
    if place is None:
        return {}
    return {"cited": place.cited(), "page": place.page, "label": place.label}


def _target(place: Place | None) -> dict[str, Any]:
    if place is None:
        return {}
    return {"target_cited": place.cited(), "target_page": place.page, "target_label": place.label}


def _term(t: terms.DefinedTerm) -> Finding:
    d = t.first
    times = f"used {t.uses} time{'s' if t.uses != 1 else ''}"
    how = "points to a definition elsewhere" if d.pointer else "defined"
    note = f"{how} on {d.place.cited()}; {times}"
    if len(t.definitions) > 1:
        note += f"; defined {len(t.definitions)} times"
    return Finding(TERMS, TERM, OK, t.term, note, quote=d.quote, value=str(t.uses), **_where(d.place))


def _term_problem(p: terms.TermProblem) -> Finding:
    other = p.others[0] if p.others else None
    return Finding(TERMS, p.kind, p.kind, p.term, p.note, quote=p.quote, problem=True, **_where(p.place),
                   **_target(other))  # fmt: skip


def _reference(r: refs.Reference) -> Finding:
    target = r.target.place if r.target is not None else None
    return Finding(REFERENCES, REFERENCE, r.status, r.written, r.note, quote=r.quote, value=r.key,
                   problem=r.problem, **_where(r.place), **_target(target))  # fmt: skip


def _dates(result: key.KeyDates) -> list[Finding]:
    out: list[Finding] = []
    for i in result.inputs:
        status = OK if i.known else ("missing" if i.note == key.NOT_STATED else "unclear")
        value = i.value.isoformat() if hasattr(i.value, "isoformat") else i.shown  # type: ignore[union-attr]
        note = i.shown if i.known else i.note
        if i.known and i.note:
            note += f" ({i.note})"
        out.append(Finding(DATES, INPUT, status, i.name, note, quote=i.quote, value=value or "", how=i.source,
                           **_where(i.place)))  # fmt: skip
    for d in result.dates:
        out.append(Finding(DATES, d.kind, OK, d.label, f"{key.show_date(d.when)}: {d.how}", value=d.when.isoformat(),
                           how=d.how, **_where(d.place)))  # fmt: skip
    out += [Finding(DATES, NOTE, OK, "note", n) for n in result.notes]
    return out
