"""Extraction quality against CUAD's expert labels, with the real Qwen2.5-Coder-1.5B (issues 19, 29).

Real contracts with CUAD's labels (cuad_labels.csv beside them) in three folders of ../shared/corpus:
contracts_pdf (10) and contracts_tune (20) are the tuning set, where prompts, words, rules and
thresholds are chosen; contracts_check (20) is only for reporting figures out of sample (`--set`).
Every table reports the two side by side, the check set first; each folder is read in a library of
its own (the word search's ranking depends on what the library holds). The built-in contract_review
template (the 41 CUAD categories: 8 short answers, 33 yes/no clauses):

- scored: Folio's extraction (ExtractionService) as the app runs it: each field's decision (a clause
  present, a value stated) from the model's own P(yes) after the whole document, judged against the
  line chosen on the tuning contracts (benchmarks/calibrate.py, assets/calibration/); a clause's
  passage chosen by its scored number among those the word search offers; a value asked plainly,
  then as a form with its evidence first;
- generated (--generated): the same, but the model's generated answers decide (the path taken where
  a model server returns no probabilities, and the decisions of the design before issue 29);
- rules (--rules): the scored design with each rule the app may apply after the model switched on
  alone (a value no page holds is not stated; named_by words; evidence moved to the naming
  sentence), from the same cached answers, to measure what each is worth;
- chat: the same short-answer questions asked in Folio's chat (ChatService.ask), a new conversation
  each, on the same document prefix; six of them in benchmarks/bench_grounding.py's words, so its
  cached answers (same model, instructions and document) are reused.

--calibrate (tuning sets only, never check): scores every field of every contract (nothing is asked
beyond the decisions), chooses the lines (benchmarks/calibrate.py) and writes the model's calibration
file to assets/calibration/.

Measured: per short-answer field, how many contracts are answered correctly (rules in
benchmarks/cuad_compare.py); for the yes/no clauses, precision and recall of "present" over the
contract x category pairs; each cell's verdict (app/citations/grounding.py, the chat's), and how often a
cell marked quoted or supported points at a page that lacks CUAD's evidence; and time per document.
GOOSEHEAD (115 pages, ~75K tokens) does not fit the model's 32K context. It goes through the app's
own path, as a user's document would: the extraction reads the pages a word search ranks highest for
the template's fields (app/extraction/runner.py, cells flagged partial_document); the chat refuses
with its plain 'the selection needs about N tokens but the model holds 32,768', which counts as a
wrong answer for every question, even where CUAD has none.

The model's raw outputs are cached on disk (keyed by the model's sha256, the whole prompt, the
answer format and the sampling), so re-grading (parsing, grounding, comparing) needs no model;
--fresh asks everything anew.

Run: .venv/bin/python benchmarks/bench_extraction_quality.py (make eval): every set. --set pdf,tune,check (or a
folder laid out like them) picks the contracts. While collecting: --fields short|yes_no,
--clauses KEY,KEY (yes/no clauses to ask), --short KEY,KEY (short answers to ask), --only / --skip A,B (parts of
contract file names), --no-chat, --generated, --rules, --cached-only (grade what the cache holds, never ask),
--fresh (ask everything anew), --no-write / --write (RESULTS.md).
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.extraction.plain import says_not_stated  # noqa: E402
from benchmarks.bench_grounding import MAX_ANSWER_TOKENS, QUESTIONS  # noqa: E402
from benchmarks.bench_grounding import _key as chat_key  # noqa: E402
from benchmarks.bench_grounding import cache_dir as grounding_cache  # noqa: E402
from benchmarks.cuad_compare import cuad_date, drawn_from, matches, repaired  # noqa: E402
from benchmarks.eval_model import eval_label, open_eval_app  # noqa: E402
from benchmarks.results import threads, write_section  # noqa: E402
from inference.engine_api import EngineConfig, GenerateRequest  # noqa: E402
from inference.engine_process import EngineProcess  # noqa: E402
from inference.events import EngineEvent, Finished, GenerationStats, Scored, TokenText  # noqa: E402

HEADING = "## Extraction quality against CUAD's labels (issues 19, 29)"
CORPUS = REPO.parent / "shared" / "corpus"
# The folders, and the role each plays: contracts_pdf counts as tuning data (../shared/corpus/README.md).
SETS = {"pdf": "contracts_pdf", "tune": "contracts_tune", "check": "contracts_check"}
ROLES = ("check", "tune")  # the order of every table's columns: out of sample first
# The chat's questions: bench_grounding's wording where it asks the same thing (the same model, system
# prompt and document, so its cached answers are this benchmark's too), and two more of our own.
SHORT = {
    "Document Name": ("document_name", "What is the name (title) of this agreement?"),
    "Parties": ("parties", QUESTIONS["Parties"]),
    "Agreement Date": ("agreement_date", QUESTIONS["Agreement Date"]),
    "Effective Date": ("effective_date", "What is the effective date of this agreement?"),
    "Expiration Date": ("expiration_date", QUESTIONS["Expiration Date"]),
    "Renewal Term": ("renewal_term", QUESTIONS["Renewal Term"]),
    "Notice Period To Terminate Renewal": (
        "notice_period_to_terminate_renewal",
        QUESTIONS["Notice Period To Terminate Renewal"],
    ),
    "Governing Law": ("governing_law", QUESTIONS["Governing Law"]),
}
CHAT_TOKENS = MAX_ANSWER_TOKENS
NOT_ASKED = "not asked"  # --cached-only: a chat question no cache holds
SCORED, GENERATED = "scored", "generated"
DESIGNS = (SCORED, GENERATED)
# The scored design with each rule alone (app/extraction/runner.py), graded from the same answers.
RULE_VARIANTS = ("no rules", "held", "named", "naming_evidence")
DEBERTA = (0.44, 0.80)  # CUAD's published DeBERTa-xlarge: precision at 80% recall


def cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("folio-build")) / "bench-extraction-quality"


# -- the labels ----------------------------------------------------------------------------------
@dataclass
class Contract:
    filename: str
    answers: dict[str, str]  # category -> CUAD's answer ('' when none; 'Yes'/'No' for clauses)
    clauses: dict[str, list[str]]  # category -> CUAD's evidence texts
    path: Path
    set: str = "pdf"  # the folder's name in SETS (or the folder's own name)

    @property
    def role(self) -> str:
        """'check' for the held-out folder, 'tune' for every other (where settings may be chosen)."""
        return "check" if self.set == "check" else "tune"

    def effective(self) -> date | None:
        for category in ("Effective Date", "Agreement Date"):
            parsed = cuad_date(self.answers.get(category, ""))
            if parsed and all(p is not None for p in parsed):
                y, m, d = parsed
                assert y is not None and m is not None and d is not None
                return date(y, m, d)
        return None


def set_folder(name: str) -> Path:
    """The folder of a set's contracts: a name in SETS or a folder of one's own."""
    return CORPUS / SETS[name] if name in SETS else Path(name)


def read_contracts(name: str = "pdf") -> list[Contract]:
    folder = set_folder(name)
    rows = list(csv.DictReader((folder / "cuad_labels.csv").open(encoding="utf-8")))
    out = []
    for row in rows:
        answers, clauses = {}, {}
        for column in row:
            if column == "Filename" or "Answer" in column:
                continue
            answer_column = next(k for k in row if k.startswith(column) and "Answer" in k)
            answers[column] = row[answer_column].strip()
            raw = row[column].strip()
            texts = [str(c) for c in ast.literal_eval(raw)] if raw else []
            pieces = (p.strip() for t in texts for p in t.split("<omitted>"))
            clauses[column] = [repaired(p) for p in pieces if len(p) >= 12]
        stem = Path(row["Filename"]).stem
        path = next(p for p in folder.iterdir() if p.stem == stem and p.suffix.lower() == ".pdf")
        out.append(Contract(row["Filename"], answers, clauses, path, name if name in SETS else folder.name))
    return out


# -- the engine, with every answer kept --------------------------------------------------------------
@dataclass
class Asked:
    seconds: float
    cached: bool


class NotCached(Exception):
    """--cached-only: an answer the cache does not hold."""


class RecordingEngine(EngineProcess):
    """The local engine process; each answer is also written to disk, keyed by everything that
    decides it, and replayed from there unless --fresh."""

    def __init__(self, store: Path, model_sha: str, fresh: bool, *, cached_only: bool = False) -> None:
        super().__init__()
        self.store = store
        self.model_sha = model_sha
        self.fresh = fresh
        self.cached_only = cached_only
        self.log: list[tuple[tuple[str, ...], Asked]] = []  # (prefix tags, what it cost)

    def _key(self, request: GenerateRequest) -> str:
        digest = hashlib.sha256(self.model_sha.encode())
        for part in request.parts:
            digest.update(json.dumps([part.text, part.special, part.image]).encode())
        answer = [request.json_schema, request.thinking, list(vars(request.sampling).values())]
        if request.choices:  # a scored request (an older cache entry never has any)
            answer.append([list(c) for c in request.choices])
        digest.update(json.dumps(answer).encode())
        return digest.hexdigest()[:40]

    def generate(self, config: EngineConfig | None, request: GenerateRequest) -> Iterator[EngineEvent]:
        entry = self.store / f"{self._key(request)}.json"
        if entry.exists() and not self.fresh:
            saved = json.loads(entry.read_text(encoding="utf-8"))
            self.log.append((request.prefix_tags, Asked(saved["seconds"], True)))
            if "scored" in saved:
                yield Scored(tuple(saved["scored"]), saved.get("source", "logits"))
            else:
                yield TokenText(saved["text"])
            yield Finished(GenerationStats(**saved["stats"]))
            return
        if self.cached_only:
            raise NotCached(entry.name)
        started = time.monotonic()
        pieces: list[str] = []
        scored: Scored | None = None
        for event in super().generate(config, request):
            if isinstance(event, TokenText):
                pieces.append(event.text)
            if isinstance(event, Scored):
                scored = event
            if isinstance(event, Finished):
                seconds = time.monotonic() - started
                if event.stats.stop_reason != "cancelled":
                    kept: dict[str, Any] = {"text": "".join(pieces), "stats": vars(event.stats), "seconds": seconds}
                    if scored is not None:
                        kept |= {"scored": list(scored.logprobs), "source": scored.source}
                    entry.write_text(json.dumps(kept), encoding="utf-8")
                self.log.append((request.prefix_tags, Asked(seconds, False)))
            yield event


# -- asking ------------------------------------------------------------------------------------------
@dataclass
class ShortAnswer:
    found: bool
    value: str
    verdict: str = ""
    page: int | None = None
    quote: str = ""
    note: str = ""  # why there is no answer (does not fit, ...)


@dataclass
class DocResult:
    contract: Contract
    document_id: int
    title: str
    pages: int
    tokens: int
    read_as: str = "whole"
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)  # design -> field key -> cell dict
    chat: dict[str, ShortAnswer] = field(default_factory=dict)  # category -> answer
    seconds: dict[str, float] = field(default_factory=dict)  # design or 'chat' -> wall seconds
    page_texts: list[str] = field(default_factory=list)  # the stored text of each page, for grading


def run_document(
    ctx: Any, engine: RecordingEngine, contract: Contract, template: Any, parts: set[str], calibration: Any = None
) -> DocResult:
    from app.engine.progress import Progress
    from app.engine.session import Session
    from app.extraction.runner import ALL_RULES, RULES, ExtractionService

    doc = ctx.library.add(contract.path).document
    result = DocResult(contract, doc.id, doc.title, doc.page_count, doc.token_estimate)
    result.page_texts = [ctx.library.page_text(doc.id, n) for n in range(1, doc.page_count + 1)]
    print(f"... {doc.title}: {doc.page_count} pages, ~{doc.token_estimate:,} tokens", file=sys.stderr, flush=True)
    notes: list[str] = []

    def heard(event: Any) -> None:
        if isinstance(event, Progress) and "chosen by word search" in event.text:
            notes.append(event.text.removeprefix(f"{doc.title}: "))

    def extract(name: str, *, scoring: bool, rules: frozenset[str]) -> None:
        # A document over the model's context (GOOSEHEAD: 115 pages, ~75K tokens for 32K) goes through
        # the app's own path, as a user's would: the extraction reads the pages a word search ranks
        # highest for the template's fields and flags its cells (partial_document).
        service = ExtractionService(
            ctx, Session.for_context(ctx, engine), scoring=scoring, rules=rules, calibration=calibration
        )
        run_id = service.start_run(template, [doc.id], resume=False)
        before = len(engine.log)
        service.run(run_id, [doc.id], heard)
        result.seconds[name] = sum(a.seconds for _tags, a in engine.log[before:])
        table = service.table(run_id)
        result.cells[name] = {}
        for f in template.fields:
            cell = table.cell(doc.id, f.key)
            assert cell is not None
            result.cells[name][f.key] = cell.to_dict()
            if "partial_document" in cell.flags:
                result.read_as = _pages_read(notes[0]) if notes else "pages chosen by word search"

    extract(SCORED, scoring=True, rules=RULES)
    _show(contract, result.cells[SCORED])
    if GENERATED in parts:
        extract(GENERATED, scoring=False, rules=RULES)
    if "rules" in parts:  # the same answers, ruled otherwise: no model call beyond the scored run's
        for variant in RULE_VARIANTS:
            chosen = frozenset() if variant == "no rules" else frozenset({variant})
            assert chosen <= set(ALL_RULES)
            extract(f"{SCORED}: {variant}", scoring=True, rules=chosen)
    if "chat" not in parts:
        return result
    asked = [c for c, (k, _q) in SHORT.items() if k in result.cells[SCORED]]
    result.chat, result.seconds["chat"] = chat_answers(ctx, engine, doc, asked, cached_only="--cached-only" in parts)
    return result


def _pages_read(note: str) -> str:
    """'only 52 of 115 pages (1-4, 9, ...), chosen by word search ...' -> '52 of 115 pages read'."""
    match = re.search(r"only (\d+) of (\d+) pages", note)
    return f"{match[1]} of {match[2]} pages read" if match else "pages chosen by word search"


def _show(contract: Contract, cells: dict[str, dict[str, Any]]) -> None:
    """Each short answer beside CUAD's, as it comes (stderr): what a per-field failure looks like."""
    for category, (key, _question) in SHORT.items():
        cell = cells.get(key)
        if cell is None:
            continue
        ok = short_correct(contract, category, cell["found"], cell["value"]) and not cell.get("note")
        said = repr(cell["value"][:80]) if cell["found"] else "not stated"
        where = f" ({cell['verdict']}, p. {cell.get('page')})" if cell["found"] else ""
        truth = contract.answers[category] or ("none" + (", clause marked" if contract.clauses.get(category) else ""))
        print(f"    {'right' if ok else 'WRONG'} {category}: {said}{where}; CUAD: {truth[:80]}", file=sys.stderr)


def chat_answers(
    ctx: Any, engine: RecordingEngine, doc: Any, categories: list[str], *, cached_only: bool
) -> tuple[dict[str, ShortAnswer], float]:
    """The chat's answers to the short-answer questions, as bench_grounding keys and stores them: read
    from its cache or ours, else asked (a new conversation each) and kept in ours."""
    from app.chat import ChatService
    from app.engine.session import Session
    from app.errors import FolioError

    instructions = (REPO / "assets" / "prompts" / "answer.md").read_text(encoding="utf-8")
    ours = cache_dir() / engine.model_sha[:16] / "chat"
    ours.mkdir(parents=True, exist_ok=True)
    answers: dict[str, ShortAnswer] = {}
    seconds = 0.0
    chat: ChatService | None = None
    for category in categories:
        question = SHORT[category][1]
        name = f"{chat_key(instructions, doc.sha256, question, str(MAX_ANSWER_TOKENS))}.json"
        saved = next((d / name for d in (grounding_cache() / engine.model_sha[:16], ours) if (d / name).exists()), None)
        if saved is None and cached_only:
            answers[category] = ShortAnswer(False, "", note=NOT_ASKED)
            continue
        if saved is None or engine.fresh:
            chat = chat or ChatService(ctx, Session.for_context(ctx, engine))
            started = time.monotonic()
            try:
                text, note = chat.ask([doc.id], question, max_tokens=CHAT_TOKENS).text, ""
            except FolioError as exc:
                text, note = None, str(exc)
            raw: dict[str, Any] = {"answer": text, "note": note, "seconds": time.monotonic() - started}
            (ours / name).write_text(json.dumps(raw), encoding="utf-8")
        else:
            raw = json.loads(saved.read_text(encoding="utf-8"))
        seconds += float(raw["seconds"])
        answers[category] = ShortAnswer(raw["answer"] is not None, raw["answer"] or "", note=raw["note"] or "")
    return answers, seconds


# -- scoring -------------------------------------------------------------------------------------------
def short_correct(contract: Contract, category: str, found: bool, value: str, *, chat: bool = False) -> bool:
    truth = contract.answers[category]
    clauses = contract.clauses.get(category, [])
    if not truth or truth == "[]/[]/[]":  # CUAD gives no answer (an unfilled form's blank is none either)
        said_none = not found or (chat and says_not_stated(value))
        return said_none or (bool(clauses) and drawn_from(value, clauses))
    if not found:
        return False
    return matches(category, truth, value, effective=contract.effective())


def page_has_evidence(result: DocResult, page: int | None, clauses: list[str]) -> bool:
    return evidence_on_page(result.page_texts, page, clauses)


def evidence_on_page(page_texts: list[str], page: int | None, clauses: list[str]) -> bool:
    """Page `page` (1-based) holds the start or the end of one of CUAD's evidence texts."""
    from app.citations.quotes import quote_in

    if page is None or not clauses or not 1 <= page <= len(page_texts):
        return False
    text = page_texts[page - 1]
    for clause in clauses:
        for piece in (clause[:120], clause[-120:]):
            if len(piece) >= 12 and quote_in(piece, text):
                return True
    return False


def _threads(n: int) -> str:
    return "one llama.cpp thread" if n == 1 else f"{n} llama.cpp threads"


Figures = dict[tuple[str, str], tuple[int, int]]  # (goal, role) -> (part, whole)


def by_role(results: list[DocResult]) -> dict[str, list[DocResult]]:
    """The results of each role that was run, check first."""
    return {role: [r for r in results if r.contract.role == role] for role in ROLES if any(
        r.contract.role == role for r in results)}  # fmt: skip


def _set_names(results: list[DocResult]) -> str:
    counts = Counter(r.contract.set for r in results)
    return " + ".join(f"{SETS.get(name, name)} ({n})" for name, n in counts.items())


def score(
    results: list[DocResult], template: Any, parts: set[str], left_out: list[str], threads_used: int
) -> list[str]:
    designs = [SCORED, *([GENERATED] if GENERATED in parts else [])]
    yes_no = [f for f in template.fields if f.yes_no]
    roles = by_role(results)
    described = "; ".join(f"{role}: {_set_names(rs)}" for role, rs in roles.items())
    lines = [
        f"CUAD contracts of ../shared/corpus against CUAD's expert labels ({described}), with the real "
        f"{eval_label()} (benchmarks/eval_model.py), greedy, {_threads(threads_used)} on the 2-core "
        f"machine (times are wall seconds, load average {os.getloadavg()[0]:.1f} at the end). "
        "Every table gives the check set (out of sample: nothing was chosen on it) beside the tuning set. "
        f"Fields: {len(template.fields) - len(yes_no)} of the {len(SHORT)} short answers and {len(yes_no)} of the "
        "template's 33 yes/no clauses. "
        "Comparison rules: "
        "benchmarks/cuad_compare.py (dates and durations read by app/citations/normalise.py). Raw answers come "
        "from the model or its on-disk cache (keyed by model sha256, the whole prompt, the answer format and "
        "sampling); the chat's from the same cache as benchmarks/bench_grounding.py. `make eval` "
        f"(benchmarks/bench_extraction_quality.py), {time.strftime('%Y-%m-%d')}.",
    ]
    if left_out:
        names = ", ".join(Path(f).stem.split("_")[0] for f in left_out)
        lines.append(f"PARTIAL: not measured in this run (their answers were not collected): {names}.")
    figures: Figures = {}
    if any(not f.yes_no for f in template.fields):
        lines += short_table(roles, designs, "chat" in parts, figures)
    if yes_no:
        lines += presence_table(roles, designs, yes_no, figures)
    lines += grounding_table(roles, designs, template, figures)
    lines += rules_table(roles, template)
    lines += time_table(results, designs, "chat" in parts, len(template.fields))
    return lines + goal_lines(figures, list(roles), len(yes_no))


def goal_lines(figures: Figures, roles: list[str], clauses: int = 33) -> list[str]:
    """The goals, each judged on this run's figures (scored) per role, check first, with the
    gap between the tuning and the check set."""

    def rate(name: str, role: str) -> float | None:
        part, whole = figures.get((name, role), (0, 0))
        return part / whole if whole else None

    def verdict(ok: bool | None) -> str:
        return "not measured" if ok is None else ("met" if ok else "MISSED")

    def each(name: str, show: Any) -> str:
        said = [f"{role} {show(rate(name, role))}" for role in roles if rate(name, role) is not None]
        values = [rate(name, role) for role in ("check", "tune")]
        if all(v is not None for v in values):
            said.append(f"gap {100 * (values[1] - values[0]):+.0f} points")  # type: ignore[operator]
        return ", ".join(said)

    lines = ["", "### Goals (scored, as the app decides; judged on the check set)", ""]
    pct = lambda v: f"{v:.0%}"  # noqa: E731
    short, chat = rate("short", "check"), rate("chat", "check")
    if any(rate("short", r) is not None for r in roles):
        met = verdict(None if short is None else short >= 0.8)
        lines.append(f"- Short answers at least 80% right: {each('short', pct)}; {met}.")
    if any(rate("chat", r) is not None for r in roles):
        same = rate("short vs chat", "check")
        lines.append(
            f"- Never below the chat on the same questions: extraction {each('short vs chat', pct)}; "
            f"chat {each('chat', pct)}; {verdict(None if same is None or chat is None else same >= chat)}."
        )
    if any(rate("precision", r) is not None for r in roles):
        precision, recall = rate("precision", "check"), rate("recall", "check")
        beats = None if precision is None or recall is None else recall >= DEBERTA[1] and precision >= DEBERTA[0]
        lines.append(
            f"- Yes/no clauses at least DeBERTa-xlarge ({DEBERTA[0]:.0%} precision at {DEBERTA[1]:.0%} recall): "
            f"precision {each('precision', pct)}; recall {each('recall', pct)}; {verdict(beats)}"
            + ("." if clauses >= 33 else f" on the {clauses} of 33 categories asked only.")
        )
    if any(rate("no evidence there", r) is not None for r in roles):
        lacking = rate("no evidence there", "check")
        lines.append(
            "- Cells marked quoted or supported on a page without CUAD's evidence at most 2%: "
            f"{each('no evidence there', pct)}; {verdict(None if lacking is None else lacking <= 0.02)}."
        )
    return lines


def _columns(designs: list[str], roles: dict[str, list[DocResult]], chat_on: bool) -> list[tuple[str, str]]:
    """(design or 'chat', role) for each column, every role of a design side by side, check first."""
    return [(d, role) for d in [*designs, *(["chat"] if chat_on else [])] for role in roles]


def short_table(roles: dict[str, list[DocResult]], designs: list[str], chat_on: bool, figures: Figures) -> list[str]:
    """Per field, contracts answered right (the chat's out of the contracts it was asked about), and a
    last row comparing the extraction with the chat on exactly the same questions (chat parity)."""
    columns = _columns(designs, roles, chat_on)
    sizes = ", ".join(f"{role} {len(rs)}" for role, rs in roles.items())
    lines = [
        "",
        f"### Short answers: contracts answered correctly (of {sizes})",
        "",
        "| field | " + " | ".join(f"{d}: {role}" for d, role in columns) + " |",
        "| --- | " + " | ".join("---:" for _ in columns) + " |",
    ]
    right: dict[tuple[str, str, str], bool] = {}  # (column, contract, category) -> answered right
    everything = [r for rs in roles.values() for r in rs]
    categories = [(c, k) for c, (k, _q) in SHORT.items() if any(k in r.cells[d] for r in everything for d in designs)]
    for category, key in categories:
        for r in everything:
            for design in designs:
                cell = r.cells[design][key]
                # A refused document (too long) answered nothing: wrong, even where CUAD has no answer.
                ok = short_correct(r.contract, category, cell["found"], cell["value"]) and not cell.get("note")
                right[design, r.contract.filename, category] = ok
            said = r.chat.get(category)
            if chat_on and said is not None and said.note != NOT_ASKED:
                found = said.found and not says_not_stated(said.value)
                ok = not said.note and short_correct(r.contract, category, found, said.value, chat=True)
                right["chat", r.contract.filename, category] = ok
        row = []
        for column, role in columns:
            names = {r.contract.filename for r in roles[role]}
            mine = [v for (c, f, cat), v in right.items() if c == column and cat == category and f in names]
            asked = f" (of {len(mine)})" if column == "chat" and len(mine) < len(names) else ""
            row.append(f"{sum(mine)}{asked}" if mine else "not asked")
        lines.append(f"| {category} | " + " | ".join(row) + " |")

    def share(column: str, pairs: list[tuple[str, str]]) -> str:
        got = sum(right[column, f, c] for f, c in pairs)
        return f"**{got / len(pairs):.0%}** ({got}/{len(pairs)})" if pairs else "-"

    totals, on_chat = [], []
    for column, role in columns:
        pairs = [(r.contract.filename, c) for r in roles[role] for c, _k in categories]
        chat_pairs = [(f, c) for f, c in pairs if ("chat", f, c) in right]
        complete = column != "chat" or len(chat_pairs) == len(pairs)
        totals.append(share(column, pairs) if complete else "-")
        on_chat.append(share(column, chat_pairs))
        if column == SCORED:
            figures["short", role] = (sum(right[column, f, c] for f, c in pairs), len(pairs))
            if chat_pairs:
                figures["short vs chat", role] = (sum(right[column, f, c] for f, c in chat_pairs), len(chat_pairs))
                figures["chat", role] = (sum(right["chat", f, c] for f, c in chat_pairs), len(chat_pairs))
    lines.append("| **all short answers** | " + " | ".join(totals) + " |")
    if chat_on and "-" in totals:
        lines.append("| **the questions the chat was asked** | " + " | ".join(on_chat) + " |")
    return lines


def average_precision(scored: list[tuple[float, bool]]) -> float:
    """The area under the precision-recall curve as average precision: precision at each distinct score,
    weighted by the recall gained there (tied scores count as one step, as scikit-learn does). A yes/no
    design without scores is the curve of its one decision (1 present, 0 absent)."""
    positives = sum(truth for _s, truth in scored)
    if not positives:
        return 0.0
    area = 0.0
    tp = seen = 0
    ordered = sorted(scored, key=lambda st: -st[0])
    i = 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and ordered[j][0] == ordered[i][0]:
            tp += ordered[j][1]
            seen += 1
            j += 1
        gained = sum(truth for _s, truth in ordered[i:j])
        area += (gained / positives) * (tp / seen)
        i = j
    return area


def cell_score(cell: dict[str, Any]) -> float:
    """How sure a cell is that the clause is present: its stored score when it has one, else its decision."""
    value = cell.get("score")
    return float(value) if value is not None else float(bool(cell["found"]))


def presence_table(
    roles: dict[str, list[DocResult]], designs: list[str], yes_no: list[Any], figures: Figures
) -> list[str]:
    contracts = ", ".join(f"{role} {len(rs)}" for role, rs in roles.items())
    lines = [
        "",
        f"### Yes/no clauses: 'present' against CUAD's Yes ({len(yes_no)} categories x contracts: {contracts})",
        "",
        "A cell counts as present when the model judged a clause present; 'grounded' also needs the clause it "
        "copied to be in the document. The area under the precision-recall curve is the average precision over "
        "the cells' scores (a design without scores: its one decision).",
        "",
        "| design | set | CUAD Yes | said present | right | precision | recall | PR area |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    per_category: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for design in designs:
        for grounded_only in (False, True):
            for role, results in roles.items():
                tp = fp = fn = 0
                scored: list[tuple[float, bool]] = []
                for r in results:
                    for f in yes_no:
                        truth = r.contract.answers[f.name] == "Yes"
                        cell = r.cells[design][f.key]
                        said = bool(cell["found"]) and (not grounded_only or cell["verdict"] != "unsupported")
                        scored.append((cell_score(cell), truth))
                        tp += truth and said
                        fp += said and not truth
                        fn += truth and not said
                        if design == SCORED and not grounded_only:
                            counts = {"yes": int(truth), "said": int(said), "right": int(truth and said)}
                            per_category[f.name, role].update(counts)
                precision = tp / (tp + fp) if tp + fp else 0.0
                recall = tp / (tp + fn) if tp + fn else 0.0
                area = "" if grounded_only else f"{average_precision(scored):.2f}"
                if design == SCORED and not grounded_only:
                    figures["precision", role], figures["recall", role] = (tp, tp + fp), (tp, tp + fn)
                    figures["pr area", role] = (round(1000 * average_precision(scored)), 1000)
                name = f"{design}, grounded" if grounded_only else design
                lines.append(
                    f"| {name} | {role} | {tp + fn} | {tp + fp} | {tp} | {precision:.0%} | {recall:.0%} | {area} |"
                )
    published = f"{DEBERTA[0]:.0%} | {DEBERTA[1]:.0%} |"
    lines.append(
        f"| CUAD's DeBERTa-xlarge (published; fine-tuned, clause spans) | CUAD's test set | | | | {published} |"
    )
    if per_category:
        lines += ["", "Per category (scored): CUAD Yes / said present / right, check; tune.", ""]
        per = []
        for f in yes_no:
            sides = [per_category[f.name, role] for role in roles]
            per.append(f"{f.name} " + "; ".join(f"{c['yes']}/{c['said']}/{c['right']}" for c in sides))
        lines.append(", ".join(per) + ".")
    return lines


def grounding_table(
    roles: dict[str, list[DocResult]], designs: list[str], template: Any, figures: Figures
) -> list[str]:
    from app.extraction.cells import VERDICTS

    lines = [
        "",
        "### How the cells were grounded",
        "",
        "Cells with a value (short answers) or a clause judged present, by verdict (app/citations/grounding.py, "
        "the chat's). The goal: at most 2% of the cells marked quoted or supported stand on a page without "
        "CUAD's evidence. "
        "'Evidence elsewhere' counts those among fields where CUAD's experts marked evidence (the page is wrong); "
        "'no evidence there' counts every quoted or supported cell whose page holds none, including fields CUAD "
        "says the contract does not have (the value is wrong, wherever it stands).",
        "",
        "| design | set | cells with a value | "
        + " | ".join(VERDICTS)
        + " | quoted/supported: CUAD evidence elsewhere | quoted/supported: no CUAD evidence there |",
        "| --- | --- | ---: | " + " | ".join("---:" for _ in VERDICTS) + " | ---: | ---: |",
    ]
    for design in designs:
        for role, results in roles.items():
            verdicts: Counter[str] = Counter()
            marked = wrong = checked = lacking = 0
            for r in results:
                for f in template.fields:
                    cell = r.cells[design][f.key]
                    if not cell["found"]:
                        continue
                    verdicts[cell["verdict"]] += 1
                    if cell["verdict"] not in ("quoted", "supported"):
                        continue
                    clauses = r.contract.clauses.get(f.name, [])
                    holds = page_has_evidence(r, cell.get("page"), clauses)
                    checked += 1
                    lacking += not holds
                    if clauses:
                        marked += 1
                        wrong += not holds
            if design == SCORED:
                figures["no evidence there", role] = (lacking, checked)
            counts = " | ".join(str(verdicts[v]) for v in VERDICTS)
            lines.append(
                f"| {design} | {role} | {sum(verdicts.values())} | {counts} | {_share(wrong, marked)} | "
                f"{_share(lacking, checked)} |"
            )
    return lines


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "0/0"


def time_table(results: list[DocResult], designs: list[str], chat_on: bool, fields: int) -> list[str]:
    columns = [*designs, *(["chat"] if chat_on else [])]
    lines = [
        "",
        f"### Time per document (wall seconds for all {fields} fields; chat: the same short questions)",
        "",
        "| contract | set | pages | tokens (est.) | read as | " + " | ".join(columns) + " |",
        "| --- | --- | ---: | ---: | --- | " + " | ".join("---:" for _ in columns) + " |",
    ]
    for r in sorted(results, key=lambda r: ROLES.index(r.contract.role)):
        secs = " | ".join(f"{r.seconds.get(c, 0):.0f}" for c in columns)
        lines.append(f"| {r.title[:48]} | {r.contract.set} | {r.pages} | {r.tokens:,} | {r.read_as} | {secs} |")
    for role in ROLES:
        mine = [r for r in results if r.contract.role == role]
        if mine:
            medians = " | ".join(f"{_median([r.seconds.get(c, 0) for r in mine]):.0f}" for c in columns)
            lines.append(f"| **median, {role}** | | | | | {medians} |")
    return lines


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return (ordered[n // 2] + ordered[(n - 1) // 2]) / 2 if n else 0.0


def calibrate(sets: list[str], args: argparse.Namespace) -> int:
    """Score every field of the tuning contracts (no value asked: every decision is 'not there'), choose
    the lines (benchmarks/calibrate.py) and write the model's calibration file."""
    from app.extraction.decide import Calibration, FieldCalibration, calibration_path
    from assets import asset_path
    from benchmarks.calibrate import YES_NO_RECALL, Point, choose

    if "check" in sets or any(set_folder(n).resolve() == set_folder("check").resolve() for n in sets):
        print("bench_extraction_quality: --calibrate never looks at the check set; choose on pdf,tune", file=sys.stderr)
        return 2
    nothing = Calibration(default=FieldCalibration(threshold=2.0))  # no score reaches it: decisions only
    points: list[Point] = []
    model_sha = ""
    for name in sets:
        results, _left, template, model_sha = run_set(name, args, {SCORED}, nothing)
        for r in results:
            for f in template.fields:
                cell = r.cells[SCORED][f.key]
                if cell.get("score") is None:
                    continue
                truth = r.contract.answers[f.name] == "Yes" if f.yes_no else _stated(r.contract, f.name)
                points.append(Point(r.contract.filename, f.key, f.yes_no, float(cell["score"]), truth))
    fields: dict[str, FieldCalibration] = {}
    lines = [
        "### How the lines were chosen (benchmarks/calibrate.py, --calibrate)",
        "",
        f"On {', '.join(SETS.get(n, n) for n in sets)} only ({len({p.contract for p in points})} contracts), never "
        "the check set: per kind of field, a logistic map from the model's P(yes) to the probability that the "
        "field is there, with a shared slope and a penalised offset per field; the cut chosen on leave-one-"
        f"contract-out probabilities (yes/no clauses: the highest cut with recall >= {YES_NO_RECALL:.0%}; short "
        "answers' 'is it stated': the most right decisions). Cross-validated figures on the tuning contracts:",
        "",
        "| kind | fields x contracts | there (CUAD) | cut | CV precision | CV recall | CV right decisions |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for yes_no in (True, False):
        mine = [p for p in points if p.yes_no == yes_no]
        if not mine:
            continue
        chosen = choose(mine, yes_no)
        for key in sorted({p.key for p in mine}):
            fields[key] = FieldCalibration(
                round(chosen.threshold(key), 6),
                round(chosen.fit.slope, 6),
                round(chosen.fit.intercept + chosen.fit.offsets.get(key, 0.0), 6),
            )
        kind = "yes/no clauses" if yes_no else "short answers (stated?)"
        lines.append(
            f"| {kind} | {len(mine)} | {sum(p.truth for p in mine)} | {chosen.cut:.3f} | {chosen.cv_precision:.0%} "
            f"| {chosen.cv_recall:.0%} | {chosen.cv_accuracy:.0%} |"
        )
    # The record names the contracts actually scored: a --cached-only run may have fewer than the sets hold.
    scored = len({p.contract for p in points})
    where = " + ".join(SETS.get(n, n) for n in sets)
    calibration = Calibration(
        model_sha, eval_label(), f"{scored} contracts of {where}, {time.strftime('%Y-%m-%d')}", fields
    )
    path = calibration_path(asset_path("calibration"), model_sha)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(calibration.to_json(), encoding="utf-8")
    lines += ["", f"Written to assets/calibration/{path.name} ({len(fields)} fields)."]
    print("\n".join(lines))
    if not args.no_write:
        from benchmarks.results import write_subsection

        write_subsection(HEADING, lines[0], lines)
    return 0


def _stated(contract: Contract, category: str) -> bool:
    """CUAD gives this short answer (an unfilled form's blank is no answer) or marks its clause."""
    answer = contract.answers.get(category, "")
    return bool(answer and answer != "[]/[]/[]") or bool(contract.clauses.get(category))


def rules_table(roles: dict[str, list[DocResult]], template: Any) -> list[str]:
    """What each rule the app may apply after the model is worth: the scored design with none, and
    with each alone, from the same answers."""
    variants = [f"{SCORED}: {v}" for v in RULE_VARIANTS]
    if not all(v in r.cells for v in variants for rs in roles.values() for r in rs):
        return []
    lines = [
        "",
        "### What each rule is worth (the scored design's answers, ruled otherwise)",
        "",
        "held: a short answer no page holds is not stated; named: a value or clause without the field's named_by "
        "words is not there (a word list's veto); naming_evidence: a value quoted from elsewhere opens on the "
        "sentence that names it. Each alone, against no rule at all; the app applies what helped on the "
        "tuning contracts.",
        "",
        "| rules | set | short answers right | yes/no precision | yes/no recall "
        "| quoted/supported without CUAD's evidence |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    yes_no = [f for f in template.fields if f.yes_no]
    short = [(c, k) for c, (k, _q) in SHORT.items() if any(f.key == k for f in template.fields)]
    for variant in variants:
        for role, results in roles.items():
            right = sum(
                short_correct(r.contract, c, r.cells[variant][k]["found"], r.cells[variant][k]["value"])
                for r in results
                for c, k in short
            )
            tp = fp = fn = 0
            for r in results:
                for f in yes_no:
                    truth, said = r.contract.answers[f.name] == "Yes", bool(r.cells[variant][f.key]["found"])
                    tp, fp, fn = tp + (truth and said), fp + (said and not truth), fn + (truth and not said)
            checked = lacking = 0
            for r in results:
                for f in template.fields:
                    cell = r.cells[variant][f.key]
                    if cell["found"] and cell["verdict"] in ("quoted", "supported"):
                        checked += 1
                        lacking += not page_has_evidence(r, cell.get("page"), r.contract.clauses.get(f.name, []))
            total = len(results) * len(short)
            lines.append(
                f"| {variant.removeprefix(SCORED + ': ')} | {role} | {_share(right, total)} | {_share(tp, tp + fp)} | "
                f"{_share(tp, tp + fn)} | {_share(lacking, checked)} |"
            )
    return lines


def setup_home(fresh: bool, set_name: str, threads: int = 1, prefix: str = "home") -> tuple[Any, str]:
    """A FOLIO_HOME for one set of contracts, with the eval model registered and active and document
    snapshots kept on disk: a new one for a fresh run (every document is read, and timed, from
    scratch), else one kept between runs. Each set has a library of its own: the word search's ranking
    (FTS5's BM25) depends on what the library holds, so a set's hints never depend on another's."""
    name = (
        set_name if set_name in SETS else hashlib.sha256(str(set_folder(set_name).resolve()).encode()).hexdigest()[:12]
    )
    home = Path(tempfile.mkdtemp(prefix="folio-bench-extraction-")) if fresh else cache_dir() / f"{prefix}-{name}"
    return open_eval_app(
        home,
        f"max_answer_tokens = {CHAT_TOKENS}\nthinking = false\nstate_cache_gb = 8\nthreads = {threads}\n",
        states=None if fresh else cache_dir().parent / f"bench-states-{name}",
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Extraction against CUAD's labels with the real 1.5B model.")
    parser.add_argument(
        "--set", default="pdf,tune,check", help="contract sets: pdf, tune, check or folders, comma-separated"
    )
    parser.add_argument("--fresh", action="store_true", help="ask the model again (and read every document anew)")
    parser.add_argument("--cached-only", action="store_true", help="grade only the answers already cached")
    parser.add_argument("--only", default="", help="only the contracts whose file name holds one of these (a,b)")
    parser.add_argument("--skip", default="", help="comma-separated parts of file names to leave out")
    parser.add_argument("--fields", choices=("all", "short", "yes_no"), default="all")
    parser.add_argument("--clauses", default="", help="comma-separated yes/no clause keys to ask")
    parser.add_argument("--short", default="", help="comma-separated short-answer keys to ask (default: all 8)")
    parser.add_argument("--no-chat", action="store_true", help="do not ask the chat the same questions")
    parser.add_argument("--generated", action="store_true", help="also run the design whose generated answers decide")
    parser.add_argument("--rules", action="store_true", help="grade the scored design with each rule alone too")
    parser.add_argument(
        "--calibrate", action="store_true", help="choose the lines on these (tuning) sets and write the calibration"
    )
    parser.add_argument("--threads", type=threads, default=1, help="llama.cpp threads (1 on a shared machine)")
    parser.add_argument("--home", default="home", help="name of the kept homes (two runs at once need two)")
    written = parser.add_mutually_exclusive_group()
    written.add_argument("--write", action="store_true", help="update RESULTS.md even for a partial run")
    written.add_argument("--no-write", action="store_true", help="never update RESULTS.md")
    return parser.parse_args(argv)


def chosen_template(ctx: Any, args: argparse.Namespace) -> Any:
    """contract_review with the fields --fields, --clauses and --short keep."""
    from app.extraction.templates import TemplateStore

    template = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
    clauses = [c for c in args.clauses.split(",") if c]
    shorts = [c for c in args.short.split(",") if c]
    unknown = sorted(set(shorts) - {key for key, _question in SHORT.values()})
    if unknown:
        raise SystemExit(f"bench_extraction_quality: no short answer {unknown[0]!r}")
    keep = tuple(
        f
        for f in template.fields
        if (args.fields == "all" or f.yes_no == (args.fields == "yes_no"))
        and (not f.yes_no or not clauses or f.key in clauses)
        and (f.yes_no or not shorts or f.key in shorts)
    )
    return dataclasses.replace(template, fields=keep)


def run_set(
    set_name: str, args: argparse.Namespace, parts: set[str], calibration: Any = None
) -> tuple[list[DocResult], list[str], Any, str]:
    """Every chosen contract of one set, in a home of the set's own: (results, files left out,
    template, model sha256)."""
    ctx, model_sha = setup_home(args.fresh, set_name, args.threads, args.home)
    store = cache_dir() / model_sha[:16]
    store.mkdir(parents=True, exist_ok=True)
    engine = RecordingEngine(store, model_sha, args.fresh, cached_only=args.cached_only)
    try:
        template = chosen_template(ctx, args)
        skip = [s for s in args.skip.lower().split(",") if s]
        wanted = [o for o in args.only.lower().split(",") if o] or [""]
        every = read_contracts(set_name)
        contracts = [
            c
            for c in every
            if any(o in c.filename.lower() for o in wanted) and not any(s in c.filename.lower() for s in skip)
        ]
        # Small contracts first: the first figures arrive early, the long one comes last.
        contracts.sort(key=lambda c: c.path.stat().st_size)
        # Every contract is in the library before any is asked: the word search's ranking (FTS5's BM25)
        # depends on what the library holds, and so do the hints and offered passages of a prompt.
        for c in every:
            ctx.library.add(c.path)
        results = []
        left_out = [c.filename for c in every if c not in contracts]
        for c in contracts:
            try:
                results.append(run_document(ctx, engine, c, template, parts, calibration))
            except NotCached:
                print(f"    skipped {c.filename}: not all of its answers are cached", file=sys.stderr)
                left_out.append(c.filename)
        dump = store / f"last-run-{Path(set_name).name}.json"
        dump.write_text(
            json.dumps(
                [{"file": r.contract.filename, "set": r.contract.set, "cells": r.cells,
                  "chat": {k: vars(v) for k, v in r.chat.items()}, "seconds": r.seconds, "read_as": r.read_as}
                 for r in results],
                indent=1, default=str,
            ),
            encoding="utf-8",
        )  # fmt: skip
        print(f"answers of this run ({set_name}): {dump}", file=sys.stderr)
        return results, left_out, template, model_sha
    finally:
        engine.close()
        ctx.close()


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    sets = [s for s in args.set.split(",") if s]
    for name in sets:
        if not (set_folder(name) / "cuad_labels.csv").exists():
            print(f"bench_extraction_quality: no CUAD contracts with labels at {set_folder(name)}", file=sys.stderr)
            return 1
    if args.calibrate:
        return calibrate(sets, args)
    parts = {SCORED, *(() if args.no_chat else ("chat",))}
    parts |= {GENERATED} if args.generated else set()
    parts |= {"rules"} if args.rules else set()
    parts |= {"--cached-only"} if args.cached_only else set()
    results: list[DocResult] = []
    left_out: list[str] = []
    template: Any = None
    for name in sets:
        done, missed, template, _sha = run_set(name, args, parts)
        results += done
        left_out += missed
    lines = score(results, template, parts, left_out, args.threads)
    print("\n".join(lines))
    narrowed = args.only or args.skip or args.fields != "all" or args.clauses or args.short
    if args.write or (not args.no_write and not narrowed and set(sets) == set(SETS)):
        write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
