"""Grounding against ground truth: CUAD's expert labels on 10 real contracts, a real Qwen-family model.

Questions: for each contract in ../shared/corpus/contracts_pdf, the six CUAD categories below, asked
as a user would (`ChatService.ask`, a new conversation each, so every question of a contract restores
the same document snapshot). The model is Qwen2.5-Coder-1.5B-Instruct Q4_K_M (benchmarks/eval_model.py).
Each answer is asked with two instruction texts side by side: the one that only asks for page
citations, and the one that asks for a short exact quote with each claim. Raw answers are cached on
disk, keyed by the model's sha256, the instructions, the document and the question, so a re-run of
the grounding logic does not need the model again (--fresh ignores the cache).

Ground truth: the `-Answer` column is the answer; the clause column is the evidence, and a page holds
the evidence when the clause text is found on it. A claim "states the right fact" when it holds the
answer's key fact (a date, a duration, a state, a party's name), read with app/normalise.py.
Claims known to be false: each true fact altered (another date, another governing law, an invented
party, another duration), written as a sentence and grounded against the real document, cited to the
evidence page and uncited. Today's check (a citation is "checked" when its page exists) is the baseline.

Run: .venv/bin/python benchmarks/bench_grounding.py [--fresh]   (make eval)
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.results import write_section  # noqa: E402

HEADING = "## Grounding: every claim traced to its page (issue 13)"
CONTRACTS = REPO.parent / "shared" / "corpus" / "contracts_pdf"
PROMPTS = {
    "cite pages": REPO / "benchmarks" / "prompts" / "answer_cite_pages.md",
    "quote each claim": REPO / "benchmarks" / "prompts" / "answer_quote_each_claim.md",
}
QUESTIONS = {
    "Governing Law": "Which law governs this agreement?",
    "Agreement Date": "What is the date of this agreement?",
    "Expiration Date": "When does this agreement expire?",
    "Parties": "Who are the parties to this agreement?",
    "Renewal Term": "What is the renewal term of this agreement?",
    "Notice Period To Terminate Renewal": "How much notice is needed to stop this agreement from renewing?",
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


def read_labels() -> dict[str, list[Label]]:
    rows = list(csv.DictReader((CONTRACTS / "cuad_labels.csv").open(encoding="utf-8")))
    out: dict[str, list[Label]] = {}
    for row in rows:
        labels = []
        for category in QUESTIONS:
            answer_key = next(k for k in row if k.startswith(category) and "Answer" in k)
            clauses = ast.literal_eval(row[category]) if row[category].strip() else []
            labels.append(Label(row["Filename"], category, row[answer_key].strip(), [str(c) for c in clauses]))
        out[row["Filename"]] = labels
    return out


def contract_path(filename: str) -> Path:
    stem = Path(filename).stem
    for path in CONTRACTS.iterdir():
        if path.stem == stem and path.suffix.lower() == ".pdf":
            return path
    raise FileNotFoundError(filename)


def _key(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


def collect(ctx: Any, model_sha: str, labels: dict[str, list[Label]], fresh: bool) -> list[Asked]:
    """Every question of every contract, under each instruction text: from the cache, or asked."""
    from app.chat import ChatService
    from app.errors import FolioError

    store = cache_dir() / model_sha[:16]
    store.mkdir(parents=True, exist_ok=True)
    asked: list[Asked] = []
    for prompt_name, prompt_file in PROMPTS.items():
        instructions = prompt_file.read_text(encoding="utf-8")
        service: ChatService | None = None
        try:
            for filename, contract_labels in labels.items():
                doc = ctx.library.add(contract_path(filename)).document
                for label in contract_labels:
                    question = QUESTIONS[label.category]
                    entry = store / f"{_key(instructions, doc.sha256, question, str(MAX_ANSWER_TOKENS))}.json"
                    if entry.exists() and not fresh:
                        raw = json.loads(entry.read_text(encoding="utf-8"))
                        asked.append(
                            Asked(prompt_name, label, question, raw["answer"], raw["note"], raw["seconds"], True)
                        )
                        continue
                    if service is None:
                        service = ChatService(ctx, instructions=instructions)
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


def setup_home() -> Any:
    """A throw-away FOLIO_HOME with the eval model registered and active."""
    home = Path(tempfile.mkdtemp(prefix="folio-bench-grounding-"))
    os.environ["FOLIO_HOME"] = str(home)
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.toml").write_text(
        f"schema_version = 1\nmax_answer_tokens = {MAX_ANSWER_TOKENS}\nthinking = false\n"
    )
    from app.context import open_app
    from benchmarks.eval_model import eval_model_path

    ctx = open_app()
    record, _ = ctx.models.add(eval_model_path())
    ctx.settings.active_model = record.sha256
    ctx.save_settings()
    return ctx, record.sha256


def main(argv: list[str]) -> int:
    if not (CONTRACTS / "cuad_labels.csv").exists():
        print(f"bench_grounding: the CUAD contracts are not at {CONTRACTS}", file=sys.stderr)
        return 1
    fresh = "--fresh" in argv
    ctx, model_sha = setup_home()
    try:
        labels = read_labels()
        asked = collect(ctx, model_sha, labels, fresh)
        if "--collect-only" in argv:
            print(f"{len(asked)} answers collected", file=sys.stderr)
            return 0
        from benchmarks.grounding_eval import evaluate

        lines = evaluate(ctx, labels, asked, model_sha)
    finally:
        ctx.close()
    print("\n".join(lines))
    write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
