"""Document snapshots on disk: the model state right after reading the documents, kept for later.

A snapshot is a llama.cpp state file (written and read by llama.cpp's own fast file functions) plus
a small JSON record beside it that commits it: size, token count and a CRC-32 of the state file.
A snapshot without its record, or whose bytes do not match it, is deleted and rebuilt — never used.
The folder is size-capped; the least recently used snapshots are evicted first.

A checkpoint is a snapshot of part of a prefix, written while a long prefix is being read so that
a quit, crash or kill costs at most the reading since the last one. Its record says so
(`checkpoint`), and its key is the key of the prefix tokens it holds, so a later read of the same
prefix finds it (`prefix_keys`). Checkpoints count against the cap like any snapshot and are
deleted when the read they belong to completes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import zlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.files import atomic_write_bytes

STATE_FORMAT = 1
_CHUNK = 8 * 1024 * 1024


def state_key(fingerprint: dict[str, Any], tokens: list[int]) -> str:
    """Model identity + every setting that changes the numbers + the exact prefix tokens."""
    return prefix_keys(fingerprint, tokens, [len(tokens)])[0][1]


def prefix_keys(fingerprint: dict[str, Any], tokens: list[int], cuts: list[int]) -> list[tuple[int, str]]:
    """state_key(fingerprint, tokens[:cut]) for every cut (ascending), hashing the tokens once."""
    digest = hashlib.sha256(json.dumps({"format": STATE_FORMAT, **fingerprint}, sort_keys=True).encode())
    out: list[tuple[int, str]] = []
    at = 0
    for cut in cuts:
        digest.update(array("i", tokens[at:cut]).tobytes())
        at = cut
        out.append((cut, digest.copy().hexdigest()[:40]))
    return out


def file_crc32(path: Path) -> int:
    crc = 0
    buf = bytearray(_CHUNK)
    view = memoryview(buf)
    with path.open("rb", buffering=0) as handle:
        while True:
            n = handle.readinto(buf)
            if not n:
                return crc
            crc = zlib.crc32(view[:n], crc)


@dataclass(frozen=True)
class Snapshot:
    key: str
    path: Path
    n_tokens: int
    size: int


class StateStore:
    def __init__(self, folder: str | Path, max_bytes: int) -> None:
        self.folder = Path(folder)
        self.max_bytes = max_bytes

    def _paths(self, key: str) -> tuple[Path, Path]:
        return self.folder / f"{key}.state", self.folder / f"{key}.json"

    def has(self, key: str) -> bool:
        """Cheap: a committed snapshot seems to exist (lookup() verifies it)."""
        return self._paths(key)[1].exists()

    def lookup(self, key: str) -> Snapshot | None:
        """A verified snapshot, or None. A damaged one is deleted so it gets rebuilt."""
        state, record = self._paths(key)
        if not record.exists() and not state.exists():
            return None
        try:
            meta = json.loads(record.read_text(encoding="utf-8"))
            ok = (
                meta.get("format") == STATE_FORMAT
                and meta.get("key") == key
                and state.stat().st_size == meta["bytes"]
                and file_crc32(state) == meta["crc32"]
            )
        except (OSError, ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            self.discard(key)
            return None
        now = time.time()
        with contextlib.suppress(OSError):
            os.utime(record, (now, now))  # least-recently-used order lives in the record's mtime
        return Snapshot(key, state, int(meta["tokens"]), int(meta["bytes"]))

    def save(
        self,
        key: str,
        n_tokens: int,
        write: Callable[[Path], int],
        tags: tuple[str, ...] = (),
        *,
        checkpoint: bool = False,
    ) -> Snapshot | None:
        """write(tmp_path) lets llama.cpp write the state; then it is committed atomically. The tags
        (what the prefix holds) go into the record, for discard_tagged()."""
        if self.max_bytes <= 0:
            return None
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        state, record = self._paths(key)
        tmp = self.folder / f".{key}.{os.getpid()}.tmp"
        try:
            # Created user-only before llama.cpp opens it: fopen(..., "wb") keeps an existing file's mode.
            os.close(os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o600))
            written = write(tmp)
            size = tmp.stat().st_size if tmp.exists() else 0
            if written <= 0 or size != written:
                return None
            if size > self.max_bytes:
                return None  # would evict everything else and still not fit
            with tmp.open("rb") as handle:
                os.fsync(handle.fileno())
            crc = file_crc32(tmp)
            if os.name == "posix":
                os.chmod(tmp, 0o600)
            os.replace(tmp, state)
            meta = {"format": STATE_FORMAT, "key": key, "tokens": n_tokens, "bytes": size, "crc32": crc}
            meta["tags"] = list(tags)
            if checkpoint:
                meta["checkpoint"] = True
            atomic_write_bytes(record, json.dumps(meta).encode())
        except OSError:
            return None
        finally:
            tmp.unlink(missing_ok=True)
        self.evict(keep=key)
        return Snapshot(key, state, n_tokens, size)

    def keys(self) -> set[str]:
        """Keys of every committed snapshot and checkpoint (unverified: lookup() checks one)."""
        return {record.stem for record in self.folder.glob("*.json")} if self.folder.is_dir() else set()

    def is_checkpoint(self, key: str) -> bool:
        try:
            return bool(json.loads(self._paths(key)[1].read_text(encoding="utf-8")).get("checkpoint"))
        except (OSError, ValueError, AttributeError):
            return False

    def discard(self, key: str) -> None:
        for path in self._paths(key):
            path.unlink(missing_ok=True)

    def discard_tagged(self, tag: str) -> int:
        """Delete every snapshot whose record lists this tag, or lists no tags at all (written before
        tags existed, so it may hold anything), with leftovers of interrupted saves. Returns how many."""
        removed = 0
        if not self.folder.exists():
            return removed
        for record in self.folder.glob("*.json"):
            try:
                tags = json.loads(record.read_text(encoding="utf-8")).get("tags")
            except (OSError, ValueError, AttributeError):
                tags = None
            if not isinstance(tags, list) or tag in tags:
                self.discard(record.stem)
                removed += 1
        leftovers = [p for p in self.folder.glob("*.state") if not p.with_suffix(".json").exists()]
        for path in [*leftovers, *self.folder.glob(".*.tmp")]:
            with contextlib.suppress(OSError):
                path.unlink()
        return removed

    def entries(self) -> list[tuple[float, str, int]]:
        """(last used, key, bytes) of every committed snapshot, oldest first."""
        out: list[tuple[float, str, int]] = []
        if not self.folder.exists():
            return out
        for record in self.folder.glob("*.json"):
            state = record.with_suffix(".state")
            try:
                out.append((record.stat().st_mtime, record.stem, state.stat().st_size))
            except OSError:
                continue
        return sorted(out)

    def evict(self, keep: str | None = None) -> None:
        entries = self.entries()
        total = sum(size for _, _, size in entries)
        for _, key, size in entries:
            if total <= self.max_bytes:
                break
            if key == keep:
                continue
            self.discard(key)
            total -= size
        self._sweep()

    def _sweep(self) -> None:
        """Remove leftovers of an interrupted save (old enough not to be another save in progress)."""
        cutoff = time.time() - 600
        leftovers = [p for p in self.folder.glob("*.state") if not p.with_suffix(".json").exists()]
        for path in [*leftovers, *self.folder.glob(".*.tmp")]:
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < cutoff:
                    path.unlink()
