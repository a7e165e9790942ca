"""`folio compare OLD NEW`: the redline of two versions of a document, as Markdown; with --summary, the
model's cited summary of the material changes first.

The summary is asked for, not the default: the redline takes a second and is the same every time, a
summary takes the model minutes on a laptop and is worded anew each time, and a script that diffs two
drafts should not start a model by surprise."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.compare.redline import Redline
    from app.compare.summary import Summary
    from app.context import AppContext

Handler = Callable[["AppContext", argparse.Namespace], int]


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> dict[str, Handler]:
    cmp = sub.add_parser(
        "compare",
        help="redline two versions of a document",
        description="Compare two versions of a document clause by clause and print every change as Markdown, "
        "with its page in both versions ([old p. 3] [new p. 4]). A file not in the library is read for the "
        "comparison only. Headers, footers, page numbers and line-end hyphenation are not changes.",
    )
    cmp.add_argument("old", metavar="OLD", help="the earlier version: document id or path")
    cmp.add_argument("new", metavar="NEW", help="the later version: document id or path")
    cmp.add_argument(
        "--out",
        "-o",
        metavar="FILE",
        help="write the redline to FILE instead of printing it: .md (Markdown), .pdf, or .docx (the new version "
        "with every change as a tracked change, for Word or LibreOffice)",
    )
    cmp.add_argument("--force", action="store_true", help="replace FILE if it exists")
    cmp.add_argument(
        "--summary",
        action="store_true",
        help="before the redline, the model's summary of the material changes, citing both versions and checked "
        "sentence by sentence; every change it does not mention is listed under 'Other changes' "
        "(both versions must be in the library: folio add)",
    )
    return {"compare": cmd_compare}


def cmd_compare(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.compare.markdown import summary, to_markdown
    from app.compare.redline import compare
    from app.compare.versions import open_version
    from app.export import REDLINE_FORMATS, Exporter, FileExists, format_of

    out = Path(args.out).expanduser() if args.out else None
    fmt = format_of(out, REDLINE_FORMATS) if out is not None else "md"
    if out is not None and out.exists() and not args.force:
        raise FileExists(f"{out} already exists; choose another name or replace it (--force)")
    ids = [_library_id(ctx, ref) for ref in (args.old, args.new)] if args.summary else []
    redline = compare(open_version(ctx, args.old), open_version(ctx, args.new))
    written = _summarise(ctx, redline, ids[0], ids[1]) if args.summary and redline.changes else None
    if out is None:
        print(to_markdown(redline, written), end="")
        return 0
    result = Exporter(ctx).redline(redline, out, fmt=fmt, written=written, overwrite=args.force)
    print(f"wrote {result.path}: {summary(redline)} (sha256 {result.sha256})")
    return 0


def _library_id(ctx: AppContext, ref: str) -> int:
    from app.errors import FolioError, NotFound

    try:
        return ctx.library.resolve(ref).id
    except NotFound:
        raise FolioError(
            f"{ref}: --summary checks the model's sentences against stored pages; add both versions first "
            "(folio add FILE)"
        ) from None


def _summarise(ctx: AppContext, redline: Redline, old_id: int, new_id: int) -> Summary:
    """The summary, its progress on stderr (reading progress on a terminal only)."""
    import sys

    from app.cli.lines import Lines, ProgressLines
    from app.compare.summary import summarise
    from app.engine.session import Session
    from app.models.registry import STARTER_NOTICE

    lines = Lines()
    on_progress = ProgressLines(lines)
    session = Session.for_context(ctx)
    try:
        written = summarise(ctx, session, redline, old_id, new_id, on_progress=on_progress)
    except KeyboardInterrupt:
        session.cancel()
        raise
    finally:
        lines.close()
        session.close()
    if written.demo:
        print(f"note: {STARTER_NOTICE}", file=sys.stderr)
    return written
