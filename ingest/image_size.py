"""Image dimensions read from file headers, without decoding a single pixel.

This is how decompression bombs are refused: a small PNG or TIFF can declare gigapixels.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

from ingest.errors import CorruptFile

MAX_TIFF_PAGES = 10_000


def image_sizes(path: Path, head: bytes | None = None) -> list[tuple[int, int]]:
    """(width, height) of every frame the file holds (TIFF can hold many; the others hold one)."""
    with path.open("rb") as handle:
        if head is None:
            head = handle.read(64 * 1024)
        if head.startswith(b"\x89PNG\r\n\x1a\n"):
            return [_png(head, path)]
        if head.startswith(b"\xff\xd8\xff"):
            return [_jpeg(handle, path)]
        if head[:2] == b"BM":
            return [_bmp(head, path)]
        if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
            return [_webp(head, path)]
        if head[:4] in (b"II*\x00", b"MM\x00*"):
            return _tiff(handle, path)
    raise CorruptFile(f"{path.name}: the image header cannot be read")


def _damaged(path: Path) -> CorruptFile:
    return CorruptFile(f"{path.name}: the image is damaged or truncated (its header cannot be read)")


def png_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's first 24 bytes (its IHDR chunk), or None if they are not a PNG's."""
    if len(head) < 24 or not head.startswith(b"\x89PNG\r\n\x1a\n") or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _png(head: bytes, path: Path) -> tuple[int, int]:
    size = png_size(head)
    if size is None:
        raise _damaged(path)
    return size


def _jpeg(handle: BinaryIO, path: Path) -> tuple[int, int]:
    handle.seek(2)
    while True:
        byte = handle.read(1)
        while byte and byte != b"\xff":
            byte = handle.read(1)
        while byte == b"\xff":
            byte = handle.read(1)
        if not byte:
            raise _damaged(path)
        marker = byte[0]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            continue
        if marker == 0xD9:
            raise _damaged(path)
        raw = handle.read(2)
        if len(raw) < 2:
            raise _damaged(path)
        length = struct.unpack(">H", raw)[0]
        # SOF0..SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            body = handle.read(5)
            if len(body) < 5:
                raise _damaged(path)
            height, width = struct.unpack(">HH", body[1:5])
            return width, height
        handle.seek(length - 2, 1)


def _bmp(head: bytes, path: Path) -> tuple[int, int]:
    if len(head) < 26:
        raise _damaged(path)
    header_size = struct.unpack("<I", head[14:18])[0]
    if header_size == 12:  # OS/2 BITMAPCOREHEADER
        width, height = struct.unpack("<HH", head[18:22])
        return width, height
    width, height = struct.unpack("<ii", head[18:26])
    return abs(width), abs(height)  # negative height = top-down rows


def _webp(head: bytes, path: Path) -> tuple[int, int]:
    chunk = head[12:16]
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(head) >= 30:
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
        return width, height
    raise _damaged(path)


def _tiff(handle: BinaryIO, path: Path) -> list[tuple[int, int]]:
    handle.seek(0)
    header = handle.read(8)
    order = "<" if header[:2] == b"II" else ">"
    offset = struct.unpack(order + "I", header[4:8])[0]
    sizes: list[tuple[int, int]] = []
    seen: set[int] = set()
    while offset and offset not in seen and len(sizes) < MAX_TIFF_PAGES:
        seen.add(offset)  # a loop in the IFD chain would otherwise never end
        handle.seek(offset)
        raw = handle.read(2)
        if len(raw) < 2:
            raise _damaged(path)
        count = struct.unpack(order + "H", raw)[0]
        entries = handle.read(12 * count)
        if len(entries) < 12 * count:
            raise _damaged(path)
        width = height = 0
        for i in range(count):
            tag, kind = struct.unpack(order + "HH", entries[12 * i : 12 * i + 4])
            value_bytes = entries[12 * i + 8 : 12 * i + 12]
            if kind == 3:  # SHORT
                value = struct.unpack(order + "H", value_bytes[:2])[0]
            elif kind == 4:  # LONG
                value = struct.unpack(order + "I", value_bytes)[0]
            else:
                continue
            if tag == 256:
                width = value
            elif tag == 257:
                height = value
        if not width or not height:
            raise _damaged(path)
        sizes.append((width, height))
        raw = handle.read(4)
        offset = struct.unpack(order + "I", raw)[0] if len(raw) == 4 else 0
    if not sizes:
        raise _damaged(path)
    return sizes
