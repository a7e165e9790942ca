"""Extraction quality against CUAD's expert labels, with the real Qwen2.5-Coder-1.5B (issue 19).

Ten real contracts (../shared/corpus/contracts_pdf) with CUAD's labels (cuad_labels.csv beside them),
the built-in contract_review template (the 41 CUAD categories: 8 short answers, 33 yes/no clauses):

- evidence first: Folio's extraction (ExtractionService), evidence before value, word-search hints;
  a yes/no clause picked from the passages the word search offers;
- chat: the same short-answer questions asked in Folio's chat (ChatService.ask), a new conversation
  each, on the same document prefix; six of them in benchmarks/bench_grounding.py's words, so its
  cached answers (same model, instructions and document) are reused;
- with --baseline, the design before issue 19 too (one field per request, {"value", "quote", "page"}
  or null; its prompt is kept in benchmarks/prompts/extract_null_first.md and replayed here).

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

Run: .venv/bin/python benchmarks/bench_extraction_quality.py (make eval). While collecting: --fields short|yes_no,
--clauses KEY,KEY (yes/no clauses to ask), --short KEY,KEY (short answers to ask), --only / --skip A,B (parts of
contract file names), --no-chat, --baseline (today's design too), --cached-only (grade what the cache holds, never
ask), --fresh (ask everything anew), --no-write / --write (RESULTS.md).
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
from inference.events import EngineEvent, Finished, GenerationStats, TokenText  # noqa: E402

HEADING = "## Extraction quality against CUAD's labels (issue 19)"
CONTRACTS = REPO.parent / "shared" / "corpus" / "contracts_pdf"
BASELINE_PROMPT = REPO / "benchmarks" / "prompts" / "extract_null_first.md"
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
DESIGNS = ("today (null first)", "evidence first")
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

    def effective(self) -> date | None:
        for category in ("Effective Date", "Agreement Date"):
            parsed = cuad_date(self.answers.get(category, ""))
            if parsed and all(p is not None for p in parsed):
                y, m, d = parsed
                assert y is not None and m is not None and d is not None
                return date(y, m, d)
        return None


def read_contracts() -> list[Contract]:
    rows = list(csv.DictReader((CONTRACTS / "cuad_labels.csv").open(encoding="utf-8")))
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
        path = next(p for p in CONTRACTS.iterdir() if p.stem == stem and p.suffix.lower() == ".pdf")
        out.append(Contract(row["Filename"], answers, clauses, path))
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
        digest.update(json.dumps(answer).encode())
        return digest.hexdigest()[:40]

    def generate(self, config: EngineConfig | None, request: GenerateRequest) -> Iterator[EngineEvent]:
        entry = self.store / f"{self._key(request)}.json"
        if entry.exists() and not self.fresh:
            saved = json.loads(entry.read_text(encoding="utf-8"))
            self.log.append((request.prefix_tags, Asked(saved["seconds"], True)))
            yield TokenText(saved["text"])
            yield Finished(GenerationStats(**saved["stats"]))
            return
        if self.cached_only:
            raise NotCached(entry.name)
        started = time.monotonic()
        pieces: list[str] = []
        for event in super().generate(config, request):
            if isinstance(event, TokenText):
                pieces.append(event.text)
            if isinstance(event, Finished):
                seconds = time.monotonic() - started
                if event.stats.stop_reason != "cancelled":
                    saved = {"text": "".join(pieces), "stats": vars(event.stats), "seconds": seconds}
                    entry.write_text(json.dumps(saved), encoding="utf-8")
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


def baseline_cells(ctx: Any, service: Any, doc_id: int, template: Any) -> dict[str, dict[str, Any]]:
    """Today's design, replayed: one field per request, null or {"value", "quote", "page"}."""
    from app.engine.session import prompt_documents
    from app.errors import FolioError
    from app.extraction.cells import ground_cell
    from app.extraction.schema import max_output_bytes
    from assets import read_text
    from inference.chat_format import template_for
    from inference.engine_api import Sampling
    from inference.prompt import build_messages, render_prompt

    record = ctx.models.active(ctx.settings)
    chat_template = template_for(record.architecture, record.facts.chat_template)
    sources = service.session.sources(ctx, [ctx.library.get(doc_id)])
    threshold = ctx.settings.extraction.quote_threshold
    found_cell = {
        "type": "object",
        "properties": {
            "value": {"type": "string", "minLength": 1, "maxLength": ctx.settings.extraction.value_chars},
            "quote": {"type": "string", "maxLength": ctx.settings.extraction.quote_chars},
            "page": {"type": "string", "maxLength": 16},
        },
        "required": ["value", "quote", "page"],
        "additionalProperties": False,
    }
    documents = prompt_documents(ctx, [doc_id])
    sha = ctx.library.get(doc_id).sha256
    out: dict[str, dict[str, Any]] = {}
    for f in template.fields:
        schema = {
            "type": "object",
            "properties": {f.key: {"anyOf": [{"type": "null"}, found_cell]}},
            "required": [f.key],
            "additionalProperties": False,
        }
        block = f'- "{f.key}": {f.name} - {f.description}'  # the field line as it was written then
        user = BASELINE_PROMPT.read_text(encoding="utf-8").strip().replace("{fields}", block)
        messages = build_messages(read_text("prompts", "answer.md"), documents, [], user)
        rendered = render_prompt(chat_template, messages, enable_thinking=False)
        sampling = Sampling(0.0, 1.0, 1, 0.0, 0.0, max_output_bytes(schema) + 2)
        try:
            count = service.session.count_tokens(record, rendered)
            config = service.session.engine_config(record, count, sampling.max_tokens)
        except FolioError as exc:
            out[f.key] = {"found": False, "value": "", "note": str(exc), "verdict": ""}
            continue
        request = GenerateRequest(
            rendered.parts, sampling, rendered.prefix_parts, json_schema=json.dumps(schema), prefix_tags=(sha,)
        )
        text = "".join(e.text for e in service.session.generate(config, request) if isinstance(e, TokenText))
        try:
            raw = json.loads(text, strict=False)[f.key]
        except (json.JSONDecodeError, KeyError, TypeError):
            raw = None
        if raw is None:
            out[f.key] = {"found": False, "value": "", "verdict": ""}
            continue
        claim = raw["quote"] if f.yes_no else raw["value"]
        g = ground_cell(sources, claim, raw["quote"], raw["page"], threshold, f.name).grounding
        out[f.key] = {"found": True, "value": raw["value"], "quote": raw["quote"], "verdict": g.verdict, "page": g.page}
    return out


def run_document(ctx: Any, engine: RecordingEngine, contract: Contract, template: Any, parts: set[str]) -> DocResult:
    from app.engine.session import Session
    from app.extraction.runner import ExtractionService

    doc = ctx.library.add(contract.path).document
    result = DocResult(contract, doc.id, doc.title, doc.page_count, doc.token_estimate)
    service = ExtractionService(ctx, Session.for_context(ctx, engine))

    def timed(name: str, job: Any) -> Any:
        before = len(engine.log)
        value = job()
        result.seconds[name] = sum(a.seconds for _tags, a in engine.log[before:])
        return value

    print(f"... {doc.title}: {doc.page_count} pages, ~{doc.token_estimate:,} tokens", file=sys.stderr, flush=True)
    # A document over the model's context (GOOSEHEAD: 115 pages, ~75K tokens for 32K) goes through the
    # app's own path, as a user's would: the extraction reads the pages a word search ranks highest for
    # the template's fields and flags its cells (partial_document); the chat gives its own answer below.
    run_id = service.start_run(template, [doc.id], resume=False)
    notes: list[str] = []

    def extract() -> None:
        from app.engine.session import Progress

        def heard(event: Any) -> None:
            if isinstance(event, Progress) and "chosen by word search" in event.text:
                notes.append(event.text.removeprefix(f"{doc.title}: "))

        service.run(run_id, [doc.id], heard)

    timed("evidence first", extract)
    table = service.table(run_id)
    result.cells["evidence first"] = {}
    for f in template.fields:
        cell = table.cell(doc.id, f.key)
        assert cell is not None
        result.cells["evidence first"][f.key] = cell.to_dict()
        if "partial_document" in cell.flags:
            result.read_as = _pages_read(notes[0]) if notes else "pages chosen by word search"
    _show(contract, result.cells["evidence first"])
    if DESIGNS[0] in parts:
        result.cells[DESIGNS[0]] = timed(DESIGNS[0], lambda: baseline_cells(ctx, service, doc.id, template))
    if "chat" not in parts:
        return result
    asked = [c for c, (k, _q) in SHORT.items() if k in result.cells["evidence first"]]
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


def page_has_evidence(ctx: Any, document_id: int, page: int | None, clauses: list[str]) -> bool:
    from app.citations.quotes import quote_in

    if page is None or not clauses:
        return False
    text = ctx.library.page_text(document_id, page)
    for clause in clauses:
        for piece in (clause[:120], clause[-120:]):
            if len(piece) >= 12 and quote_in(piece, text):
                return True
    return False


def _threads(n: int) -> str:
    return "one llama.cpp thread" if n == 1 else f"{n} llama.cpp threads"


def score(ctx: Any, results: list[DocResult], template: Any, parts: set[str], left_out: list[str]) -> list[str]:
    designs = [d for d in DESIGNS if d in parts]
    yes_no = [f for f in template.fields if f.yes_no]
    total = len(results) + len(left_out)
    measured = f"{len(results)} of the {total}" if left_out else f"The {total}"
    lines = [
        f"{measured} CUAD contracts of ../shared/corpus/contracts_pdf against CUAD's expert labels, with the real "
        f"{eval_label()} (benchmarks/eval_model.py), greedy, {_threads(ctx.settings.threads)} on the 2-core "
        f"machine (times are wall seconds, load average {os.getloadavg()[0]:.1f} at the end). "
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
    if yes_no:
        lines.append(f"Yes/no clauses asked: {', '.join(f.name for f in yes_no)}.")
    figures: dict[str, tuple[int, int]] = {}  # what the goals are judged on: (part, whole)
    if any(not f.yes_no for f in template.fields):
        lines += short_table(results, designs, "chat" in parts, figures)
    if yes_no:
        lines += presence_table(results, designs, yes_no, figures)
    lines += grounding_table(ctx, results, designs, template, figures)
    lines += time_table(results, designs, "chat" in parts, len(template.fields))
    return lines + goal_lines(figures, len(yes_no))


def goal_lines(figures: dict[str, tuple[int, int]], clauses: int = 33) -> list[str]:
    """Issue 19's goals, each judged on this run's figures (evidence first); the yes/no goal says how
    many of the template's 33 clause categories it was judged on."""

    def rate(name: str) -> float | None:
        part, whole = figures.get(name, (0, 0))
        return part / whole if whole else None

    def verdict(ok: bool | None) -> str:
        return "not measured" if ok is None else ("met" if ok else "MISSED")

    short, same, chat = rate("short"), rate("short vs chat"), rate("chat")
    precision, recall, lacking = rate("precision"), rate("recall"), rate("no evidence there")
    lines = ["", "### Goals (evidence first)", ""]
    if short is not None:
        lines.append(f"- Short answers at least 80% right: {short:.0%}, {verdict(short >= 0.8)}.")
    if same is not None and chat is not None:
        lines.append(
            f"- Never below the chat on the same questions: {same:.0%} against the chat's {chat:.0%}, "
            f"{verdict(same >= chat)}."
        )
    if precision is not None and recall is not None:
        beats = recall >= DEBERTA[1] and precision > DEBERTA[0]
        lines.append(
            f"- Yes/no clauses above DeBERTa-xlarge ({DEBERTA[0]:.0%} precision at {DEBERTA[1]:.0%} recall): "
            f"{precision:.0%} precision at {recall:.0%} recall, {verdict(beats)}"
            + ("." if clauses >= 33 else f" on the {clauses} of 33 categories asked only.")
        )
    if lacking is not None:
        lines.append(
            f"- Cells marked quoted or supported on a page without CUAD's evidence at most 2%: {lacking:.0%}, "
            f"{verdict(lacking <= 0.02)}."
        )
    return lines


def short_table(
    results: list[DocResult], designs: list[str], chat_on: bool, figures: dict[str, tuple[int, int]]
) -> list[str]:
    """Per field, contracts answered right (the chat's out of the contracts it was asked about), and a
    last row comparing the extraction with the chat on exactly the same questions (chat parity)."""
    columns = [*designs, *(["chat"] if chat_on else [])]
    lines = [
        "",
        f"### Short answers: contracts answered correctly (of {len(results)})",
        "",
        "| field | " + " | ".join(columns) + " |",
        "| --- | " + " | ".join("---:" for _ in columns) + " |",
    ]
    right: dict[tuple[str, str, str], bool] = {}  # (column, contract, category) -> answered right
    categories = [(c, k) for c, (k, _q) in SHORT.items() if any(k in r.cells[d] for r in results for d in designs)]
    for category, key in categories:
        for r in results:
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
        for column in columns:
            mine = [v for (c, _f, cat), v in right.items() if c == column and cat == category]
            asked = f" (of {len(mine)})" if column == "chat" and len(mine) < len(results) else ""
            row.append(f"{sum(mine)}{asked}" if mine else "not asked")
        lines.append(f"| {category} | " + " | ".join(row) + " |")

    def share(column: str, pairs: list[tuple[str, str]]) -> str:
        got = sum(right[column, f, c] for f, c in pairs)
        return f"**{got / len(pairs):.0%}** ({got}/{len(pairs)})" if pairs else "-"

    everything = [(r.contract.filename, c) for r in results for c, _k in categories]
    chat_pairs = [(f, c) for f, c in everything if ("chat", f, c) in right]
    figures["short"] = (sum(right["evidence first", f, c] for f, c in everything), len(everything))
    if chat_pairs:
        figures["short vs chat"] = (sum(right["evidence first", f, c] for f, c in chat_pairs), len(chat_pairs))
        figures["chat"] = (sum(right["chat", f, c] for f, c in chat_pairs), len(chat_pairs))
    totals = [share(c, everything) if c != "chat" or len(chat_pairs) == len(everything) else "-" for c in columns]
    lines.append("| **all short answers** | " + " | ".join(totals) + " |")
    if chat_pairs and len(chat_pairs) < len(everything):
        lines.append(
            f"| **the {len(chat_pairs)} questions the chat was asked** | "
            + " | ".join(share(c, chat_pairs) for c in columns)
            + " |"
        )
    return lines


def presence_table(
    results: list[DocResult], designs: list[str], yes_no: list[Any], figures: dict[str, tuple[int, int]]
) -> list[str]:
    lines = [
        "",
        f"### Yes/no clauses: 'present' against CUAD's Yes ({len(yes_no)} categories x {len(results)} contracts)",
        "",
        "A cell counts as present when the model judged a clause present; 'grounded' also needs the clause it "
        "copied to be in the document.",
        "",
        "| design | CUAD Yes | said present | right | precision | recall |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    per_category: dict[str, Counter[str]] = defaultdict(Counter)
    for design in designs:
        for grounded_only in (False, True):
            tp = fp = fn = 0
            for r in results:
                for f in yes_no:
                    truth = r.contract.answers[f.name] == "Yes"
                    cell = r.cells[design][f.key]
                    said = bool(cell["found"]) and (not grounded_only or cell["verdict"] != "unsupported")
                    tp += truth and said
                    fp += said and not truth
                    fn += truth and not said
                    if design == "evidence first" and not grounded_only:
                        counts = {"yes": int(truth), "said": int(said), "right": int(truth and said)}
                        per_category[f.name].update(counts)
            precision = tp / (tp + fp) if tp + fp else 0.0
            recall = tp / (tp + fn) if tp + fn else 0.0
            if design == "evidence first" and not grounded_only:
                figures["precision"], figures["recall"] = (tp, tp + fp), (tp, tp + fn)
            name = f"{design}, grounded" if grounded_only else design
            lines.append(f"| {name} | {tp + fn} | {tp + fp} | {tp} | {precision:.0%} | {recall:.0%} |")
    published = f"{DEBERTA[0]:.0%} | {DEBERTA[1]:.0%}"
    lines.append(f"| CUAD's DeBERTa-xlarge (published; fine-tuned, clause spans) | | | | {published} |")
    if per_category:
        lines += ["", "Per category (evidence first): CUAD Yes / said present / right.", ""]
        lines.append("; ".join(f"{n} {c['yes']}/{c['said']}/{c['right']}" for n, c in per_category.items()) + ".")
    return lines


def grounding_table(
    ctx: Any, results: list[DocResult], designs: list[str], template: Any, figures: dict[str, tuple[int, int]]
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
        "| design | cells with a value | "
        + " | ".join(VERDICTS)
        + " | quoted/supported: CUAD evidence elsewhere | quoted/supported: no CUAD evidence there |",
        "| --- | ---: | " + " | ".join("---:" for _ in VERDICTS) + " | ---: | ---: |",
    ]
    for design in designs:
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
                holds = page_has_evidence(ctx, r.document_id, cell.get("page"), clauses)
                checked += 1
                lacking += not holds
                if clauses:
                    marked += 1
                    wrong += not holds
        if design == "evidence first":
            figures["no evidence there"] = (lacking, checked)
        counts = " | ".join(str(verdicts[v]) for v in VERDICTS)
        lines.append(
            f"| {design} | {sum(verdicts.values())} | {counts} | {_share(wrong, marked)} | {_share(lacking, checked)} |"
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
        "| contract | pages | tokens (est.) | read as | " + " | ".join(columns) + " |",
        "| --- | ---: | ---: | --- | " + " | ".join("---:" for _ in columns) + " |",
    ]
    for r in results:
        secs = " | ".join(f"{r.seconds.get(c, 0):.0f}" for c in columns)
        lines.append(f"| {r.title[:48]} | {r.pages} | {r.tokens:,} | {r.read_as} | {secs} |")
    return lines


def setup_home(fresh: bool, threads: int = 1) -> tuple[Any, str]:
    """A FOLIO_HOME with the eval model registered and active, document snapshots kept on disk: a new
    one for a fresh run (every document is read, and timed, from scratch), else one kept between runs."""
    home = Path(tempfile.mkdtemp(prefix="folio-bench-extraction-")) if fresh else cache_dir() / "home"
    return open_eval_app(
        home, f"max_answer_tokens = {CHAT_TOKENS}\nthinking = false\nstate_cache_gb = 8\nthreads = {threads}\n"
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Extraction against CUAD's labels with the real 1.5B model.")
    parser.add_argument("--fresh", action="store_true", help="ask the model again (and read every document anew)")
    parser.add_argument("--cached-only", action="store_true", help="grade only the answers already cached")
    parser.add_argument("--only", default="", help="only the contracts whose file name holds one of these (a,b)")
    parser.add_argument("--skip", default="", help="comma-separated parts of file names to leave out")
    parser.add_argument("--fields", choices=("all", "short", "yes_no"), default="all")
    parser.add_argument("--clauses", default="", help="comma-separated yes/no clause keys to ask")
    parser.add_argument("--short", default="", help="comma-separated short-answer keys to ask (default: all 8)")
    parser.add_argument("--no-chat", action="store_true", help="do not ask the chat the same questions")
    parser.add_argument("--baseline", action="store_true", help="also run the first request design")
    parser.add_argument("--threads", type=threads, default=1, help="llama.cpp threads (1 on a shared machine)")
    written = parser.add_mutually_exclusive_group()
    written.add_argument("--write", action="store_true", help="update RESULTS.md even for a partial run")
    written.add_argument("--no-write", action="store_true", help="never update RESULTS.md")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if not (CONTRACTS / "cuad_labels.csv").exists():
        print(f"bench_extraction_quality: the CUAD contracts are not at {CONTRACTS}", file=sys.stderr)
        return 1
    only = args.only
    ctx, model_sha = setup_home(args.fresh, args.threads)
    store = cache_dir() / model_sha[:16]
    store.mkdir(parents=True, exist_ok=True)
    engine = RecordingEngine(store, model_sha, args.fresh, cached_only=args.cached_only)
    try:
        from app.extraction.templates import TemplateStore

        template = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
        kinds = args.fields
        clauses = [c for c in args.clauses.split(",") if c]
        shorts = [c for c in args.short.split(",") if c]
        unknown = sorted(set(shorts) - {key for key, _question in SHORT.values()})
        if unknown:
            print(f"bench_extraction_quality: no short answer {unknown[0]!r}", file=sys.stderr)
            return 2
        keep = tuple(
            f
            for f in template.fields
            if (kinds == "all" or f.yes_no == (kinds == "yes_no"))
            and (not f.yes_no or not clauses or f.key in clauses)
            and (f.yes_no or not shorts or f.key in shorts)
        )
        template = dataclasses.replace(template, fields=keep)
        parts = {"evidence first", *(() if args.no_chat else ("chat",))}
        parts |= {DESIGNS[0]} if args.baseline else set()
        parts |= {"--cached-only"} if engine.cached_only else set()
        skip = [s for s in args.skip.lower().split(",") if s]
        wanted = [o for o in only.lower().split(",") if o] or [""]
        contracts = [
            c
            for c in read_contracts()
            if any(o in c.filename.lower() for o in wanted) and not any(s in c.filename.lower() for s in skip)
        ]
        # Small contracts first: the first figures arrive early, the long one comes last.
        contracts.sort(key=lambda c: c.path.stat().st_size)
        # Every contract is in the library before any is asked: the word search's ranking (FTS5's BM25)
        # depends on what the library holds, and so do the hints and offered passages of a prompt.
        for c in read_contracts():
            ctx.library.add(c.path)
        results = []
        left_out = [c.filename for c in read_contracts() if c not in contracts]
        for c in contracts:
            try:
                results.append(run_document(ctx, engine, c, template, parts))
            except NotCached:
                print(f"    skipped {c.filename}: not all of its answers are cached", file=sys.stderr)
                left_out.append(c.filename)
        lines = score(ctx, results, template, parts, left_out)
        dump = store / "last-run.json"
        dump.write_text(
            json.dumps(
                [{"file": r.contract.filename, "cells": r.cells, "chat": {k: vars(v) for k, v in r.chat.items()},
                  "seconds": r.seconds, "read_as": r.read_as} for r in results],
                indent=1, default=str,
            ),
            encoding="utf-8",
        )  # fmt: skip
        print(f"answers of this run: {dump}", file=sys.stderr)
    finally:
        engine.close()
        ctx.close()
    print("\n".join(lines))
    if args.write or (not args.no_write and not only and not skip and kinds == "all" and not clauses and not shorts):
        write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
