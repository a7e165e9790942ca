"""Run the reliability tests and write RELIABILITY.md from what the run produced.

    python tools/reliability_report.py            # the tests `make test` runs (one kill -9 trial per phase)
    python tools/reliability_report.py --slow     # plus the full kill -9 trials (make reliability)
    python tools/reliability_report.py --from DIR # only render, from a folder a run left (junit.xml, figures.jsonl)

Nothing in the table is typed by hand: the tests come from the list below, what each proves from its
docstring, the figures (trials, files, failures) from the `figures` the tests record
(tests/plugins/figures.py) and the results from pytest's JUnit XML.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "RELIABILITY.md"
GUARD_ROW = "(whole run) network guard"

# (issue point, test file or node id). Prefixes select every test they cover.
POINTS: list[tuple[str, str]] = [
    ("1 no network", "tests/reliability/test_no_network.py"),
    (
        "1 no network",
        "tests/reliability/test_full_flow.py::test_add_ask_extract_export_run_guarded_and_touch_no_network",
    ),
    ("1 no network", "tests/e2e/test_remote.py::test_no_network_socket_without_a_server_url"),
    ("2 kill -9", "tests/reliability/test_crash_safety.py"),
    ("2 kill -9", "tests/reliability/test_crash_checks.py"),
    ("2 kill -9", "tests/e2e/test_extraction.py::test_cli_extract_folder_survives_kill_and_resumes"),
    ("3 engine faults", "tests/reliability/test_engine_faults.py"),
    ("3 engine faults", "tests/gui/test_engine_killed_window.py"),
    ("3 engine faults", "tests/e2e/test_engine.py::test_killed_engine_is_reported_and_the_next_request_works"),
    ("3 engine faults", "tests/e2e/test_engine.py::test_out_of_memory_is_an_error_event_and_the_engine_recovers"),
    ("3 engine faults", "tests/e2e/test_vision.py::test_projector_that_does_not_fit_the_model_is_refused"),
    ("3 engine faults", "tests/unit/test_gguf_facts.py::test_unusable_files_are_refused_in_one_line"),
    ("3 engine faults", "tests/unit/test_gguf_facts.py::test_truncated_model_is_refused"),
    ("4 bad files", "tests/reliability/test_corpus_cli.py"),
    ("4 bad files", "tests/unit/test_corpus.py"),
    ("4 properties", "tests/reliability/test_properties.py"),
    ("4 properties", "tests/unit/test_citations.py"),
    ("4 properties", "tests/unit/test_quotes.py"),
    ("5 injection", "tests/reliability/test_injection_tokens.py"),
    ("5 injection", "tests/gui/test_viewer_markup.py"),
    ("5 injection", "tests/unit/test_prompting.py::test_document_text_with_special_tokens_stays_content"),
    ("5 injection", "tests/unit/test_prompting.py::test_document_cannot_close_its_fence"),
    ("5 injection", "tests/e2e/test_engine.py::test_document_text_is_tokenized_with_special_tokens_off"),
    ("5 injection", "tests/e2e/test_vision.py::test_document_text_cannot_fake_an_image_slot"),
    ("6 data at rest", "tests/reliability/test_full_flow.py::test_everything_written_is_user_only"),
    ("6 data at rest", "tests/unit/test_settings_paths.py::test_folio_home_overrides_all_three_dirs"),
    ("6 data at rest", "tests/unit/test_settings_paths.py::test_settings_round_trip_with_schema_version"),
    ("6 purge", "tests/reliability/test_purge.py"),
    ("7 machine faults", "tests/reliability/test_faults.py"),
    ("7 no orphans", "tests/reliability/test_no_orphans.py"),
    ("7 light commands", "tests/reliability/test_light_commands.py"),
    ("7 resumable scans", "tests/reliability/test_scan_resume.py"),
    (
        "7 hostile nesting",
        "tests/unit/test_ingest_email.py::test_a_mail_bomb_nested_2000_levels_deep_is_refused_in_one_line",
    ),
]


@dataclass
class Row:
    point: str
    test: str  # node id; parametrized tests are folded into one row
    proves: str = ""
    outcomes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def result(self) -> str:
        bad = {k: v for k, v in self.outcomes.items() if k != "passed" and v}
        if not self.outcomes:
            return "not run"
        if not bad:
            return "passed" if sum(self.outcomes.values()) == 1 else f"passed ({self.outcomes['passed']})"
        return ", ".join(f"{v} {k}" for k, v in sorted(bad.items())) + f" of {sum(self.outcomes.values())}"


def run_tests(folder: Path, slow: bool) -> float:
    targets = sorted({target for _point, target in POINTS})
    env = {**os.environ, "FOLIO_RELIABILITY_OUT": str(folder), "QT_QPA_PLATFORM": "offscreen"}
    command = [sys.executable, "-m", "pytest", *targets, "-q", "-p", "no:cacheprovider",
               f"--junitxml={folder / 'junit.xml'}", "-m", "slow or not slow" if slow else "not slow"]  # fmt: skip
    start = dt.datetime.now(dt.UTC)
    subprocess.run(command, cwd=REPO, env=env, check=False)
    return (dt.datetime.now(dt.UTC) - start).total_seconds()


def _results(junit: Path) -> dict[str, tuple[str, float]]:
    """node id -> (outcome, seconds), from pytest's JUnit XML."""
    out: dict[str, tuple[str, float]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/") + ".py"
        name = case.get("name", "")
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        out[f"{module}::{name}"] = (outcome, float(case.get("time", 0)))
    return out


def _docstrings(path: Path) -> tuple[str, dict[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = {
        node.name: ast.get_docstring(node) or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }
    return ast.get_docstring(tree) or "", functions


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    if ". " in flat:
        flat = flat[: flat.index(". ") + 1]
    return flat


def _proves(node: str) -> str:
    path, _, name = node.partition("::")
    module_doc, functions = _docstrings(REPO / path)
    doc = functions.get(name.split("[")[0], "")
    if doc:
        return _first_sentence(doc)
    words = name.split("[")[0].removeprefix("test_").replace("_", " ")
    return words[:1].upper() + words[1:] + "." if words else _first_sentence(module_doc)


def collect(folder: Path) -> tuple[list[Row], dict[str, Any]]:
    results = _results(folder / "junit.xml")
    figures: dict[str, dict[str, Any]] = {}
    figures_file = folder / "figures.jsonl"
    if figures_file.exists():
        for line in figures_file.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            figures[entry["nodeid"]] = entry["figures"]
    rows: dict[str, Row] = {}
    for point, target in POINTS:
        for node, (outcome, seconds) in results.items():
            if not (node == target or node.startswith(target + "::") or node.startswith(target + "[")):
                continue
            key = node.split("[")[0]
            row = rows.setdefault(key, Row(point, key, _proves(key)))
            row.outcomes[outcome] = row.outcomes.get(outcome, 0) + 1
            row.seconds += seconds
            row.figures.update(figures.get(node, {}))
        if target.endswith(".py") and target in figures:  # figures a module records for all its tests
            module_rows = [r for k, r in rows.items() if k.startswith(target + "::")]
            if module_rows:
                module_rows[0].figures.update(figures[target])
    for row in rows.values():  # one row per parametrized test: how many cases it ran
        cases = sum(row.outcomes.values())
        if cases > 1 and "cases" not in row.figures:
            row.figures = {"cases": cases, **row.figures}
    return list(rows.values()), figures.get(GUARD_ROW, {})


def _figures_text(figures: dict[str, Any]) -> str:
    shown = []
    for key, value in figures.items():
        if key in ("runs", "phase_seconds", "examples"):
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        shown.append(f"{key.replace('_', ' ')}: {value}")
    return "; ".join(shown) or "-"


def render(rows: list[Row], guard: dict[str, Any], meta: dict[str, Any]) -> str:
    failed = sum(1 for r in rows if r.result not in ("not run",) and not r.result.startswith("passed"))
    not_run = sum(1 for r in rows if r.result == "not run")
    trials = [r for r in rows if "runs" in r.figures]
    lines = [
        "# Reliability",
        "",
        "What the reliability tests prove about Folio, with their figures from the last run. Generated by "
        "`tools/reliability_report.py` (`make reliability`) from that run's JUnit XML and the figures the tests "
        "record; do not edit by hand.",
        "",
        f"- Run: {meta['when']} on {meta['machine']}, Python {meta['python']}, commit {meta['commit']}, "
        f"{meta['seconds'] / 60:.1f} min{', with the slow kill -9 trials' if meta['slow'] else ''}.",
        f"- Rows: {len(rows)}; failed: {failed}; not run: {not_run}.",
    ]
    if guard:
        lines.append(
            f"- Network guard over the whole run: {guard.get('tests', 0)} tests, {guard.get('guarded_processes', 0)} "
            f"guarded Python processes (of them {guard.get('engine_processes', 0)} llama.cpp engine processes), "
            f"{guard.get('violations', 0)} violations."
        )
    lines += [
        "",
        "| Point | Test | What it proves | Figures | Result | Seconds |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        cells = [r.point, f"`{r.test}`", r.proves.replace("|", "\\|"), _figures_text(r.figures).replace("|", "\\|"),
                 r.result, f"{r.seconds:.1f}"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    for r in trials:
        lines += ["", f"## kill -9 trials: `{r.test}`", ""]
        seed = r.figures.get("seed")
        lines.append(
            f"Seed {seed}. Phase lengths measured before the trials (s): "
            + ", ".join(f"{k} {v}" for k, v in r.figures.get("phase_seconds", {}).items())
            + f". Replay one trial with `FOLIO_CRASH_SEED={seed} FOLIO_CRASH_ONLY=N`."
        )
        lines += ["", "| Trial | Phase | Killed after (s) | Landed | Problems |", "| --- | --- | --- | --- | --- |"]
        for run in r.figures["runs"]:
            problems = "; ".join(run["problems"]) or "none"
            lines.append(f"| {run['trial']} | {run['phase']} | {run['kill_after_s']} | {run['landed']} | {problems} |")
    examples = [r for r in rows if "examples" in r.figures]
    for r in examples:
        lines += ["", f"Hypothesis examples run in `{r.test.split('::')[0]}`: "
                  + ", ".join(f"{k} {v}" for k, v in r.figures["examples"].items()) + "."]  # fmt: skip
    return "\n".join(lines) + "\n"


def _meta(seconds: float, slow: bool) -> dict[str, Any]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    return {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "commit": commit.strip() or "unknown",
        "seconds": seconds,
        "slow": slow,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", action="store_true", help="also run the full kill -9 trials")
    parser.add_argument("--from", dest="source", type=Path, help="render from an earlier run's folder")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.source:
        folder, seconds = args.source, float(json.loads((args.source / "meta.json").read_text())["seconds"])
    else:
        folder = Path(tempfile.mkdtemp(prefix="folio-reliability-"))
        seconds = run_tests(folder, args.slow)
        (folder / "meta.json").write_text(json.dumps({"seconds": seconds, "slow": args.slow}))
    rows, guard = collect(folder)
    slow = bool(json.loads((folder / "meta.json").read_text()).get("slow")) if args.source else args.slow
    args.out.write_text(render(rows, guard, _meta(seconds, slow)), encoding="utf-8")
    bad = [r for r in rows if not r.result.startswith("passed")]
    print(f"wrote {args.out}: {len(rows)} rows, {len(bad)} not passed (results in {folder})")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
