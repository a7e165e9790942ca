"""`folio check DOC...`: defined terms, cross-references and key dates, without a model.

Prints each document's problems first (what a lawyer has to look at), then the key dates with how
each was computed, then counts; --all lists every defined term and reference too, --json prints the
whole result. A file not in the library is added first, as `folio extract` does: results are stored
and audited against the document's sha256.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.checks.report import CheckReport
    from app.context import AppContext

Handler = Callable[["AppContext", argparse.Namespace], int]


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> dict[str, Handler]:
    check = sub.add_parser(
        "check",
        help="check defined terms, cross-references and key dates (no model)",
        description="Check documents without a model: defined terms (never used, defined twice, other "
        "capitalisation, typos, terms used but never defined), cross-references (clauses, items and attachments "
        "that are not there, headings that differ), and key dates (expiry, renewals, the last day to give notice "
        "of non-renewal, each with how it was computed). Results are stored and audited; a check runs again "
        "when the document, Folio's rules or the extraction table's values changed.",
    )
    check.add_argument("documents", nargs="+", metavar="DOC", help="document id(s) or path(s); files are added first")
    check.add_argument("--json", action="store_true", help="print every finding as JSON")
    check.add_argument("--all", action="store_true", help="list every defined term and reference, not only problems")
    check.add_argument("--refresh", action="store_true", help="run the checks again even if a stored result holds")
    check.add_argument(
        "--calendar",
        metavar="FILE",
        help="write the key dates to FILE: .ics (a calendar with an alarm before each notice deadline) or .csv",
    )
    check.add_argument("--out", "-o", metavar="FILE", help="write every finding to FILE (.json or .csv)")
    check.add_argument("--alarm-days", type=int, default=14, metavar="N", help="alarm N days before a notice deadline")
    check.add_argument("--force", action="store_true", help="replace --calendar / --out files that exist")
    return {"check": cmd_check}


def cmd_check(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.checks.service import Checker
    from app.errors import FolioError

    if args.alarm_days < 0:
        raise FolioError("--alarm-days is 0 or more")
    ids = [document_id_of(ctx, ref) for ref in args.documents]
    checker = Checker(ctx)
    reports = [checker.check(i, refresh=args.refresh) for i in dict.fromkeys(ids)]
    if args.json:
        print(json.dumps({"documents": [r.to_dict() for r in reports]}, indent=2, ensure_ascii=False))
    else:
        for report in reports:
            print_report(report, everything=args.all)
    _export(ctx, ids, args)
    return 0


def document_id_of(ctx: AppContext, ref: str) -> int:
    from app.errors import NotFound

    try:
        return ctx.library.resolve(ref).id
    except NotFound:
        path = Path(ref).expanduser()
        if not path.is_file():
            raise
    result = ctx.library.add(path, limits=ctx.limits)
    if result.created:
        print(f"added #{result.document.id} {result.document.title}", file=sys.stderr)
    return result.document.id


def _export(ctx: AppContext, ids: list[int], args: argparse.Namespace) -> None:
    from app.export import Exporter

    exporter = Exporter(ctx)
    for target, what in ((args.calendar, "key dates"), (args.out, "checks")):
        if target:
            result = exporter.checks(ids, Path(target).expanduser(), overwrite=args.force, what=what,
                                     alarm_days=args.alarm_days)  # fmt: skip
            print(f"wrote {result.path} ({result.fmt}, {result.size_bytes:,} bytes, sha256 {result.sha256})",
                  file=sys.stderr)  # fmt: skip


def print_report(report: CheckReport, *, everything: bool = False) -> None:
    from app.checks.report import DATES, INPUT, NOTE, REFERENCES, TERMS

    print(f"# {report.title} (#{report.document_id}, sha256 {report.sha256[:12]}…)")
    when = f"checked {report.created_at}" if report.created_at else "checked now"
    print(f"{when} by rules {report.rules}; key-date inputs from the {report.inputs_from}")
    problems = report.problems
    print(f"\n{len(problems)} problem{'s' if len(problems) != 1 else ''}" + (":" if problems else "."))
    for f in problems:
        print(f"  ✗ {f.cited or '-':>8}  {f.shown_status}: {f.note}")
    dates = report.key_dates()
    print("\nKey dates:" if dates else "\nKey dates: none computed.")
    for f in dates:
        print(f"  {f.value}  {f.text} — {f.how}" + (f" [{f.cited}]" if f.cited else ""))
    for f in report.section(DATES):
        if f.kind == INPUT:
            shown = f.note if f.status == "ok" else f"{f.status}: {f.note}"
            where = f" [{f.cited}, {f.how}]" if f.cited else f" [{f.how}]" if f.status == "ok" else ""
            print(f"    {f.text}: {shown}{where}")
        elif f.kind == NOTE:
            print(f"    note: {f.note}")
    if everything:
        print("\nDefined terms:")
        for f in report.section(TERMS):
            if not f.problem:
                print(f"  {f.cited or '-':>8}  {f.text}: {f.note}")
        print("\nCross-references:")
        for f in report.section(REFERENCES):
            mark = "✗" if f.problem else ("✓" if f.status == "resolved" else "○")
            print(f"  {mark} {f.cited or '-':>8}  {f.text} → {f.note}")
    counts = report.to_dict()["counts"]
    print(f"\n{counts.get('terms', 0)} defined terms, {counts.get('references', 0)} cross-references, "
          f"{len(dates)} key dates; {report.elapsed_ms:.0f} ms\n")  # fmt: skip
