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


def test_the_rooms_tool_leaves_modules_added_to_a_room_alone() -> None:
    """tools/rooms.py moved the extraction module into app/extraction/runner.py and rewrites references to the
    old module; modules added to the room since (decide, plain) are the package's, not runner's."""
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import rooms
    finally:
        sys.path.remove(str(REPO / "tools"))
    assert (REPO / "app" / "extraction" / "decide.py").is_file()
    kept = "from app.extraction.decide import decided\nimport app.extraction.plain\napp.extraction.runner.run\n"
    assert rooms.rewrite_text(kept) == kept
    old = "app." + "extraction.ExtractionService"  # built, so that the tool itself never rewrites this test
    assert rooms.rewrite_text(old) == "app.extraction.runner.ExtractionService"
