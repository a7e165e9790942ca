"""Group app/ into rooms: move each module with `git mv` and rewrite every reference to it.

    python tools/rooms.py          # move what is still in the old place, rewrite references
    python tools/rooms.py --check  # exit 1 if anything is still in the old layout

Re-runnable and idempotent: a module already in its room is left alone, and a reference already
written the new way is never rewritten again. That is what lets a branch merge other people's work
in the old layout and then move it along (revert the move, merge, run this again). References are
rewritten in Python (dotted names, `from ... import`, function-level imports, strings such as
monkeypatch targets), in paths written as app/x.py in code and Markdown, and in the import-linter
contract that keeps the rooms layered.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# room -> (what the room holds, in one line; {old module: new module name inside the room})
ROOMS: dict[str, tuple[str, dict[str, str]]] = {
    "store": (
        "What is kept in SQLite and beside it: the database, the library, conversations, search, the audit log.",
        {
            "db": "db",
            "library": "library",
            "conversations": "conversations",
            "search": "search",
            "audit": "audit",
            "recent": "recent",
        },
    ),
    "citations": (
        "Checking an answer against its documents: citation markers, quotes, claims, numbers, verdicts, passages.",
        {
            "citations": "markers",
            "quotes": "quotes",
            "claims": "claims",
            "normalise": "normalise",
            "grounding": "grounding",
            "verdicts": "verdicts",
            "citation_targets": "targets",
            "passages": "passages",
        },
    ),
    "models": (
        "The model files Folio knows: the registry of added models and the discovery of models already on disk.",
        {"models": "registry", "discovery": "discovery"},
    ),
    "engine": (
        "Which engine answers and how it is sized: the factory, the session, the planner's report, model setup.",
        {
            "engines": "factory",
            "session": "session",
            "plan_report": "plan_report",
            "model_setup": "setup",
            "server_check": "server_check",
        },
    ),
    "extraction": (
        "Filling a table from documents: templates, requests and their JSON schema, grounded cells, reviews.",
        {
            "extraction": "runner",
            "extraction_schema": "schema",
            "extraction_cells": "cells",
            "extraction_prompt": "prompt",
            "extraction_review": "review",
            "templates": "templates",
        },
    ),
    "processes": (
        "Child processes that keep MuPDF off the window's threads: the pool, the ingest reader, page drawing.",
        {
            "child_process": "pool",
            "ingest_process": "ingest_reader",
            "page_drawing": "page_drawing",
            "page_render": "page_render",
        },
    ),
    "cli": (
        "The `folio` commands (`python -m app.cli`): parsing, the work commands, doctor, the self-test.",
        {
            "cli": "commands",
            "cli_work": "work",
            "cli_compare": "compare",
            "cli_reading": "reading",
            "doctor": "doctor",
            "self_test": "self_test",
            "sockets": "sockets",
            "x11_libraries": "x11_libraries",
        },
    ),
}

# Top to bottom: a room imports only rooms below it (siblings joined by | never import each other).
LAYERS = [
    "app.cli",
    "app.redaction",
    "app.export",
    "app.reading | app.checks | app.passes | app.playbook",
    "app.chat | app.extraction | app.compare",
    "app.engine | app.processes | app.purge",
    "app.citations",
    "app.context",
    "app.models",
    "app.store",
    "app.settings | app.caches | app.catalogue",
    "app.paths | app.errors | app.clock | app.pages",
]

# The contract import-linter checks (pyproject.toml), between these markers.
CONTRACT_BEGIN = "# rooms: begin (written by tools/rooms.py)"
CONTRACT_END = "# rooms: end"

SEARCHED = ("app", "ui", "tests", "tools", "benchmarks", "packaging", "docs")
TEXT_SUFFIXES = {".py", ".md", ".spec", ".toml", ".cfg", ".txt"}
TOP_FILES = ("README.md", "RELIABILITY.md", "pyproject.toml", "Makefile")
SELF = Path(__file__).resolve()


def moves() -> dict[str, str]:
    """Old dotted module -> new dotted module."""
    return {f"app.{old}": f"app.{room}.{new}" for room, (_, members) in ROOMS.items() for old, new in members.items()}


def _git(*args: str) -> None:
    subprocess.run(["git", *args], cwd=ROOT, check=True)


def move_files(dry: bool) -> list[str]:
    done = []
    for room, (line, members) in ROOMS.items():
        folder = ROOT / "app" / room
        for old, new in members.items():
            source = ROOT / "app" / f"{old}.py"
            target = folder / f"{new}.py"
            if not source.is_file():
                continue
            done.append(f"app/{old}.py -> app/{room}/{new}.py")
            if dry:
                continue
            folder.mkdir(exist_ok=True)
            _git("mv", str(source.relative_to(ROOT)), str(target.relative_to(ROOT)))
        init = folder / "__init__.py"
        if folder.is_dir() and not init.exists() and not dry:
            init.write_text(f'"""{line}"""\n', encoding="utf-8")
            _git("add", str(init.relative_to(ROOT)))
    return done


def _rules() -> list[tuple[re.Pattern[str], str, str]]:
    """(pattern, old, new) for each move; old "" marks the `from app.room import name` form, old "="
    a pattern replaced by `new` as it stands (a regular expression template)."""
    rules = []
    for old, new in moves().items():
        room = new.rsplit(".", 1)[0]
        if old == room:  # app.cli -> app.cli.commands: the old name is now the room's package
            members = set(ROOMS[room.split(".")[1]][1].values()) | _on_disk(room)
            guard = "|".join(sorted(members | {"__main__"}))
            # `app.cli.parse_args` (an attribute) moves; `app.cli.commands` (already moved) does not.
            rules.append((re.compile(rf"\b{re.escape(old)}\.(?!(?:{guard})\b)(?=\w)"), old + ".", new + "."))
            # `from app.cli import main` moves; `from app.cli import commands` is a module import.
            rules.append((re.compile(rf"\bfrom {re.escape(old)} import (?!(?:{guard})\b)"), "", new))
            # `import app.models` (or `... as models`) and `setattr(app.models, ...)`: the module itself,
            # now the room's member (a monkeypatch on the package would patch nothing).
            rules.append(
                (re.compile(rf"^(\s*)import {re.escape(old)}(?= as |\s*$)", re.MULTILINE), "=", rf"\1import {new}")
            )
            rules.append((re.compile(rf"(?<=\(){re.escape(old)}(?=,)"), "=", new))
        else:
            rules.append((re.compile(rf"\b{re.escape(old)}\b(?![\w])"), old, new))
        old_path, new_path = old.replace(".", "/") + ".py", new.replace(".", "/") + ".py"
        rules.append((re.compile(rf"(?<![\w/]){re.escape(old_path)}\b"), old_path, new_path))
    return rules


def _on_disk(room: str) -> set[str]:
    """The modules and packages in a room's folder now: modules added to a room after the move (such
    as app/extraction/decide.py) are names inside the package, not attributes of the old module."""
    folder = ROOT.joinpath(*room.split("."))
    if not folder.is_dir():
        return set()
    return {p.stem for p in folder.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()
    }


def rewrite_text(text: str) -> str:
    for pattern, old, new in _rules():
        if old == "":  # the `from app.room import name` form
            text = pattern.sub(lambda m, new=new: f"from {new} import ", text)
        elif old == "=":
            text = pattern.sub(new, text)
        else:
            text = pattern.sub(lambda m, new=new, old=old: new if m.group(0) == old else m.group(0), text)
    return text


def _files() -> list[Path]:
    found = [ROOT / name for name in TOP_FILES if (ROOT / name).is_file()]
    for folder in SEARCHED:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and path.resolve() != SELF:
                found.append(path)
    # Measurements record what was run then: their history keeps the names of the time.
    return [p for p in found if p.name != "RESULTS.md"]


def rewrite_references(dry: bool) -> list[str]:
    changed = []
    for path in _files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite_text(text)
        if new != text:
            changed.append(str(path.relative_to(ROOT)))
            if not dry:
                path.write_text(new, encoding="utf-8")
    return changed


def contract() -> str:
    layers = "\n".join(f'    "{layer}",' for layer in LAYERS)
    return (
        f"{CONTRACT_BEGIN}\n"
        "[[tool.importlinter.contracts]]\n"
        'name = "Rooms inside app: each imports only the rooms below it"\n'
        'type = "layers"\n'
        f"layers = [\n{layers}\n]\n"
        f"{CONTRACT_END}\n"
    )


def write_contract(dry: bool) -> bool:
    path = ROOT / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    block = re.compile(re.escape(CONTRACT_BEGIN) + r".*?" + re.escape(CONTRACT_END) + r"\n", re.DOTALL)
    new = block.sub(contract(), text) if block.search(text) else text.rstrip("\n") + "\n\n" + contract()
    if new != text and not dry:
        path.write_text(new, encoding="utf-8")
    return new != text


def cli_main_module(dry: bool) -> bool:
    """`python -m app.cli` keeps working once app/cli is a package."""
    path = ROOT / "app" / "cli" / "__main__.py"
    if path.exists() or not (ROOT / "app" / "cli").is_dir():
        return False
    if not dry:
        path.write_text(
            '"""`python -m app.cli`: the folio commands without the launcher."""\n\n'
            "import sys\n\nfrom app.cli.commands import main\n\nsys.exit(main())\n",
            encoding="utf-8",
        )
        _git("add", str(path.relative_to(ROOT)))
    return True


def tidy() -> None:
    """Import blocks re-sorted after the renames (ruff's isort), then formatted."""
    ruff = Path(sys.executable).parent / "ruff"
    command = str(ruff) if ruff.exists() else "ruff"
    subprocess.run([command, "check", "--select", "I", "--fix", "--quiet", "."], cwd=ROOT, check=False)
    subprocess.run([command, "format", "--quiet", "."], cwd=ROOT, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is left to do")
    args = parser.parse_args(argv)
    moved = move_files(args.check)
    main_module = cli_main_module(args.check)
    changed = rewrite_references(args.check)
    contract_changed = write_contract(args.check)
    for line in moved:
        print(f"moved {line}")
    for name in changed:
        print(f"rewrote {name}")
    if contract_changed:
        print("wrote the rooms contract into pyproject.toml")
    if args.check:
        return 1 if moved or changed or contract_changed or main_module else 0
    if moved or changed or main_module:
        tidy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
