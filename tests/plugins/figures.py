"""The `figures` fixture: numbers a reliability test reports about itself (trials run, files read,
failures found), collected by tools/reliability_report.py into RELIABILITY.md.

A test fills the dict it is given; when $FOLIO_RELIABILITY_OUT names a folder, the figures are
appended there (figures.jsonl) after the test, whether it passed or not.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

OUT_ENV = "FOLIO_RELIABILITY_OUT"


def record(nodeid: str, data: dict[str, Any]) -> None:
    folder = os.environ.get(OUT_ENV)
    if folder and data:
        Path(folder).mkdir(parents=True, exist_ok=True)
        with (Path(folder) / "figures.jsonl").open("a", encoding="utf-8") as out:
            out.write(json.dumps({"nodeid": nodeid, "figures": data}, default=str) + "\n")


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    data: dict[str, Any] = {}
    yield data
    record(request.node.nodeid, data)
