"""benchmarks/RESULTS.md: each benchmark owns one `## ` section (or one `### ` subsection of one) and
replaces only that one."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(heading: str, lines: list[str], *, keep_subsections: bool = False) -> None:
    """Put `heading` and `lines` in place of that heading's section (or append it) in RESULTS.md; with
    keep_subsections, the section's `### ` subsections that `lines` does not have stay (another mode
    of the benchmark writes them)."""
    body = lines[1:] if lines and lines[0] == heading else list(lines)
    if keep_subsections:
        own = {line for line in body if line.startswith("### ")}
        body += [
            line
            for sub, sub_lines in _subsections(read_section(heading)).items()
            if sub not in own
            for line in ["", *sub_lines]
        ]
    while body and not body[0].strip():
        body.pop(0)
    section = "\n".join([heading, "", *body]).strip("\n") + "\n"
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    start = text.find(heading + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(heading))
        text = text[:start] + section + ("\n" + text[end + 1 :] if end >= 0 else "")
    RESULTS.write_text(text, encoding="utf-8")


def read_section(heading: str) -> list[str]:
    """The lines of a section of RESULTS.md, its heading first; [] when it is not there."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    start = text.find(heading + "\n")
    if start < 0:
        return []
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)].rstrip("\n").split("\n")


def _subsections(section: list[str]) -> dict[str, list[str]]:
    """A section's `### ` subsections by heading, each with its lines (heading first, no trailing blanks)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in section:
        if line.startswith("### "):
            current = out[line] = [line]
        elif current is not None:
            current.append(line)
    return {sub: _strip_blank_tail(lines) for sub, lines in out.items()}


def _strip_blank_tail(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def write_subsection(heading: str, sub_heading: str, lines: list[str]) -> None:
    """Put `lines` (a `### ` subsection, its heading first) in place of that subsection of the `## `
    section `heading`, or at the section's end; the rest of the section stays."""
    section = read_section(heading) or [heading, ""]
    sub = lines if lines and lines[0] == sub_heading else [sub_heading, "", *lines]
    start = section.index(sub_heading) if sub_heading in section else -1
    if start < 0:
        section = [*_strip_blank_tail(section), "", *sub]
    else:
        end = next((i for i in range(start + 1, len(section)) if section[i].startswith("### ")), len(section))
        rest = section[end:]
        section = [*section[:start], *_strip_blank_tail(sub), *([""] if rest else []), *rest]
    write_section(heading, section)


def threads(text: str) -> int:
    """An argparse type for --threads: a whole number of llama.cpp threads, 1 or more."""
    return _count(text, 1)


def threads_or_planner(text: str) -> int:
    """--threads where 0 leaves the choice to Folio's planner."""
    return _count(text, 0)


def _count(text: str, least: int) -> int:
    value = int(text) if text.strip().lstrip("-").isdigit() else least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"{text!r} is not a thread count ({least} or more)")
    return value


def best_of(fn: Callable[[], object], rounds: int) -> float:
    """The shortest of `rounds` timings of fn, in seconds: the run least disturbed by other work."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best
