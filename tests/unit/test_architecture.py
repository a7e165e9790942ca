"""The core must work without Qt, and only ui/ may import PySide6 (checked, not promised)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

BLOCK_QT = """
import sys, importlib.abc
class NoQt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('PySide6', 'shiboken6'):
            raise ImportError('PySide6 is blocked for this test')
sys.meta_path.insert(0, NoQt())
sys.argv = ['folio'] + sys.argv[1:]
from app.cli.commands import main
raise SystemExit(main())
"""


def test_core_works_with_pyside6_absent(contract_pdf: Path) -> None:
    for args in (["add", str(contract_pdf)], ["list"], ["show", "1", "--segments"]):
        proc = subprocess.run([sys.executable, "-c", BLOCK_QT, *args], capture_output=True, text=True, cwd=REPO)
        assert proc.returncode == 0, proc.stderr


def test_import_contracts_hold() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run([str(lint), "--no-cache"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Only ui imports PySide6 KEPT" in proc.stdout
