"""Make the installers' icons from assets/icons/folio.svg: packaging/windows/folio.ico and
packaging/macos/folio.icns (packaging/folio.spec and folio.iss pick them up when present).

Qt draws the SVG at each size and encodes PNGs; the two containers are written here, since both
formats are a short header plus a table of PNG images (PNG entries: Windows Vista+, macOS 10.7+).
Run: python tools/make_icons.py   (offscreen; no display needed)
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 128, 256)
# ICNS element types holding PNG data, by pixel size (the @2x types reuse the larger renders).
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"ic11", 32),  # 16@2x
    (b"ic12", 64),  # 32@2x
    (b"ic07", 128),
    (b"ic13", 256),  # 128@2x
    (b"ic08", 256),
    (b"ic14", 512),  # 256@2x
    (b"ic09", 512),
    (b"ic10", 1024),  # 512@2x
)


def png_bytes(size: int) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    from ui.app_icon import render_icon

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not render_icon(size).save(buffer, "PNG"):
        raise RuntimeError(f"could not encode the {size}px icon")
    buffer.close()
    return bytes(data.data())


def ico(images: dict[int, bytes]) -> bytes:
    """ICONDIR, one 16-byte ICONDIRENTRY per image, then the PNGs."""
    sizes = sorted(images)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        png = images[size]
        side = 0 if size >= 256 else size  # 0 means 256
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset + len(blobs))
        blobs += png
    return header + entries + blobs


def icns(images: dict[int, bytes]) -> bytes:
    """'icns', total length, then (type, length incl. its 8-byte header, PNG) elements; big-endian."""
    body = b"".join(kind + struct.pack(">I", 8 + len(images[size])) + images[size] for kind, size in ICNS_TYPES)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from common.files import atomic_write_bytes

    _app = QApplication.instance() or QApplication([sys.argv[0]])
    images = {size: png_bytes(size) for size in sorted({*ICO_SIZES, *(s for _, s in ICNS_TYPES)})}
    targets = {
        REPO / "packaging" / "windows" / "folio.ico": ico({s: images[s] for s in ICO_SIZES}),
        REPO / "packaging" / "macos" / "folio.icns": icns(images),
    }
    for path, data in targets.items():
        atomic_write_bytes(path, data)
        print(f"wrote {path.relative_to(REPO)} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
