"""The laptops lawyers have: every window fits a 1280x720 or 1366x768 screen at 100% to 200% scaling,
with the longest real file name selected, and no text is cut off.

Qt reads QT_SCALE_FACTOR once per process, so each case runs tests/gui/scaling_probe.py in a fresh
process on an offscreen screen of that size; a larger font stands for the "make text bigger"
accessibility setting. The windows are not resized by the probe: each must pick a size that fits.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CORPUS

pytestmark = pytest.mark.gui
PROBE = Path(__file__).with_name("scaling_probe.py")
WINDOWS = ("main window", "settings", "model setup")
DOCUMENT_WINDOWS = (*WINDOWS, "extraction table", "playbook review", "compare")
# A name in CUAD's style (company, filing date, exhibit, title, parties) for when the corpus is absent.
MADE_UP = (
    "NORTHWINDANALYTICSHOLDINGSINC_03_03_2025-EX-10.31-MASTER SERVICES AND TECHNICAL INFRASTRUCTURE "
    "MAINTENANCE AGREEMENT between NORTHWIND ANALYTICS LLC and CONTOSO LEGAL PARTNERS LLP.PDF"
)


def longest_cuad_name() -> Path:
    """The CUAD contract of the shared corpus with the longest file name (MANIFEST.tsv lists them)."""
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.exists():
        pytest.skip(f"the shared corpus is not at {CORPUS} (only the made-up long name is tested)")
    with manifest.open(encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if "CUAD" in r["license_if_known"]]
    pdfs = [r["relpath"] for r in rows if r["relpath"].lower().endswith(".pdf")]
    return CORPUS / max(pdfs, key=lambda p: len(Path(p).name))


def probe(tmp_path: Path, width: int, height: int, scale: float, *args: str) -> dict[str, object]:
    screens = tmp_path / "screens.json"
    screen = {"name": "laptop", "x": 0, "y": 0, "width": width, "height": height, "logicalDpi": 96, "dpr": 1}
    screens.write_text(json.dumps({"screens": [screen]}))
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": f"offscreen:configfile={screens}",
        "QT_SCALE_FACTOR": str(scale),
        "HOME": str(tmp_path / "home"),  # model discovery looks in an empty home, not this machine's
    }
    run = subprocess.run([sys.executable, str(PROBE), *args], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    report: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["dpr"] == pytest.approx(scale)
    assert report["screen"] == [round(width / scale), round(height / scale)]
    assert not report["setup_busy"]
    return report


@pytest.mark.parametrize(("scale", "font_scale"), [(1.25, 1.0), (1.5, 1.0), (1.0, 1.5)])
def test_windows_fit_and_no_text_is_clipped(
    starter_home: Path, tmp_path: Path, scale: float, font_scale: float
) -> None:
    report = probe(tmp_path, 1366, 768, scale, "--font-scale", str(font_scale))
    assert report["font_pt"] == pytest.approx(9.0 * font_scale, rel=0.2)
    for window in WINDOWS:
        assert report[window] == [], f"{window} at {scale:.0%} (font x{font_scale}): {report[window]}"


def _fits_with(document: Path, tmp_path: Path, width: int, height: int, scale: float) -> dict[str, object]:
    report = probe(tmp_path, width, height, scale, "--document", str(document))
    for window in DOCUMENT_WINDOWS:
        assert report[window] == [], f"{window} on {width}x{height} at {scale:.0%}: {report[window]}"
    assert report["title"] == document.stem and len(str(report["title_shown"])) < len(document.stem)
    return report


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1366, 768)])
@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_everything_fits_with_the_longest_cuad_name(
    starter_home: Path, tmp_path: Path, width: int, height: int, scale: float
) -> None:
    report = _fits_with(longest_cuad_name(), tmp_path, width, height, scale)
    assert report["panels"] == [True, True, True]  # at 150% too, all three panels side by side


@pytest.mark.parametrize(("width", "height", "scale"), [(1366, 768, 1.25), (1280, 720, 2.0)])
def test_everything_fits_with_a_long_made_up_name(
    starter_home: Path, tmp_path: Path, width: int, height: int, scale: float
) -> None:
    from tests.fixtures.pdfs import make_contract_pdf

    document = make_contract_pdf(tmp_path / MADE_UP, title="")
    report = _fits_with(document, tmp_path, width, height, scale)
    # 640x360 holds one panel beside the chat at most: the library starts hidden (View brings it back).
    assert report["panels"][2] and (report["panels"] == [True, True, True]) == (scale < 2)


def test_the_probe_sees_clipped_text(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

    from tests.gui.scaling_probe import clipped

    top = QWidget()
    layout = QVBoxLayout(top)
    narrow = QLabel("A label whose text is far wider than twenty pixels")
    narrow.setFixedWidth(20)
    button = QPushButton("Use these files")
    button.setFixedSize(30, 10)
    wrapped = QLabel("Wrapped text " * 30)
    wrapped.setWordWrap(True)
    wrapped.setFixedHeight(12)
    for w in (narrow, button, wrapped):
        layout.addWidget(w)
    qtbot.addWidget(top)
    top.show()
    problems = clipped(top)
    assert len(problems) == 3, problems


def test_the_probe_sees_controls_off_the_screen_and_sideways_scrolling(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QListWidget, QPushButton, QVBoxLayout, QWidget

    from tests.gui.scaling_probe import off_screen

    top = QWidget()
    layout = QVBoxLayout(top)
    wide = QListWidget()
    wide.addItem("x" * 400)  # a line wider than the list: a horizontal scroll bar
    layout.addWidget(wide)
    layout.addWidget(QPushButton("Send"))
    qtbot.addWidget(top)
    top.setGeometry(0, 0, 300, 200)
    top.show()
    qtbot.waitExposed(top)
    assert off_screen(top, QRect(0, 0, 800, 800)) == ["QListWidget() needs a horizontal scroll bar"]
    problems = off_screen(top, QRect(0, 0, 200, 150))  # a screen smaller than the window
    assert any("QPushButton(Send)" in p and "not inside the screen" in p for p in problems), problems
