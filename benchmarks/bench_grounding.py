"""Grounding against ground truth: CUAD's expert labels on real contracts, a real Qwen-family model.

Questions: for each contract of the chosen sets of ../shared/corpus (`--set pdf,tune,check`: the
tuning contracts of contracts_pdf and contracts_tune, and the held-out contracts_check, reported side
by side, check first), the six CUAD categories below, asked as a user would (`ChatService.ask`, a new
conversation each, so every question of a contract restores the same document snapshot). The model
is Qwen2.5-Coder-1.5B-Instruct Q4_K_M (benchmarks/eval_model.py). Each question is asked in three
phrasings (PHRASINGS, written before any check-set answer was seen): the benchmark's own, the same
with "Answer in one sentence and cite the page.", and a plainer one a user might type; each is
reported, and all together. Raw answers are cached on disk, keyed by the model's sha256, the
instructions, the document and the question, so a re-run of the grounding logic does not need the
model again (--fresh ignores the cache).

Ground truth: the `-Answer` column is the answer; the clause column is the evidence, and a page holds
the evidence when the clause text is found on it. A claim "states the right fact" when it holds the
answer's key fact (a date, a duration, a state, a party's name), read with app/citations/normalise.py.
Claims known to be false: each true fact altered (another date, another governing law, an invented
party, another duration), written as a sentence and grounded against the real document, cited to the
evidence page and uncited. Today's check (a citation is "checked" when its page exists) is the baseline.

Run: .venv/bin/python benchmarks/bench_grounding.py [--set pdf,tune,check] [--fresh]   (make eval)
     --cached-only grades the answers already cached (RESULTS.md only with --write); --collect-only asks.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.eval_model import eval_label, open_eval_app  # noqa: E402
from benchmarks.results import write_section  # noqa: E402

HEADING = "## Grounding: every claim traced to its page (issues 13, 29)"
CORPUS = REPO.parent / "shared" / "corpus"
SETS = {"pdf": "contracts_pdf", "tune": "contracts_tune", "check": "contracts_check"}
ROLES = ("check", "tune")  # out of sample first
QUESTIONS = {
    "Governing Law": "Which law governs this agreement?",
    "Agreement Date": "What is the date of this agreement?",
    "Expiration Date": "When does this agreement expire?",
    "Parties": "Who are the parties to this agreement?",
    "Renewal Term": "What is the renewal term of this agreement?",
    "Notice Period To Terminate Renewal": "How much notice is needed to stop this agreement from renewing?",
}
# A plainer wording of each question, as a user might type it (written with the other two before any
# check-set answer was seen).
PLAIN = {
    "Governing Law": "What law applies to this contract?",
    "Agreement Date": "When was this contract signed?",
    "Expiration Date": "When does the contract end?",
    "Parties": "Who signed this contract?",
    "Renewal Term": "Does the contract renew, and for how long?",
    "Notice Period To Terminate Renewal": "How much notice must be given to stop the contract from renewing?",
}
ONE_SENTENCE = " Answer in one sentence and cite the page."
# Every phrasing restores the same document snapshot: the instructions and the document are the same.
PHRASINGS = {
    "own": lambda category: QUESTIONS[category],
    "one sentence + cite": lambda category: QUESTIONS[category] + ONE_SENTENCE,
    "plain": lambda category: PLAIN[category],
}
MAX_ANSWER_TOKENS = 200


def cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("folio-build")) / "bench-grounding"


@dataclass
class Label:
    contract: str
    category: str
    answer: str
    clauses: list[str]
    set: str = "pdf"

    @property
    def role(self) -> str:
        return "check" if self.set == "check" else "tune"


@dataclass
class Asked:
    prompt: str
    label: Label
    question: str
    answer: str | None  # None: the document does not fit the model's context
    note: str = ""
    seconds: float = 0.0
    cached: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def set_folder(name: str) -> Path:
    return CORPUS / SETS[name] if name in SETS else Path(name)


def read_labels(set_name: str = "pdf") -> dict[str, list[Label]]:
    folder = set_folder(set_name)
    rows = list(csv.DictReader((folder / "cuad_labels.csv").open(encoding="utf-8")))
    out: dict[str, list[Label]] = {}
    for row in rows:
        labels = []
        for category in QUESTIONS:
            answer_key = next(k for k in row if k.startswith(category) and "Answer" in k)
            clauses = ast.literal_eval(row[category]) if row[category].strip() else []
            labels.append(
                Label(row["Filename"], category, row[answer_key].strip(), [str(c) for c in clauses], set_name)
            )
        out[row["Filename"]] = labels
    return out


_PATHS: dict[str, Path] = {}  # contract file name -> its PDF, for the sets read


def contract_path(filename: str) -> Path:
    if filename in _PATHS:
        return _PATHS[filename]
    stem = Path(filename).stem
    for folder in [set_folder(n) for n in SETS]:
        for path in folder.iterdir() if folder.is_dir() else ():
            if path.stem == stem and path.suffix.lower() == ".pdf":
                _PATHS[filename] = path
                return path
    raise FileNotFoundError(filename)


def _text_size(filename: str) -> int:
    text = contract_path(filename).with_suffix(".txt")
    return text.stat().st_size if text.exists() else 1 << 40


def _key(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


def collect(ctx: Any, model_sha: str, labels: dict[str, list[Label]], fresh: bool, cached_only: bool) -> list[Asked]:
    """Every question of every contract, under each instruction text: from the cache, or asked."""
    from app.chat import ChatService
    from app.errors import FolioError

    store = cache_dir() / model_sha[:16]
    store.mkdir(parents=True, exist_ok=True)
    asked: list[Asked] = []
    instructions = (REPO / "assets" / "prompts" / "answer.md").read_text(encoding="utf-8")
    service: ChatService | None = None
    try:
        # Smallest contract first; both variants of a contract's questions on its one snapshot.
        for filename, contract_labels in sorted(labels.items(), key=lambda kv: _text_size(kv[0])):
            doc = ctx.library.add(contract_path(filename)).document
            for prompt_name, phrase in PHRASINGS.items():
                for label in contract_labels:
                    question = phrase(label.category)
                    entry = store / f"{_key(instructions, doc.sha256, question, str(MAX_ANSWER_TOKENS))}.json"
                    if entry.exists() and not fresh:
                        raw = json.loads(entry.read_text(encoding="utf-8"))
                        asked.append(
                            Asked(prompt_name, label, question, raw["answer"], raw["note"], raw["seconds"], True)
                        )
                        continue
                    if cached_only:
                        continue
                    if service is None:
                        service = ChatService(ctx)
                    started = time.monotonic()
                    try:
                        message = service.ask([doc.id], question, max_tokens=MAX_ANSWER_TOKENS)
                        answer, note = message.text, ""
                    except FolioError as exc:
                        answer, note = None, str(exc)
                    seconds = time.monotonic() - started
                    entry.write_text(json.dumps({"answer": answer, "note": note, "seconds": seconds}), encoding="utf-8")
                    asked.append(Asked(prompt_name, label, question, answer, note, seconds))
                    print(
                        f"[{prompt_name}] {doc.title[:40]} / {label.category}: {seconds:.0f} s "
                        f"{(answer or note)[:100]!r}",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        if service is not None:
            service.close()
    return asked


# -- ground truth ------------------------------------------------------------------------------
# Answers CUAD states as a computed date or a word, accepted as written in the contract too (the
# contract says "three (3) years from the Execution Date"; CUAD says 12/11/18).
ALTERNATES = {
    ("FuseMedical", "Expiration Date"): ["1 year", "12 months"],
    ("DigitalCinema", "Expiration Date"): ["5 years"],
    ("SPHERE3D", "Expiration Date"): ["May 31, 2021", "12 months"],
    ("CHIPMOS", "Expiration Date"): ["3 years"],
    ("FuseMedical", "Renewal Term"): ["indefinitely"],
}
PERPETUAL = ("perpetual", "indefinitely", "indefinite", "so long as", "until terminated", "no fixed")
STATES_AND_COUNTRIES = (
    "Ohio", "Delaware", "California", "New York", "Texas", "Taiwan", "Nevada", "Florida", "Oregon", "Illinois",
    "England", "Utah", "Minnesota", "Washington", "Georgia", "Colorado",
)  # fmt: skip
INVENTED_PARTIES = ("Harwell Dynamics Inc.", "Blue Meridian Partners LLC")
# Sentences that state nothing about the document: never to be flagged unsupported.
NO_SOURCE_NEEDED = (
    "## Governing law",
    "I could not find a renewal term in this agreement.",
    "The agreement does not specify a notice period.",
    "Sure. I hope this helps!",
)


@dataclass(frozen=True)
class Key:
    """What a claim must state to state the right fact."""

    dates: tuple[tuple[int | None, int | None, int | None], ...] = ()
    durations: tuple[object, ...] = ()
    words: tuple[str, ...] = ()

    def stated_by(self, text: str) -> bool:
        from app.citations.normalise import find_facts

        facts = find_facts(text)
        for fact in facts:
            if fact.kind == "date" and any(_same_date(r, d) for r in fact.readings for d in self.dates):  # type: ignore[arg-type]
                return True
            if fact.kind == "duration" and fact.readings & set(self.durations):
                return True
        lowered = f" {' '.join(text.lower().split())} "
        return any(f" {w.lower()}" in lowered or f"{w.lower()} " in lowered for w in self.words)


def _same_date(reading: tuple[int | None, ...], key: tuple[int | None, ...]) -> bool:
    return all(k is None or r == k for r, k in zip(reading, key, strict=True)) and reading[0] is not None


def key_of(label: Label) -> Key:
    """The label's answer (and accepted alternates) read into facts."""
    from app.citations.normalise import find_facts

    answers = [label.answer]
    answers += next((alts for (prefix, cat), alts in ALTERNATES.items()
                     if label.contract.startswith(prefix) and cat == label.category), [])  # fmt: skip
    dates: list[tuple[int | None, int | None, int | None]] = []
    durations: list[object] = []
    words: list[str] = []
    for answer in answers:
        if label.category in ("Agreement Date", "Expiration Date") and "/" in answer:
            month, day, year = (part.strip() for part in answer.split("/"))
            full = int(year) if len(year) == 4 else 2000 + int(year) if int(year) < 50 else 1900 + int(year)
            dates.append((full, int(month) if month.isdigit() else None, int(day) if day.isdigit() else None))
            continue
        if answer.lower() in ("perpetual",) or answer.lower() == "indefinitely":
            words += PERPETUAL
            continue
        facts = find_facts(answer)
        for fact in facts:
            if fact.kind == "date":
                dates += list(fact.readings)  # type: ignore[arg-type]
            elif fact.kind == "duration":
                durations += list(fact.readings)
        if label.category == "Governing Law":
            words.append(answer)
        elif label.category == "Parties":
            words += party_names(answer)
    return Key(tuple(dates), tuple(durations), tuple(dict.fromkeys(words)))


def party_names(answer: str) -> list[str]:
    """'Photronics, Inc. (“Photronics”); Dai Nippon Printing Co., Ltd. (“DNP”)' -> the names' first words."""
    import re

    names = []
    for part in answer.split(";"):
        name = re.sub(r"[(“\"].*", "", part).strip(" ,")
        words = [w for w in re.findall(r"[A-Za-z][\w&.-]*", name) if w.lower() not in ("the", "and", "with")]
        if words and len(" ".join(words[:2])) >= 4:
            names.append(" ".join(words[:2]).rstrip(".,"))
    return names


def _flat(text: str) -> str:
    return " ".join(text.lower().replace("“", '"').replace("”", '"').replace("’", "'").split())


def evidence_pages(page_texts: list[str], label: Label) -> set[int]:
    """Pages that hold the label's evidence: a clause of CUAD's found on them (a clause over a page
    break counts for both pages). Found with rapidfuzz directly (95% alike): an oracle apart from the
    quote checker under test, tolerant of CUAD's own text slips ('June 1s t 2020')."""
    from rapidfuzz import fuzz

    clauses = [_flat(c) for c in label.clauses if len(c) >= 12] or [_flat(c) for c in label.clauses]
    flat = [_flat(t) for t in page_texts]
    pages: set[int] = set()
    for clause in clauses:
        for n, text in enumerate(flat, start=1):
            if clause in text or (len(clause) >= 12 and fuzz.partial_ratio(clause, text) >= 95):
                pages.add(n)
            elif n < len(flat) and fuzz.partial_ratio(clause, f"{text} {flat[n]}") >= 95:
                pages.update((n, n + 1))
    return pages


# -- the grounding side --------------------------------------------------------------------------
@dataclass
class Tally:
    """Counts for one column of the table."""

    questions: int = 0
    answered_right: int = 0
    did_not_fit: int = 0
    claims: int = 0
    right_claims: int = 0
    right_with_page: int = 0
    baseline_right_with_page: int = 0
    judged: int = 0  # claims about the asked fact (right or wrong)
    false_page: int = 0  # a page named as support (any verdict that names one) that lacks the evidence
    false_qs: int = 0  # the same, for the verdicts quoted and supported only
    baseline_false_page: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    unanswerable: int = 0
    abstained: int = 0
    exempt_with_fact: int = 0
    right_unsupported: int = 0  # claims stating the right fact, marked unsupported
    right_partly: int = 0  # ...marked partly supported (some of its words or pointers not found)
    ground_ms: list[float] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name, value in vars(other).items():
            if isinstance(value, Counter):
                getattr(self, name).update(value)
            elif isinstance(value, list):
                getattr(self, name).extend(value)
            else:
                setattr(self, name, getattr(self, name) + value)


def _claim_pages(claim: Any, citations: list[Any]) -> list[int]:
    pages: list[int] = []
    for i in claim.citations:
        if citations[i].valid:
            pages += list(citations[i].pages)
    return pages


def grade_answer(tally: Tally, asked: Asked, sources: Any, evidence: set[int]) -> None:
    from app.citations.grounding import EXEMPT, FOUND, PARTLY, QUOTED, SUPPORTED, UNSUPPORTED, ground_answer

    tally.questions += 1
    if asked.answer is None:
        tally.did_not_fit += 1
        return
    started = time.perf_counter()
    grounded = ground_answer(asked.answer, sources)
    tally.ground_ms.append((time.perf_counter() - started) * 1000)
    key = key_of(asked.label)
    right = False
    for verdict in grounded.claims:
        g = verdict.grounding
        if g.verdict == EXEMPT and g.reason in ("heading", "courtesy", "citation only"):
            continue
        tally.claims += 1
        tally.verdicts[g.verdict] += 1
        if not asked.label.answer:
            continue
        states_right = key.stated_by(verdict.claim.text)
        about = states_right or _about_the_fact(asked.label, verdict.claim.text)
        if g.verdict == EXEMPT and about and g.reason != "absence":
            tally.exempt_with_fact += 1
        cited = _claim_pages(verdict, grounded.citations)
        if states_right:
            right = True
            tally.right_claims += 1
            tally.right_with_page += g.verdict in FOUND and g.page in evidence
            tally.right_unsupported += g.verdict == UNSUPPORTED
            tally.right_partly += g.verdict == PARTLY
            if not (g.verdict in FOUND and g.page in evidence):
                _explain("right claim, no evidence page", asked, verdict, evidence)
            tally.baseline_right_with_page += any(p in evidence for p in cited)
        if about:
            tally.judged += 1
            found_page = g.verdict in FOUND and g.page is not None
            # The verdict names a page as holding this claim's facts: false when that page does not hold
            # the evidence for the asked fact (a wrong answer supported on the evidence page is a
            # wrong answer, but its verdict is true: the page does say it).
            wrong = found_page and g.page not in evidence
            tally.false_page += wrong
            tally.false_qs += wrong and g.verdict in (QUOTED, SUPPORTED)
            if wrong:
                _explain("page named as support lacks the evidence", asked, verdict, evidence)
            # Today's check: a cited page that exists counts as checked.
            tally.baseline_false_page += bool(cited) and not any(p in evidence for p in cited)
    if not asked.label.answer:
        tally.unanswerable += 1
        tally.abstained += any(v.grounding.reason == "absence" for v in grounded.claims)
    tally.answered_right += right


def _explain(what: str, asked: Asked, verdict: Any, evidence: set[int]) -> None:
    """With FOLIO_BENCH_VERBOSE=1, each miss on stderr: what to look at when calibrating."""
    if os.environ.get("FOLIO_BENCH_VERBOSE"):
        g = verdict.grounding
        print(
            f"{what}: [{asked.prompt}] {asked.label.contract[:24]} / {asked.label.category}: "
            f"evidence {sorted(evidence)}"
            f"\n    {verdict.claim.text!r}\n    -> {g.verdict} {g.where} {g.passage[:160]!r}",
            file=sys.stderr,
        )


def _about_the_fact(label: Label, text: str) -> bool:
    """Does the claim state a fact of the asked kind (a date for a date question, a law's place...)?"""
    from app.citations.normalise import find_facts

    kinds = {f.kind for f in find_facts(text)}
    if label.category in ("Agreement Date", "Expiration Date"):
        return "date" in kinds
    if label.category in ("Renewal Term", "Notice Period To Terminate Renewal"):
        return "duration" in kinds
    if label.category == "Governing Law":
        return any(place.lower() in text.lower() for place in STATES_AND_COUNTRIES)
    return False  # parties: a wrong name cannot be told from a right one's other spelling


def _written_date(key: Key, texts: list[str]) -> tuple[int, int, int] | None:
    """The label's date when the evidence writes it out (CUAD computes some: 'three years from ...')."""
    from app.citations.normalise import find_facts

    for text in texts:
        for fact in find_facts(text):
            for reading in fact.readings if fact.kind == "date" else ():
                if None not in reading and any(_same_date(reading, d) for d in key.dates):  # type: ignore[arg-type]
                    return reading  # type: ignore[return-value]
    return None


def synthetic_claims(label: Label, evidence: set[int], page_texts: list[str]) -> list[tuple[str, bool, str, str]]:
    """(claim, is_true, how it cites, the altered words of a false one) for one label: the fact true and
    altered, cited to its page, to a page without it, and not at all."""
    import datetime

    key = key_of(label)
    pages = len(page_texts)
    evidence_texts = [page_texts[n - 1] for n in sorted(evidence)]
    true: list[str] = []
    false: list[tuple[str, str]] = []
    if label.category == "Governing Law" and label.answer:
        other = next(p for p in STATES_AND_COUNTRIES if p.lower() != label.answer.lower() and p != "Delaware")
        true.append(f"This agreement is governed by the laws of {label.answer}.")
        false.append((f"This agreement is governed by the laws of {other}.", other))
    elif label.category in ("Agreement Date", "Expiration Date") and _written_date(key, evidence_texts):
        y, m, d = _written_date(key, evidence_texts)  # type: ignore[misc]
        date = datetime.date(y, m, d)  # type: ignore[arg-type]
        what = "is dated" if label.category == "Agreement Date" else "expires on"
        true.append(f"The agreement {what} {date:%B} {date.day}, {date.year}.")
        true.append(f"The agreement {what} {date.day} {date:%B} {date.year}.")
        for moved in (date + datetime.timedelta(days=3), date.replace(year=date.year + 1)):
            written = f"{moved:%B} {moved.day}, {moved.year}"
            false.append((f"The agreement {what} {written}.", written))
    elif label.category == "Parties" and len(key.words) >= 2:
        true.append(f"The parties are {key.words[0]} and {key.words[1]}.")
        false.append((f"The parties are {key.words[0]} and {INVENTED_PARTIES[0]}.", INVENTED_PARTIES[0]))
        false.append((f"The parties are {INVENTED_PARTIES[1]} and {key.words[1]}.", INVENTED_PARTIES[1]))
    elif label.category in ("Renewal Term", "Notice Period To Terminate Renewal") and key.durations:
        value, unit = key.durations[0]  # type: ignore[misc]
        what = "renews for" if label.category == "Renewal Term" else "requires notice of"
        written = (
            f"{value // 12} year{'s' if value != 12 else ''}"
            if unit == "month" and value % 12 == 0
            else (f"{value} {unit}s" if value != 1 else f"one {unit}")
        )
        true.append(f"The agreement {what} {written}.")
        false.append((f"The agreement {what} {value * 3} {unit}s.", f"{value * 3} {unit}s"))
    if not evidence:
        return []
    page = min(evidence)
    away = next((n for n in range(1, pages + 1) if n not in evidence), None)
    out = []
    for claim in true:
        out.append((f"{claim[:-1]} [p. {page}].", True, "cited", ""))
        if away is not None:
            out.append((f"{claim[:-1]} [p. {away}].", True, "wrong page", ""))
        out.append((claim, True, "uncited", ""))
    for claim, altered in false:
        out.append((f"{claim[:-1]} [p. {page}].", False, "cited", altered))
        out.append((claim, False, "uncited", altered))
    return out


def flags_altered(grounding: Any, altered: str) -> bool:
    """A false claim is flagged when it is marked unsupported, or partly supported with the altered
    words among what was not found (the mark names them)."""
    from app.citations.grounding import PARTLY, UNSUPPORTED

    if grounding.verdict == UNSUPPORTED:
        return True
    first = altered.split()[0].lower()
    return grounding.verdict == PARTLY and any(first in m.lower() for m in grounding.missing)


Column = tuple[str, str]  # (phrasing or 'all phrasings', role)


def evaluate(ctx_by_set: dict[str, Any], labels: dict[str, list[Label]], asked: list[Asked]) -> list[str]:
    from app.citations.grounding import FOUND, QUOTED, SUPPORTED, Sources, ground_answer

    by_contract: dict[str, tuple[Any, list[str]]] = {}
    for filename, contract_labels in labels.items():
        ctx = ctx_by_set[contract_labels[0].set]
        doc = ctx.library.add(contract_path(filename)).document
        pages = [ctx.library.page_text(doc.id, n) for n in range(1, doc.page_count + 1)]
        by_contract[filename] = (Sources.load(ctx, [doc.id]), pages)
    roles = [r for r in ROLES if any(ls[0].role == r for ls in labels.values())]
    tallies: dict[Column, Tally] = {(name, role): Tally() for name in PHRASINGS for role in roles}
    for a in asked:
        sources, pages = by_contract[a.label.contract]
        grade_answer(tallies[a.prompt, a.label.role], a, sources, evidence_pages(pages, a.label))
    for role in roles:
        tallies["all phrasings", role] = Tally()
        for name in PHRASINGS:
            tallies["all phrasings", role].add(tallies[name, role])
    # Fixed claims, true and altered, over the same contracts.
    synth: dict[str, Counter[str]] = {role: Counter() for role in roles}
    for filename, contract_labels in labels.items():
        sources, pages = by_contract[filename]
        counts = synth[contract_labels[0].role]
        for sentence in NO_SOURCE_NEEDED:  # the rule for sentences that need no source, measured
            verdicts = ground_answer(sentence, sources).claims
            counts["no source needed"] += len(verdicts)
            counts["no source needed kept"] += sum(v.grounding.verdict == "exempt" for v in verdicts)
        for label in contract_labels:
            evidence = evidence_pages(pages, label)
            for text, is_true, how, altered in synthetic_claims(label, evidence, pages):
                grounded = ground_answer(text, sources)
                (claim,) = grounded.claims
                g = claim.grounding
                missed = (
                    (g.verdict not in FOUND or g.page not in evidence) if is_true else not flags_altered(g, altered)
                )
                if missed:
                    _explain(f"fixed claim ({'true' if is_true else 'altered'}, {how})",
                             Asked("fixed", label, "", text), claim, evidence)  # fmt: skip
                cited_page = claim.citations and grounded.citations[0].valid
                if is_true:
                    counts[f"true {how}"] += 1
                    counts[f"true {how} page"] += g.verdict in FOUND and g.page in evidence
                    counts[f"true {how} baseline"] += how == "cited" and bool(cited_page)
                    counts["false page"] += g.verdict in FOUND and g.page not in evidence
                    counts["false qs"] += g.verdict in (QUOTED, SUPPORTED) and g.page not in evidence
                    counts["baseline false page"] += how == "wrong page" and bool(cited_page)
                else:
                    counts[f"false {how}"] += 1
                    counts[f"false {how} flagged"] += flags_altered(g, altered)
                    counts["false page"] += g.verdict in FOUND and not flags_altered(g, altered)
                    counts["false qs"] += g.verdict in (QUOTED, SUPPORTED)
                    counts["baseline false page"] += how == "cited" and bool(cited_page)
                counts["claims"] += 1
    return report(tallies, synth, roles)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}% ({part}/{whole})" if whole else "-"


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def report(tallies: dict[Column, Tally], synth: dict[str, Counter[str]], roles: list[str]) -> list[str]:
    columns = [c for c in tallies if c[0] != "all phrasings"] + [("all phrasings", r) for r in roles]
    columns.sort(key=lambda c: ([*PHRASINGS, "all phrasings"].index(c[0]), roles.index(c[1])))
    lines = [
        "| | " + " | ".join(f"{name}: {role}" for name, role in columns) + " |",
        "|---" * (1 + len(columns)) + "|",
    ]

    def row(label: str, cell: Any) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(tallies[c]) for c in columns) + " |")

    row("answer accuracy (questions CUAD answers; a too-long contract counts as wrong)",
        lambda x: _pct(x.answered_right, x.questions - x.unanswerable))  # fmt: skip
    row("claims stating the right fact: a page with the evidence attached",
        lambda x: _pct(x.right_with_page, x.right_claims))  # fmt: skip
    row("claims stating the right fact: marked unsupported", lambda x: _pct(x.right_unsupported, x.right_claims))
    row("claims stating the right fact: marked partly supported (a part of it not found)",
        lambda x: _pct(x.right_partly, x.right_claims))  # fmt: skip
    row("claims about the asked fact: quoted or supported on a page without the evidence",
        lambda x: _pct(x.false_qs, x.judged))  # fmt: skip
    row("claims about the asked fact: any page named as support lacks the evidence (or the fact is wrong)",
        lambda x: _pct(x.false_page, x.judged))  # fmt: skip
    row("today's check (a cited page exists): claims stating the right fact with the evidence page cited",
        lambda x: _pct(x.baseline_right_with_page, x.right_claims))  # fmt: skip
    row("questions CUAD leaves empty: answer says it is not there", lambda x: _pct(x.abstained, x.unanswerable))
    row("claims stating the asked fact left 'not checked'", lambda x: _pct(x.exempt_with_fact, x.judged))
    row("verdicts over all claims of the answers",
        lambda x: ", ".join(f"{v} {c}" for v, c in sorted(x.verdicts.items())))  # fmt: skip
    row("contracts too long for the model's context (questions)", lambda x: str(x.did_not_fit))
    lines += ["", "Fixed claims over the same contracts (true facts re-worded, and altered facts):", ""]
    lines += ["| fixed claims | " + " | ".join(roles) + " |", "|---" * (1 + len(roles)) + "|"]
    for how in ("cited", "wrong page", "uncited"):
        shares = " | ".join(_pct(synth[r][f"true {how} page"], synth[r][f"true {how}"]) for r in roles)
        lines.append(f"| true, {how}: a page with the evidence attached | {shares} |")
    for how in ("cited", "uncited"):
        lines.append(f"| altered (wrong date, law, party, duration), {how}: flagged (unsupported, or partly with the "
                     "altered words named as not found) | "
                     + " | ".join(_pct(synth[r][f"false {how} flagged"], synth[r][f"false {how}"]) for r in roles)
                     + " |")  # fmt: skip
    lines.append("| headings, courtesies, 'I could not find ...' sentences: left unflagged (no source needed) | "
                 + " | ".join(_pct(synth[r]["no source needed kept"], synth[r]["no source needed"]) for r in roles)
                 + " |")  # fmt: skip
    lines.append("| fixed claims: quoted or supported on a page without the evidence | "
                 + " | ".join(_pct(synth[r]["false qs"], synth[r]["claims"]) for r in roles) + " |")  # fmt: skip
    lines += ["", "### Goals (all phrasings together; judged on the check set)", ""]

    def goal(text: str, part: str, whole: str, ok: Any) -> str:
        said = []
        values: dict[str, float | None] = {}
        for role in roles:
            t = tallies["all phrasings", role]
            values[role] = _rate(getattr(t, part), getattr(t, whole))
            said.append(f"{role} {_pct(getattr(t, part), getattr(t, whole))}")
        if values.get("check") is not None and values.get("tune") is not None:
            said.append(f"gap {100 * (values['tune'] - values['check']):+.0f} points")  # type: ignore[operator]
        check = values.get("check")
        verdict = "not measured" if check is None else ("met" if ok(check) else "MISSED")
        return f"- {text}: {', '.join(said)}; {verdict}."

    lines.append(goal("A page holding the evidence attached to at least 90% of correct answers' claims",
                      "right_with_page", "right_claims", lambda v: v >= 0.9))  # fmt: skip
    lines.append(goal("Quoted or supported on a page without the evidence at most 2% of claims about the asked fact",
                      "false_qs", "judged", lambda v: v <= 0.02))  # fmt: skip
    lines.append(goal("Correct answers' claims marked unsupported at most 5%", "right_unsupported", "right_claims",
                      lambda v: v <= 0.05))  # fmt: skip
    times = [ms for (name, _r), x in tallies.items() if name != "all phrasings" for ms in x.ground_ms]
    if times:
        lines.append(
            f"- Grounding one answer: median {sorted(times)[len(times) // 2]:.0f} ms, longest {max(times):.0f} ms."
        )
    return lines


def setup_home(home: Path, set_name: str = "pdf") -> Any:
    """A fresh FOLIO_HOME with the eval model registered and active (a library of the set's contracts
    alone: the word search's ranking depends on what it holds). Document snapshots are shared with the
    extraction benchmark's home for the same set (same model, instructions and documents), so neither
    reads a contract the other has read. One thread: on a shared machine two spinning llama.cpp
    threads slow each other down far more than they help."""
    from benchmarks.bench_extraction_quality import cache_dir as extraction_cache

    for part in ("config", "data"):
        shutil.rmtree(home / part, ignore_errors=True)
    states = extraction_cache().parent / f"bench-states-{set_name}" if set_name in SETS else None
    return open_eval_app(home, f"max_answer_tokens = {MAX_ANSWER_TOKENS}\nthinking = false\nthreads = 1\n", states)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Grounding against CUAD's labels with the real 1.5B model.")
    parser.add_argument("--set", default="pdf,tune,check", help="contract sets: pdf, tune, check or folders")
    parser.add_argument("--fresh", action="store_true", help="ask the model again, ignoring the answer cache")
    parser.add_argument("--cached-only", action="store_true", help="grade only the answers already cached")
    parser.add_argument("--collect-only", action="store_true", help="ask and cache, grade nothing")
    parser.add_argument("--write", action="store_true", help="with --cached-only: update RESULTS.md too")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    sets = [s for s in args.set.split(",") if s]
    for name in sets:
        if not (set_folder(name) / "cuad_labels.csv").exists():
            print(f"bench_grounding: no CUAD contracts with labels at {set_folder(name)}", file=sys.stderr)
            return 1
    labels: dict[str, list[Label]] = {}
    asked: list[Asked] = []
    contexts: dict[str, Any] = {}
    scratch: list[Path] = []
    try:
        for name in sets:
            mine = read_labels(name)
            labels |= mine
            # Grading cached answers needs no model and must not disturb a run that is asking (its home).
            home = Path(tempfile.mkdtemp(prefix="folio-grounding-")) if args.cached_only else None
            scratch += [home] if home is not None else []
            key = name if name in SETS else Path(name).name
            ctx, model_sha = setup_home(home or cache_dir() / f"home-{key}", name)
            contexts[name] = ctx
            asked += collect(ctx, model_sha, mine, args.fresh, args.cached_only)
        if args.collect_only:
            print(f"{len(asked)} answers collected", file=sys.stderr)
            return 0
        lines = evaluate(contexts, labels, asked)
    finally:
        for ctx in contexts.values():
            ctx.close()
        for home in scratch:
            shutil.rmtree(home, ignore_errors=True)
    wanted = len(PHRASINGS) * sum(len(v) for v in labels.values())
    contracts = len({a.label.contract for a in asked})
    sizes = ", ".join(f"{SETS.get(n, n)} ({len(read_labels(n))})" for n in sets)
    intro = [
        f"{eval_label()} (benchmarks/eval_model.py), {len(asked)} of {wanted} answers "
        f"({len(labels)} contracts of {sizes} x {len(QUESTIONS)} questions x {len(PHRASINGS)} phrasings; "
        f"{contracts} contracts answered), graded against CUAD's labels in one run "
        f"({time.strftime('%Y-%m-%d')}). Answers come from the model or from the answer cache. Columns: the "
        "check set (out of sample: nothing was chosen on it) and the tuning set, per phrasing and all together.",
        "",
    ]
    if len(asked) < wanted:
        intro.insert(1, f"PARTIAL: {wanted - len(asked)} answers were not collected yet; the figures cover the rest.")
    print("\n".join(intro + lines))
    if (not args.cached_only or args.write) and set(sets) == set(SETS):
        write_section(HEADING, intro + lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
