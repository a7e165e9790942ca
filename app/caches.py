"""What Folio keeps only to be fast, and clearing it: document snapshots and remembered GGUF facts.

Both rebuild themselves on demand (a snapshot by reading the document again, facts by reading the
GGUF header again), so clearing them never loses the user's work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.paths import Paths
from inference.state_cache import StateStore


@dataclass(frozen=True)
class CacheUsage:
    name: str
    path: Path
    files: int
    bytes: int


def _facts_dir(paths: Paths) -> Path:
    return paths.models_dir / "facts"


def cache_usage(paths: Paths) -> list[CacheUsage]:
    snapshots = StateStore(paths.state_cache_dir, 0).entries()
    facts = sorted(_facts_dir(paths).glob("*.json")) if _facts_dir(paths).is_dir() else []
    return [
        CacheUsage("document snapshots", paths.state_cache_dir, len(snapshots), sum(size for _, _, size in snapshots)),
        CacheUsage("model facts", _facts_dir(paths), len(facts), sum(_size(p) for p in facts)),
    ]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def clear_caches(paths: Paths) -> int:
    """Delete committed snapshots and cached facts; returns the bytes freed. A snapshot being written
    right now (a temp file) is left alone: its writer commits or removes it."""
    freed = 0
    store = StateStore(paths.state_cache_dir, 0)
    for _, key, size in store.entries():
        store.discard(key)
        freed += size
    if _facts_dir(paths).is_dir():
        for path in _facts_dir(paths).glob("*.json"):
            size = _size(path)
            path.unlink(missing_ok=True)
            freed += size
    return freed


def human_size(n: int) -> str:
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"
