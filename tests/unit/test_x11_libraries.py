"""Qt's X11 plugin on Linux: the libraries the loader cannot find, and the packages that hold them.

Checked against the loader itself, whatever this machine has installed: a copy of PySide6's real
plugin with one dependency made unavailable (tests/fixtures/qt_plugin.py), and the real plugin, whose
verdict must match what dlopen does with it in a fresh process."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.x11_libraries import PACKAGES, check_xcb, missing_line, xcb_would_be_used
from tests.conftest import REPO, run_folio
from tests.fixtures.qt_plugin import ABSENT, GONE, plugin_without_a_library, pyside_qt_dir

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("ldd") is None, reason="Qt's X11 plugin: Linux with ldd"
)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM_PLUGIN_PATH", "QT_PLUGIN_PATH")}
    return env | extra


def _dlopen_error(library: Path) -> str:
    """What the loader says when the library is loaded for real, in a fresh process ('' = it loaded)."""
    probe = subprocess.run(
        [sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", str(library)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return probe.stderr if probe.returncode else ""


@linux_only
def test_names_the_library_the_loader_cannot_find(tmp_path: Path) -> None:
    platforms = plugin_without_a_library(tmp_path)
    real = check_xcb(_env())
    check = check_xcb(_env(QT_QPA_PLATFORM_PLUGIN_PATH=str(platforms)))
    assert check.plugin == platforms / "libqxcb.so"
    assert set(check.missing) == (set(real.missing) - {GONE}) | {ABSENT}
    assert not check.ok and ABSENT in check.line()
    error = _dlopen_error(check.plugin)
    assert error and any(name in error for name in check.missing)


@linux_only
def test_agrees_with_the_loader_about_the_real_plugin() -> None:
    check = check_xcb(_env())
    assert check.plugin is not None and check.plugin.is_relative_to(pyside_qt_dir())
    assert not check.unchecked
    error = _dlopen_error(check.plugin)
    if check.missing:
        assert error and any(name in error for name in check.missing), error
    else:
        assert error == "" and check.line().startswith("all libraries found")


@linux_only
def test_every_system_x11_library_the_plugin_links_has_its_packages() -> None:
    """The table covers what PySide6's plugin and the Qt libraries it loads link to on this machine."""
    plugin = check_xcb(_env()).plugin
    assert plugin is not None
    out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, check=True).stdout
    linked = set(re.findall(r"^\s*(\S+) =>", out, re.MULTILINE))
    system = re.compile(r"lib(xcb|X|xkb|GL|EGL|OpenGL|fontconfig|freetype|dbus|glib|gthread)")
    graphical = {name for name in linked if system.match(name)}
    assert {"libxcb.so.1", "libxcb-icccm.so.4", "libxkbcommon-x11.so.0"} <= graphical
    assert graphical - set(PACKAGES) == set()


def test_one_line_with_the_install_commands_for_both_distributions() -> None:
    line = missing_line(["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-shm.so.0", "libxcb-randr.so.0"])
    assert "\n" not in line
    assert line == (
        "the window needs X11 libraries that are not installed: libxcb-icccm.so.4, libxcb-keysyms.so.1, "
        "libxcb-shm.so.0, libxcb-randr.so.0. Debian/Ubuntu: sudo apt-get install libxcb-icccm4 libxcb-keysyms1 "
        "libxcb-shm0 libxcb-randr0; Fedora: sudo dnf install xcb-util-wm xcb-util-keysyms libxcb"
    )
    unknown = missing_line([ABSENT])
    assert "apt-get" not in unknown and f"find the package for {ABSENT}" in unknown


@pytest.mark.parametrize(
    ("env", "argv", "platform", "used"),
    [
        ({"DISPLAY": ":0"}, [], "linux", True),
        ({}, [], "linux", False),  # no display: Qt would not pick X11 (nothing to check)
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, [], "linux", False),
        ({"QT_QPA_PLATFORM": "xcb"}, [], "linux", True),
        ({"QT_QPA_PLATFORM": "wayland;xcb", "DISPLAY": ":0"}, [], "linux", False),
        ({"DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}, [], "linux", False),
        ({"DISPLAY": ":0"}, ["-platform", "offscreen"], "linux", False),
        ({"DISPLAY": ":0"}, [], "darwin", False),
        ({"DISPLAY": ":0"}, [], "win32", False),
    ],
)
def test_checked_only_where_qt_would_use_its_x11_plugin(
    env: dict[str, str], argv: list[str], platform: str, used: bool
) -> None:
    assert xcb_would_be_used(env, argv, platform) is used


@linux_only
def test_doctor_reports_the_same_line(tmp_path: Path) -> None:
    platforms = plugin_without_a_library(tmp_path)
    code, out, err = run_folio("doctor", env={"QT_QPA_PLATFORM_PLUGIN_PATH": str(platforms)})
    assert code == 0, err
    line = next(line for line in out.splitlines() if "Qt X11 libraries" in line)
    expected = check_xcb(_env(QT_QPA_PLATFORM_PLUGIN_PATH=str(platforms))).line()
    assert line.startswith("!!") and line.endswith(expected)


def test_readme_install_lines_hold_every_xcb_and_xkb_package() -> None:
    """The README's prerequisites for Debian/Ubuntu and Fedora carry the X11 packages Qt needs, as the
    one-line message would name them (the CI fresh-machine job installs the README's apt line)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    debian = set(re.search(r"`sudo apt-get install ([^`]*)`", readme).group(1).split())  # type: ignore[union-attr]
    fedora = set(re.search(r"`sudo dnf install ([^`]*)`", readme).group(1).split())  # type: ignore[union-attr]
    x11 = [packages for name, packages in PACKAGES.items() if name.startswith(("libxcb", "libxkbcommon", "libX11-xcb"))]
    assert {deb for deb, _ in x11} <= debian
    assert {fed for _, fed in x11} <= fedora
