"""`folio matter new|list|use|show|rename|close|purge|export|import`: the matters a library's work is kept in.

The current matter (`folio matter use`) is kept in settings.toml; `folio add`, `list` and `search` work
in it unless `--matter NAME` says otherwise, and without one in "Unfiled". Creating, renaming and
destroying a matter are recorded in the audit log; destroying one (`purge`) writes what went.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.clock import today_iso

if TYPE_CHECKING:
    from app.context import AppContext

Handler = Callable[["AppContext", argparse.Namespace], int]


def add_matter_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--matter", metavar="NAME", help="work in this matter (default: the one `folio matter use` chose, or Unfiled)"
    )


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> dict[str, Handler]:
    matter = sub.add_parser(
        "matter",
        help="keep work per client matter",
        description="Matters hold documents (one copy each, however many matters hold it), conversations and "
        "extraction tables. Commands work in the current matter (`folio matter use`), else in Unfiled.",
    )
    msub = matter.add_subparsers(dest="matter_command", metavar="ACTION", required=True)
    new = msub.add_parser("new", help="open a new matter", description="Open a new matter.")
    new.add_argument("name", metavar="NAME")
    new.add_argument("--number", default="", help="the client/matter number")
    new.add_argument("--description", default="", help="a line about the matter")
    new.add_argument("--retain-until", metavar="YYYY-MM-DD", help="the date after which it is due for destruction")
    new.add_argument("--use", action="store_true", help="make it the current matter")
    listing = msub.add_parser("list", help="list matters", description="List matters with their documents.")
    listing.add_argument("--due", action="store_true", help="only matters past their retention date")
    listing.add_argument("--json", action="store_true", help="machine-readable output (JSON on stdout)")
    use = msub.add_parser("use", help="choose the current matter", description="Choose the current matter.")
    use.add_argument("name", metavar="NAME")
    show = msub.add_parser("show", help="show a matter", description="Show a matter and its documents.")
    show.add_argument("name", metavar="NAME", nargs="?", help="default: the current matter")
    show.add_argument("--json", action="store_true", help="machine-readable output (JSON on stdout)")
    rename = msub.add_parser("rename", help="rename a matter", description="Rename a matter.")
    rename.add_argument("name", metavar="NAME")
    rename.add_argument("new_name", metavar="NEW_NAME")
    close = msub.add_parser(
        "close", help="mark a matter closed", description="Mark a matter closed (its work stays; nothing is deleted)."
    )
    close.add_argument("name", metavar="NAME")
    close.add_argument("--reopen", action="store_true", help="mark it open again")
    purge = msub.add_parser(
        "purge",
        help="destroy a matter for good",
        description="Destroy a matter: its documents that no other matter holds, with everything derived from "
        "them (text, search index, page images, snapshots), and its conversations and extraction tables. A "
        "destruction record (names, sha256s, counts, when, by whom) goes into the audit log.",
    )
    purge.add_argument("name", metavar="NAME")
    purge.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    export = msub.add_parser(
        "export",
        help="write a matter to one archive",
        description="Write a matter to one zip archive: its original files, stored text and page images, "
        "contract checks and redaction logs, conversations with verdicts, extraction tables with reviews and "
        "playbook reviews, and its audit entries, each listed with its sha256 in the archive's manifest. "
        "Model snapshots are not included (they are rebuilt).",
    )
    export.add_argument("name", metavar="NAME")
    export.add_argument("--out", required=True, metavar="FILE", help="the archive to write (.zip)")
    export.add_argument("--force", action="store_true", help="replace FILE if it exists")
    imp = msub.add_parser(
        "import",
        help="read a matter from an archive",
        description="Read a matter exported by `folio matter export`. Every entry is checked against the "
        "manifest before anything is written; a damaged or changed archive is refused. Files already in the "
        "library are reused.",
    )
    imp.add_argument("file", metavar="FILE")
    imp.add_argument(
        "--as",
        dest="as_name",
        metavar="NAME",
        help="the matter's name in this library (when a matter of the archive's name is already here)",
    )
    return {"matter": cmd_matter}


def cmd_matter(ctx: AppContext, args: argparse.Namespace) -> int:
    handlers: dict[str, Handler] = {
        "new": _new,
        "list": _list,
        "use": _use,
        "show": _show,
        "rename": _rename,
        "close": _close,
        "purge": _purge,
        "export": _export,
        "import": _import,
    }
    return handlers[args.matter_command](ctx, args)


def _new(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.store.matters import open_matter

    matter = open_matter(
        ctx.audit,
        ctx.settings,
        args.name,
        number=args.number,
        description=args.description,
        retain_until=args.retain_until,  # checked by the store, in the words the window uses too
    )
    if args.use:
        ctx.make_current(matter)
    print(f"matter opened: {matter.name}" + (" (current)" if args.use else ""))
    return 0


def _current_name(ctx: AppContext) -> str:
    from app.store.matters import UNFILED

    return ctx.settings.matter or UNFILED


def _list(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.store.matters import Matters

    matters = Matters(ctx.db)
    today = today_iso()
    shown = [m for m in matters.all() if m.due(today)] if args.due else matters.all()
    counts = {m.id: matters.counts(m.id) for m in shown}
    current = _current_name(ctx).casefold()
    if args.json:
        rows = [{**dataclasses.asdict(m), **dataclasses.asdict(counts[m.id]), "due": m.due(today)} for m in shown]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not shown:
        print("No matter is past its retention date." if args.due else "No matters yet: folio matter new NAME")
        return 0
    print(f"  {'NAME':<28}  {'NUMBER':<12}  {'DOCS':>5}  {'OPENED':<10}  {'RETAIN UNTIL':<12}  NOTE")
    for m in shown:
        mark = "*" if m.name.casefold() == current else " "
        notes = [n for n, on in (("due for destruction", m.due(today)), ("closed", m.closed)) if on]
        print(
            f"{mark} {m.name:<28}  {m.number:<12}  {counts[m.id].documents:>5}  {m.opened_at[:10]:<10}  "
            f"{m.retain_until or '-':<12}  {', '.join(notes)}".rstrip()
        )
    return 0


def _use(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.store.matters import Matters

    matter = Matters(ctx.db).get(args.name)
    ctx.make_current(matter)
    print(f"current matter: {matter.name}")
    return 0


def _show(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.store.matters import Matters

    matters = Matters(ctx.db)
    matter = matters.get(args.name or _current_name(ctx)) if args.name or ctx.settings.matter else matters.unfiled()
    counts = matters.counts(matter.id)
    docs = ctx.library.all(matter_id=matter.id)
    if args.json:
        body = {
            **dataclasses.asdict(matter),
            **dataclasses.asdict(counts),
            "due": matter.due(today_iso()),
            "document_list": [{"id": d.id, "title": d.title, "sha256": d.sha256} for d in docs],
        }
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    print(f"matter:        {matter.name}" + ("  (closed)" if matter.closed else ""))
    if matter.number:
        print(f"number:        {matter.number}")
    if matter.description:
        print(f"description:   {matter.description}")
    print(f"opened:        {matter.opened_at}")
    due = "  (past: due for destruction)" if matter.due(today_iso()) else ""
    print(f"retain until:  {matter.retain_until or '-'}{due}")
    print(
        f"holds:         {counts.documents} document(s), {counts.conversations} conversation(s), "
        f"{counts.extraction_runs} extraction table(s)"
    )
    for d in docs:
        print(f"  #{d.id:<5} {d.title}")
    return 0


def _rename(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.store.matters import Matters, change_matter

    old = Matters(ctx.db).get(args.name)
    new = change_matter(
        ctx.audit, ctx.settings, old, name=args.new_name, number=old.number, retain_until=old.retain_until
    )
    ctx.matter_renamed(old, new)
    print(f"matter renamed: {old.name} -> {new.name}")
    return 0


def _close(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.store.matters import Matters, close_matter

    matter = close_matter(ctx.audit, ctx.settings, Matters(ctx.db).get(args.name), closed=not args.reopen)
    print(f"matter {'reopened' if args.reopen else 'closed'}: {matter.name}")
    return 0


def _purge(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.purge import purge_matter
    from app.store.matters import Matters

    matters = Matters(ctx.db)
    matter = matters.get(args.name)
    what = matters.contents(matter.id).words(matter.name)
    if not args.yes:
        if not sys.stdin.isatty():
            print(f"folio: error: purge destroys {what} for good; add --yes to confirm", file=sys.stderr)
            return 2
        answer = input(f"Destroy {what} for good? Type the matter's name to confirm: ")
        if answer.strip().casefold() != matter.name.casefold():
            print("nothing removed")
            return 1
    result = purge_matter(ctx, matter.name)
    ctx.matter_destroyed(matter)
    print(
        f"destroyed: matter {matter.name!r} ({len(result.removed)} document(s), {result.conversations} "
        f"conversation(s), {result.extraction_runs} extraction table(s), {result.blobs} image file(s), "
        f"{result.snapshots} snapshot(s); {len(result.kept)} document(s) kept for other matters); "
        "recorded in the audit log"
    )
    return 0


def _export(ctx: AppContext, args: argparse.Namespace) -> int:
    from pathlib import Path

    from app.store.archive import export_matter
    from app.store.audit import audited_settings
    from app.store.matters import Matters

    matter = Matters(ctx.db).get(args.name)
    out = Path(args.out).expanduser()
    summary = export_matter(ctx.library, ctx.audit, audited_settings(ctx.settings), matter, out, overwrite=args.force)
    print(
        f"exported: matter {matter.name!r} to {out} ({summary.documents} document(s), {summary.conversations} "
        f"conversation(s), {summary.extraction_runs} extraction table(s), {summary.playbook_reviews} playbook "
        f"review(s), {summary.files} file(s)); "
        f"sha256 {summary.sha256}"
    )
    return 0


def _import(ctx: AppContext, args: argparse.Namespace) -> int:
    from pathlib import Path

    from app.store.archive import import_matter
    from app.store.audit import audited_settings

    summary = import_matter(
        ctx.library, ctx.audit, audited_settings(ctx.settings), Path(args.file).expanduser(), args.as_name
    )
    print(
        f"imported: matter {summary.matter!r} ({summary.documents} document(s) stored, {summary.documents_reused} "
        f"already in the library, {summary.conversations} conversation(s), {summary.extraction_runs} extraction "
        f"table(s), {summary.playbook_reviews} playbook review(s)); every checksum matched"
    )
    return 0
