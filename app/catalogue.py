"""A catalogue of JSON files: the built-in ones shipped in assets (read-only) and the user's own in the config folder.

Extraction templates (app.extraction.templates) and playbooks (app.playbook.book) are both kept this way;
each says how one file is parsed and checked, and the catalogue does the rest: list, get by key, store a
user file (its version bumped when anything changed) and import one. A user file that cannot be read is
left as it is and named in one line in `damaged`, never a reason to refuse the ones that read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from app.errors import FolioError, NotFound
from common.files import atomic_write_text, private_dir


class Entry(Protocol):
    """What a catalogue keeps: a frozen dataclass with a key, a version and a hash of its content."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    # Read-only, as a frozen dataclass's fields are.
    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def description(self) -> str: ...
    @property
    def builtin(self) -> bool: ...
    @property
    def sha256(self) -> str: ...

    def to_json(self) -> str: ...


E = TypeVar("E", bound=Entry)
# raw JSON, built-in?, the file's name for messages -> the entry, or FolioError naming what is wrong
Parse = Callable[[Any, bool, str], E]


class Catalogue(Generic[E]):
    def __init__(self, noun: str, user_dir: Path, builtin_dir: Path, parse: Parse[E]) -> None:
        self.noun = noun  # 'template', 'playbook': the word every message uses
        self.user_dir = user_dir
        self.builtin_dir = builtin_dir
        self._parse = parse
        self.damaged: list[str] = []  # one line per user file that could not be read, by the last all()

    def read(self, path: Path, *, builtin: bool = False) -> E:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise FolioError(f"{self.noun} {path.name} cannot be read ({' '.join(str(exc).split())})") from exc
        return self._parse(raw, builtin, path.name)

    def builtins(self) -> list[E]:
        return [self.read(p, builtin=True) for p in sorted(self.builtin_dir.glob("*.json"))]

    def user_entries(self) -> list[E]:
        """The user's files that read; a damaged one is left as it is and named in `damaged`."""
        self.damaged = []
        out: list[E] = []
        if not self.user_dir.is_dir():
            return out
        for path in sorted(self.user_dir.glob("*.json")):
            try:
                out.append(self.read(path))
            except FolioError as exc:
                self.damaged.append(str(exc))
        return out

    def all(self) -> list[E]:
        """Built-ins first; a user file with a built-in's key (put there by hand) is not listed twice."""
        builtin = self.builtins()
        names = {b.key for b in builtin}
        return builtin + [e for e in self.user_entries() if e.key not in names]

    def get(self, key: str) -> E:
        key = key.strip()
        entries = self.all()
        for entry in entries:
            if entry.key == key:
                return entry
        damaged = f"; {len(self.damaged)} damaged file(s): {self.damaged[0]}" if self.damaged else ""
        raise NotFound(f"no {self.noun} {key!r} (known: {', '.join(e.key for e in entries)}){damaged}")

    def is_builtin(self, key: str) -> bool:
        return any(b.key == key for b in self.builtins())

    def store(self, entry: E) -> E:
        """Write a user file; its version goes up by one past the stored one when anything changed. A damaged
        file of the same key is what the new one replaces."""
        path = self.user_dir / f"{entry.key}.json"
        entry = replace(entry, builtin=False)
        if path.exists():
            try:
                current = self.read(path)
            except FolioError:
                current = None
            if current is not None and current.sha256 == entry.sha256:
                return current
            if current is not None:
                entry = replace(entry, version=max(current.version, entry.version) + 1)
        private_dir(self.user_dir)
        atomic_write_text(path, entry.to_json())
        return entry

    def import_file(self, path: Path) -> E:
        """Add or replace a user file from one outside: read and checked whole before anything is written."""
        entry = self.read(path)
        if self.is_builtin(entry.key):
            raise FolioError(f"{entry.key!r} is the key of a built-in {self.noun}; give the import another key")
        return self.store(entry)
