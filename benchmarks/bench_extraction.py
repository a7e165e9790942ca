"""Extraction benchmarks, side by side in one run (ratios, since the machine is shared):

1. What the JSON-schema grammar costs per generated token (llama.cpp checks the whole
   262K vocabulary against it at every step), against unconstrained sampling.
2. Fields per request: one request per field vs all fields in one request, with the current
   engine (no state cache yet): how often the document is read, and the wall time.
3. Quote verification over a long document (exact and fuzzy).

Run: .venv/bin/python benchmarks/bench_extraction.py [grammar] [groups] [quotes]
(all three by default; updates its section of benchmarks/RESULTS.md)
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.results import write_section  # noqa: E402

SECTION = "## Extraction (issue 6)"


def bench_grammar(model_path: Path) -> list[str]:
    from inference.chat_format import Message, template_for
    from inference.engine import EngineConfig, GenerateRequest, LocalEngine, Sampling
    from inference.prompt import render_prompt
    from tests.fixtures.pdfs import CONTRACT_CLAUSES

    # One thread: spinning llama.cpp worker threads on a loaded 2-core machine distort everything.
    engine = LocalEngine(EngineConfig(str(model_path), n_ctx=4096, n_threads=1), cancelled=lambda: False)
    cell = {"anyOf": [{"type": "null"}, {"type": "object", "properties": {
        "value": {"type": "string", "minLength": 1, "maxLength": 16},
        "quote": {"type": "string", "maxLength": 32}, "page": {"type": "string", "maxLength": 8}},
        "required": ["value", "quote", "page"], "additionalProperties": False}]}  # fmt: skip
    keys = ["governing_law", "monthly_fee"]
    schema = json.dumps({"type": "object", "properties": dict.fromkeys(keys, cell), "required": keys,
                         "additionalProperties": False})  # fmt: skip
    text = "\n".join(f"[p. {i // 2 + 1}]\n{h}\n{b}" for i, (h, b) in enumerate(CONTRACT_CLAUSES))
    messages = [Message("system", text), Message("user", "Extract governing_law and monthly_fee as JSON.")]
    rendered = render_prompt(template_for("gemma3", None), messages, enable_thinking=False)
    request = GenerateRequest(rendered.parts, Sampling(0.0, 1.0, 1, 0.0, 0.0, 200), rendered.prefix_parts, schema)
    free = GenerateRequest(rendered.parts, request.sampling, rendered.prefix_parts)
    results: dict[str, list[tuple[float, int]]] = {"unconstrained": [], "JSON schema grammar": []}
    for _round in range(2):
        for name, req in (("unconstrained", free), ("JSON schema grammar", request)):
            stats = engine.generate(req, lambda _e: None)
            results[name].append((stats.generate_ms / max(1, stats.completion_tokens), stats.completion_tokens))
    engine.close()
    base = min(r[0] for r in results["unconstrained"])
    lines = ["| sampling | ms per token (best of 2) | ratio | tokens |", "| --- | ---: | ---: | ---: |"]
    for name, rs in results.items():
        best = min(r[0] for r in rs)
        lines.append(f"| {name} | {best:.1f} | {best / base:.2f} | {rs[0][1]} |")
    return lines


def bench_groups(model_home: Path) -> list[str]:
    os.environ["FOLIO_HOME"] = str(model_home)
    from app.context import open_app
    from app.extraction.runner import ExtractionService
    from app.extraction.templates import Template
    from tests.fixtures.pdfs import make_contract_pdf

    fields = [{"name": n} for n in ("Parties", "Governing Law", "Monthly Fee", "Term")]
    lines = [
        "| fields per request | requests | prompt tokens read | engine s (prefill + answer) | ratio |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    rows = []
    for group in (1, len(fields)):
        (model_home / "config" / "settings.toml").write_text(
            "schema_version = 1\nthreads = 1\n"
            f"[extraction]\nvalue_chars = 12\nquote_chars = 40\nfields_per_request = {group}\n"
        )
        ctx = open_app()
        doc = ctx.library.add(make_contract_pdf(model_home / "contract.pdf")).document
        template = Template.from_dict({"key": f"bench_{group}", "name": f"bench {group}", "fields": fields})
        service = ExtractionService(ctx)
        service.run(service.start_run(template, [doc.id], resume=False))
        service.close()
        # Cells of one request share its cost equally; summing them gives the engine time (model load excluded).
        tokens, ms = ctx.db.execute(
            "SELECT sum(prompt_tokens - coalesce(cached_tokens, 0)), sum(prefill_ms + generate_ms) "
            "FROM extraction_cells WHERE run_id = (SELECT max(id) FROM extraction_runs)"
        ).fetchone()
        requests = -(-len(fields) // group)
        rows.append((group, requests, int(tokens) // group, ms / 1000))
        ctx.close()
    base = rows[-1][3]
    for group, requests, tokens, seconds in rows:
        lines.append(f"| {group} | {requests} | {tokens:,} | {seconds:.1f} | {seconds / base:.2f} |")
    return lines


def bench_quotes() -> list[str]:
    from app.citations.quotes import find_quote

    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(3000)]
    pages = [" ".join(rng.choice(vocab) for _ in range(450)) for _ in range(300)]
    words = pages[250].split()
    exact = " ".join(words[100:130])
    fuzzy = exact[:40] + ("x" if exact[40] != "x" else "y") + exact[41:]  # one letter misread
    absent = " ".join(rng.choice(vocab) for _ in range(30))
    lines = ["| quote (30 words) in a 300-page document | result | ms |", "| --- | --- | ---: |"]
    for name, quote, preferred in (
        ("exact, cited page", exact, [250]),
        ("exact, page not cited", exact, []),
        ("one character off", fuzzy, []),
        ("not in the document", absent, []),
    ):
        start = time.perf_counter()
        match = find_quote(quote, pages, preferred)
        lines.append(f"| {name} | {match.status} | {(time.perf_counter() - start) * 1000:.1f} |")
    return lines


def main() -> int:
    from app.models.registry import assemble_starter

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "cache" / "models").mkdir(parents=True)
        (home / "config").mkdir()
        only = sys.argv[1:]
        body = [
            f"Measured {time.strftime('%Y-%m-%d')} on the shared 2-core machine with the starter model "
            "(Gemma 3 270M Q4_K_M, 262K vocabulary), one llama.cpp thread. Absolute times are disturbed by "
            "other load; read the ratios.",
        ]
        if not only or "grammar" in only:
            model = assemble_starter(home / "cache" / "models")
            body += ["", "### Grammar-constrained sampling", "", *bench_grammar(model)]
        if not only or "groups" in only:
            body += [
                "",
                "### Fields per request (current engine, no state cache)",
                "",
                *bench_groups(home),
                "",
                "With the prefix state cache (issue 4) the document part of each request is restored instead of",
                "read again, so one field per request costs one document read per document.",
            ]
        if not only or "quotes" in only:
            body += ["", "### Quote verification", "", *bench_quotes()]
    print("\n".join(body))
    write_section(SECTION, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
