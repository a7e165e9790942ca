"""A redaction plan as a JSON file: the candidates found in one document, each with `accept` true or
false, to review in an editor and apply with `folio redact DOC --plan FILE --out COPY.pdf`.

The plan holds the candidates' words (the proof needs them to look for survivors): it is the user's
working file, kept where they choose; Folio's own log never holds them. A plan names the document's
sha256 and is refused for any other file.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.errors import FolioError
from app.redaction.candidates import KINDS, Candidate

FORMAT = "folio-redaction-plan"
VERSION = 1


def plan_json(title: str, sha256: str, candidates: list[Candidate], accepted: set[str], *, label: bool) -> str:
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "document": {"title": title, "sha256": sha256},
        "label": label,
        "candidates": [asdict(c) | {"accept": c.key in accepted} for c in candidates],
    }
    return json.dumps(payload, indent=1, ensure_ascii=False) + "\n"


def read_plan(path: Path, sha256: str) -> tuple[list[Candidate], set[str], bool]:
    """The plan's candidates, the keys of those accepted, and whether boxes get labels."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FolioError(f"{path}: the plan cannot be read ({exc.strerror})") from exc
    except ValueError as exc:
        raise FolioError(f"{path}: the plan is not valid JSON ({exc})") from exc
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("version") != VERSION:
        raise FolioError(f"{path}: not a Folio redaction plan (version {VERSION})")
    if raw.get("document", {}).get("sha256") != sha256:
        raise FolioError(f"{path}: the plan was made for another document (its sha256 differs)")
    candidates: list[Candidate] = []
    accepted: set[str] = set()
    for n, item in enumerate(raw.get("candidates", []), start=1):
        try:
            candidate = _candidate(item)
        except (KeyError, TypeError, ValueError) as exc:
            raise FolioError(f"{path}: candidate {n} is malformed ({exc})") from exc
        candidates.append(candidate)
        if item.get("accept") is True:
            accepted.add(candidate.key)
    return candidates, accepted, bool(raw.get("label", True))


def _candidate(item: dict[str, Any]) -> Candidate:
    if item["kind"] not in KINDS:
        raise ValueError(f"unknown kind {item['kind']!r}")

    def rects(key: str) -> tuple[tuple[float, float, float, float], ...]:
        return tuple((float(r[0]), float(r[1]), float(r[2]), float(r[3])) for r in item[key])

    return Candidate(
        key=str(item["key"]),
        kind=str(item["kind"]),
        page=int(item["page"]),
        text=str(item["text"]),
        context=str(item.get("context", "")),
        source=str(item.get("source", "")),
        via=str(item.get("via", "text")),
        ink=rects("ink"),
        boxes=rects("boxes"),
        span=(int(item.get("span", (-1, -1))[0]), int(item.get("span", (-1, -1))[1])),
        hidden=str(item.get("hidden", "")),
    )
