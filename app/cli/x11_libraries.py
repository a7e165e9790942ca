"""The system libraries Qt's X11 platform plugin (xcb) needs on Linux: which ones are missing, and the
packages that provide them on Debian/Ubuntu and Fedora.

PySide6's wheels bring Qt but not the X11 libraries. When one is missing, Qt prints "Could not load
the Qt platform plugin xcb" and aborts, without naming it. So before the window starts (and in
`folio doctor`), the dynamic loader itself is asked (`ldd`) about the very plugin Qt would load: what
it reports missing is what Qt would meet. No Qt import here: it must work when Qt cannot start.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PLUGIN = "libqxcb.so"

# soname -> (Debian/Ubuntu package, Fedora package), for every system library the xcb plugin and the
# Qt libraries it loads (XcbQpa, Gui, DBus) link to beyond the C/C++ runtime.
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libXau.so.6": ("libxau6", "libXau"),
    "libXdmcp.so.6": ("libxdmcp6", "libXdmcp"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx"),
    "libGLdispatch.so.0": ("libglvnd0", "libglvnd"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
}

_NOT_FOUND = re.compile(r"^\s*(\S+) => not found\s*$", re.MULTILINE)


@dataclass(frozen=True)
class XcbCheck:
    plugin: Path | None
    missing: tuple[str, ...] = ()  # sonames the loader cannot find
    unchecked: str = ""  # why nothing could be checked (no plugin, no ldd); empty when checked

    @property
    def ok(self) -> bool:
        return not self.missing

    def line(self) -> str:
        """One line for the user: what is missing and the install commands, or what was checked."""
        if self.unchecked:
            return f"not checked: {self.unchecked}"
        if not self.missing:
            return f"all libraries found for {self.plugin}"
        return missing_line(self.missing)


def missing_line(missing: Sequence[str]) -> str:
    known = [PACKAGES[name] for name in missing if name in PACKAGES]
    unknown = [name for name in missing if name not in PACKAGES]
    debian = " ".join(dict.fromkeys(deb for deb, _ in known))
    fedora = " ".join(dict.fromkeys(fed for _, fed in known))
    text = f"the window needs X11 libraries that are not installed: {', '.join(missing)}."
    if known:
        text += f" Debian/Ubuntu: sudo apt-get install {debian}; Fedora: sudo dnf install {fedora}"
    if unknown:
        text += f" (find the package for {', '.join(unknown)} with apt-file search or dnf provides)"
    return text


def xcb_would_be_used(env: Mapping[str, str], argv: Sequence[str] = (), platform: str = sys.platform) -> bool:
    """True when Qt would try its X11 plugin first: Linux, with `xcb` asked for, or nothing asked for on
    an X11 display (a Wayland session gets Qt's Wayland plugin first)."""
    if not platform.startswith("linux"):
        return False
    asked = env.get("QT_QPA_PLATFORM", "")
    if "-platform" in argv[:-1]:
        asked = argv[list(argv).index("-platform") + 1]
    if asked.strip():
        return asked.split(";")[0].split(":")[0].strip() == "xcb"
    wayland = env.get("XDG_SESSION_TYPE") == "wayland" and bool(env.get("WAYLAND_DISPLAY"))
    return bool(env.get("DISPLAY")) and not wayland


def xcb_plugin(env: Mapping[str, str]) -> Path | None:
    """The xcb plugin file Qt would load: QT_QPA_PLATFORM_PLUGIN_PATH, QT_PLUGIN_PATH, then PySide6's own."""
    folders = [Path(env["QT_QPA_PLATFORM_PLUGIN_PATH"])] if env.get("QT_QPA_PLATFORM_PLUGIN_PATH") else []
    folders += [Path(p) / "platforms" for p in env.get("QT_PLUGIN_PATH", "").split(os.pathsep) if p]
    try:
        spec = importlib.util.find_spec("PySide6")  # finds the package without importing Qt
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        folders += [Path(p) / "Qt" / "plugins" / "platforms" for p in spec.submodule_search_locations]
    return next((folder / PLUGIN for folder in folders if (folder / PLUGIN).is_file()), None)


def missing_libraries(library: Path, env: Mapping[str, str]) -> tuple[str, ...]:
    """Sonames the dynamic loader cannot find for `library` and everything it links to, in the
    environment given (LD_LIBRARY_PATH counts, as it would for Qt)."""
    ldd = shutil.which("ldd", path=env.get("PATH") or os.defpath)
    if ldd is None:
        raise FileNotFoundError("ldd is not installed")
    out = subprocess.run(
        [ldd, str(library)], capture_output=True, text=True, env=dict(env), timeout=30, check=False
    ).stdout
    return tuple(dict.fromkeys(_NOT_FOUND.findall(out)))


def check_xcb(env: Mapping[str, str] | None = None) -> XcbCheck:
    env = os.environ if env is None else env
    plugin = xcb_plugin(env)
    if plugin is None:
        return XcbCheck(None, unchecked=f"Qt's X11 plugin ({PLUGIN}) was not found")
    try:
        return XcbCheck(plugin, missing_libraries(plugin, env))
    except (OSError, subprocess.SubprocessError) as exc:
        return XcbCheck(plugin, unchecked=f"could not ask the loader about {plugin.name}: {exc}")


def startup_problem(argv: Sequence[str] = ()) -> str | None:
    """The one line to print instead of starting the window, or None when the window can try."""
    if not xcb_would_be_used(os.environ, argv):
        return None
    check = check_xcb()
    return None if check.ok else check.line()
