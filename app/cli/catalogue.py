"""`list`, `show` and `import` of a catalogue (`folio templates`, `folio playbooks`): one shape for both.

An entry holds parts (a template's fields, a playbook's rules); each command names them and says how one
part is shown. A damaged user file is a warning line under the list, never a reason to fail it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from app.catalogue import Catalogue, Entry

E = TypeVar("E", bound=Entry)
P = TypeVar("P")


@dataclass(frozen=True)
class Parts(Generic[E, P]):
    unit: str  # what the parts are called, plural: 'fields', 'rules'
    of: Callable[[E], Sequence[P]]
    line: Callable[[P], str]  # one part as `show` prints it after its number


def add_actions(parser: argparse.ArgumentParser, noun: str, unit: str) -> argparse._SubParsersAction[Any]:
    """The list, show and import actions under `folio templates` or `folio playbooks`; the caller adds its own."""
    actions = parser.add_subparsers(dest=f"{noun}s_command", metavar="ACTION", required=True)
    actions.add_parser("list", help=f"list {noun}s", description=f"List built-in and user {noun}s.")
    show = actions.add_parser("show", help=f"show a {noun}'s {unit}", description=f"Show a {noun}'s {unit}.")
    show.add_argument("key", metavar="KEY")
    show.add_argument("--json", action="store_true", help=f"print the {noun} file")
    imp = actions.add_parser("import", help=f"add or replace a user {noun}", description=f"Import a {noun} file.")
    imp.add_argument("file", metavar="FILE.json")
    return actions


def run(store: Catalogue[E], parts: Parts[E, P], command: str, args: argparse.Namespace) -> bool:
    """Do `command` if it is list, show or import; False for the commands each catalogue has of its own."""
    if command == "list":
        for e in store.all():
            kind = "built-in" if e.builtin else "user"
            print(f"{e.key:<24} v{e.version:<3} {len(parts.of(e)):>3} {parts.unit}  {kind:<8}  {e.name}")
        for line in store.damaged:
            print(f"folio: warning: {line}", file=sys.stderr)
        return True
    if command == "show":
        e = store.get(args.key)
        if args.json:
            print(e.to_json(), end="")
            return True
        print(f"{e.name} ({e.key}, version {e.version}, {len(parts.of(e))} {parts.unit})")
        if e.description:
            print(e.description)
        for i, part in enumerate(parts.of(e), start=1):
            print(f"{i:>3}. {parts.line(part)}")
        return True
    if command == "import":
        e = store.import_file(Path(args.file).expanduser())
        print(f"imported {e.key} (version {e.version}, {len(parts.of(e))} {parts.unit})")
        return True
    return False
