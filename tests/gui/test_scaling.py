"""Readable at 125% and 150%: every window fits a 1366x768 laptop screen and no text is cut off.

Qt reads QT_SCALE_FACTOR once per process, so each case runs tests/gui/scaling_probe.py in a fresh
process on an offscreen screen the size of a common laptop; a larger font stands for the
"make text bigger" accessibility setting.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui
PROBE = Path(__file__).with_name("scaling_probe.py")


@pytest.mark.parametrize(("scale", "font_scale"), [(1.25, 1.0), (1.5, 1.0), (1.0, 1.5)])
def test_windows_fit_and_no_text_is_clipped(
    starter_home: Path, tmp_path: Path, scale: float, font_scale: float
) -> None:
    screens = tmp_path / "screens.json"
    screen = {"name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 768, "logicalDpi": 96, "dpr": 1}
    screens.write_text(json.dumps({"screens": [screen]}))
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": f"offscreen:configfile={screens}",
        "QT_SCALE_FACTOR": str(scale),
        "HOME": str(tmp_path / "home"),  # model discovery looks in an empty home, not this machine's
    }
    run = subprocess.run(
        [sys.executable, str(PROBE), str(font_scale)], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["dpr"] == pytest.approx(scale)
    assert report["screen"] == [round(1366 / scale), round(768 / scale)]
    assert report["font_pt"] == pytest.approx(9.0 * font_scale, rel=0.2)
    assert not report["setup_busy"]
    for window in ("main window", "settings", "model setup"):
        assert report[window] == [], f"{window} at {scale:.0%} (font x{font_scale}): {report[window]}"


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
