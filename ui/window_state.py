"""What the window remembers between runs: its place and size (on which screen), the panel widths,
and the hints the user has dismissed. Kept in config/window.json, user-only, replaced atomically.

Qt's own saveGeometry()/restoreGeometry() do the screen work: a window saved on a monitor that is no
longer attached comes back on one that is, and never larger than it. A damaged or foreign file is
ignored (the window starts at its default size), never trusted.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from pathlib import Path

from common.files import atomic_write_text

STATE_FILE = "window.json"
FIRST_DOCUMENT_HINT = "first-document"


@dataclass
class WindowState:
    geometry: bytes = b""  # QMainWindow.saveGeometry()
    panels: bytes = b""  # QSplitter.saveState() of the three panels
    hidden: list[str] = field(default_factory=list)  # side panels the user hid ('library', 'document')
    hints_seen: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, config_dir: Path) -> WindowState:
        try:
            raw = json.loads((config_dir / STATE_FILE).read_text(encoding="utf-8"))
            return cls(
                geometry=base64.b64decode(str(raw.get("geometry", "")), validate=True),
                panels=base64.b64decode(str(raw.get("panels", "")), validate=True),
                hidden=[str(p) for p in raw.get("hidden", [])],
                hints_seen=[str(h) for h in raw.get("hints_seen", [])],
            )
        except (OSError, ValueError, TypeError, AttributeError, binascii.Error):
            return cls()

    def save(self, config_dir: Path) -> None:
        data = {
            "geometry": base64.b64encode(self.geometry).decode("ascii"),
            "panels": base64.b64encode(self.panels).decode("ascii"),
            "hidden": sorted(set(self.hidden)),
            "hints_seen": sorted(set(self.hints_seen)),
        }
        atomic_write_text(config_dir / STATE_FILE, json.dumps(data, indent=2) + "\n")
