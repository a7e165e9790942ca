"""benchmarks/RESULTS.md: each benchmark owns one `## ` section and replaces only that one."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(heading: str, lines: list[str]) -> None:
    """Put `heading` and `lines` in place of that heading's section (or append it) in RESULTS.md."""
    body = lines[1:] if lines and lines[0] == heading else list(lines)
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
