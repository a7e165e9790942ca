"""Every benchmark and tool script still imports: they run outside `make test` (the quality
benchmarks need the 1.1 GB eval model), so a module moved elsewhere would otherwise break them
unnoticed, as the rooms move once did to benchmarks/cuad_compare.py."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for folder in ("benchmarks", "tools") for p in (REPO / folder).glob("*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[f"{p.parent.name}/{p.name}" for p in SCRIPTS])
def test_script_imports(path: Path) -> None:
    # Scripts start their work under `if __name__ == "__main__"`: importing runs only their imports.
    importlib.import_module(f"{path.parent.name}.{path.stem}")
