"""`make run` (`folio gui`) on a Linux desktop whose X11 libraries are incomplete: one plain line that
names what is missing and how to install it, instead of Qt's abort."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fixtures.qt_plugin import ABSENT, plugin_without_a_library


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("ldd") is None, reason="Qt's X11 plugin: Linux with ldd"
)
def test_gui_names_the_missing_x11_library_in_one_line(tmp_path: Path) -> None:
    platforms = plugin_without_a_library(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "XDG_SESSION_TYPE", "WAYLAND_DISPLAY")}
    # An X11 desktop as Qt sees it; no X server is needed, the check comes before Qt opens the display.
    env |= {"DISPLAY": ":97", "QT_QPA_PLATFORM_PLUGIN_PATH": str(platforms)}
    proc = subprocess.run(
        [sys.executable, "-m", "ui.entry", "gui"], capture_output=True, text=True, env=env, timeout=120, cwd=REPO
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("folio: error: the window needs X11 libraries that are not installed:")
    assert ABSENT in lines[0]
