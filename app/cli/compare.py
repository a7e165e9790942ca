"""`folio compare OLD NEW`: the redline of two versions of a document, as Markdown."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    cmp.add_argument("--out", "-o", metavar="FILE.md", help="write the redline to FILE.md instead of printing it")
    cmp.add_argument("--force", action="store_true", help="replace FILE.md if it exists")
    return {"compare": cmd_compare}


def cmd_compare(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.compare.markdown import summary, to_markdown
    from app.compare.redline import compare
    from app.compare.versions import open_version
    from app.export import FileExists, format_of, write_new

    out = Path(args.out).expanduser() if args.out else None
    if out is not None:
        format_of(out, ("md",))
        if out.exists() and not args.force:
            raise FileExists(f"{out} already exists; choose another name or replace it (--force)")
    redline = compare(open_version(ctx, args.old), open_version(ctx, args.new))
    text = to_markdown(redline)
    if out is None:
        print(text, end="")
        return 0
    write_new(out, text.encode("utf-8"), overwrite=args.force)
    print(f"wrote {out}: {summary(redline)}")
    return 0
