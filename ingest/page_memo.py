"""Scanned pages already read, kept on disk while a long scan is read, so reading it again after a
crash, a kill -9 or a cancel starts at the next unread page instead of page 1.

A 500-page production takes many minutes of OCR; losing all of it to a closed laptop lid is what
this prevents. One file per finished page (its Page and Segments: the cleaned page image, the OCR
text and every word's box), written whole or not at all (common.files) with a CRC-32 over its
content, so a page torn or damaged on disk is read again, never trusted. The folder is named by the
file's sha256 and everything that changes what a page reads as (the OCR engine and its language, the
page-image budget, this format's version): another setting reads every page afresh.

The caller (app.store.library) deletes the folder once the document is stored.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import zlib
from dataclasses import asdict
from pathlib import Path
from typing import Any

from common.files import atomic_write_bytes
from ingest.document import Anchor, Page, Segment

VERSION = 1


def memo_folder(root: Path, sha256: str, settings: str) -> Path:
    """Where the pages of the file with this sha256, read under these settings, are kept."""
    key = hashlib.sha256(f"{VERSION}|{settings}".encode()).hexdigest()[:16]
    return root / f"{sha256}-{key}"


def forget(root: Path, sha256: str) -> None:
    """Delete every memo of this file (whatever settings it was read under)."""
    import shutil

    if root.is_dir():
        for folder in root.glob(f"{sha256}-*"):
            shutil.rmtree(folder, ignore_errors=True)


class PageMemo:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.kept = 0  # pages this reading took from the memo

    def _path(self, number: int) -> Path:
        return self.folder / f"p{number:05d}.json"

    def get(self, number: int) -> tuple[Page, list[Segment]] | None:
        try:
            raw = json.loads(self._path(number).read_text(encoding="utf-8"))
            body = raw["body"]
            if zlib.crc32(body.encode()) != raw["crc32"]:
                return None
            page, segments = _decode(json.loads(body))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self.kept += 1
        return page, segments

    def put(self, number: int, page: Page, segments: list[Segment]) -> None:
        body = json.dumps(_encode(page, segments), separators=(",", ":"))
        data = json.dumps({"crc32": zlib.crc32(body.encode()), "body": body})
        with contextlib.suppress(OSError):  # a full disk costs the resume, not the reading
            atomic_write_bytes(self._path(number), data.encode())


def _png(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode("ascii") if data is not None else None


def _unpng(text: str | None) -> bytes | None:
    return base64.b64decode(text) if text is not None else None


def _encode(page: Page, segments: list[Segment]) -> dict[str, Any]:
    return {
        "page": {**asdict(page), "image_png": _png(page.image_png)},
        "segments": [
            {
                "kind": s.kind,
                "anchor": asdict(s.anchor),
                "text": s.text,
                "image_png": _png(s.image_png),
                "role": s.role,
                "words": [list(w) for w in s.words],
            }
            for s in segments
        ],
    }


def _decode(raw: dict[str, Any]) -> tuple[Page, list[Segment]]:
    page = Page(**{**raw["page"], "image_png": _unpng(raw["page"]["image_png"])})
    segments = []
    for s in raw["segments"]:
        anchor = s["anchor"]
        if anchor.get("bbox") is not None:
            anchor = {**anchor, "bbox": tuple(anchor["bbox"])}
        segments.append(
            Segment(
                kind=s["kind"],
                anchor=Anchor(**anchor),
                text=s["text"],
                image_png=_unpng(s["image_png"]),
                role=s["role"],
                words=tuple(tuple(w) for w in s["words"]),
            )
        )
    return page, segments
