"""Files written whole or not at all, readable by their user only.

One writer for the settings, exports, audit head, document snapshots and their records: the bytes
go to a temp file in the same folder, are fsynced, made user-only, and renamed over the target, so
a crash leaves the old file or the new one, never half of either.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def private_dir(path: Path) -> Path:
    """Create a folder, and any missing folder above it, user-only (0700 on POSIX).

    Path.mkdir(parents=True, mode=...) applies the mode to the last folder only; the ones above get
    the umask's default (usually world-readable). Folders that already exist are left as they are.
    """
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue  # made meanwhile by another process
        if os.name == "posix":
            folder.chmod(0o700)  # mkdir's mode is filtered through the umask
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a folder")
    return path


def synced_temp(path: Path, data: bytes) -> Path:
    """A user-only temp file beside `path` holding `data`, flushed to disk. The caller renames or
    links it into place and deletes it if that fails."""
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if os.name == "posix":
            os.chmod(tmp, 0o600)  # mkstemp makes it 0600 already; a reused name might not be
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one rename: never a half-written file."""
    tmp = synced_temp(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
