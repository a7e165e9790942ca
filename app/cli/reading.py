"""`folio read DOC...`: read documents into the local model now, so that questions start at once."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.context import AppContext
    from app.engine.progress import Progress

Handler = Callable[["AppContext", argparse.Namespace], int]


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> dict[str, Handler]:
    read = sub.add_parser(
        "read",
        help="read documents into the model now, so questions start at once",
        description="Read each document into the active local model and keep what was read on disk, with "
        "progress and time left on stderr. A read that stopped (Ctrl+C, a quit, a crash) continues where it "
        "stopped: Ctrl+C keeps what was read. `folio list` shows each document's reading state.",
    )
    read.add_argument("documents", nargs="+", metavar="DOC", help="document id(s) or path(s)")
    return {"read": cmd_read}


def cmd_read(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.engine.session import Session
    from app.errors import FolioError
    from app.reading import read_document, reading_states

    docs = [ctx.library.resolve(ref) for ref in args.documents]
    session = Session.for_context(ctx)
    stopping = {"asked": False}

    def on_interrupt(_signum: int, _frame: Any) -> None:
        if stopping["asked"]:
            raise KeyboardInterrupt  # a second Ctrl+C: stop now, whatever is lost
        stopping["asked"] = True
        print("\n... stopping: keeping what was read (Ctrl+C again to stop at once)", file=sys.stderr)
        session.cancel()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        for doc in docs:
            line = _ProgressLine(doc.title, sys.stderr.isatty())
            stats = read_document(ctx, session, doc.id, line.show)
            line.end()
            if stats.stop_reason == "cancelled" or stopping["asked"]:
                print(f"{doc.title}: stopped; `folio read {doc.id}` continues where it stopped", file=sys.stderr)
                return 130
            read_now, seconds = stats.prompt_tokens - stats.cached_tokens, stats.prefill_ms / 1000
            states = reading_states(ctx, [doc.sha256])
            if states is not None and states[0].kind != "ready":
                # Read, but the state could not be kept (a full disk under the cache, no room allowed
                # for snapshots): say so rather than promise questions that start at once.
                raise FolioError(
                    f"{doc.title}: read, but what was read could not be kept on disk (is the disk holding "
                    f"{ctx.paths.state_cache_dir} full, or state_cache_gb 0?); questions will read it again"
                )
            print(
                f"{doc.id}  {doc.title}: ready — questions start at once "
                f"({read_now:,} tokens read in {seconds:.1f} s, {stats.cached_tokens:,} kept from before)"
            )
    finally:
        signal.signal(signal.SIGINT, previous)
        session.close()
    return 0


class _ProgressLine:
    """One line on stderr, rewritten in place on a terminal; a line per tenth of the read otherwise."""

    def __init__(self, title: str, tty: bool) -> None:
        self.title, self.tty = title, tty
        self.last_tenth = -1
        self.open = False

    def show(self, progress: Progress) -> None:
        if not progress.reading:
            print(f"... {progress.text}", file=sys.stderr)
            return
        done, total = progress.done, progress.total
        percent = 100 * done // total if total else 100
        eta = f"about {progress.eta_s / 60:.0f} min left" if progress.eta_s >= 90 else f"{progress.eta_s:.0f} s left"
        text = f"reading {self.title}: {percent}% ({done:,}/{total:,} tokens), {eta}"
        if self.tty:
            print(f"\r{text} ", end="", file=sys.stderr, flush=True)
            self.open = True
        elif percent // 10 != self.last_tenth:
            self.last_tenth = percent // 10
            print(text, file=sys.stderr, flush=True)

    def end(self) -> None:
        if self.open:
            print(file=sys.stderr)
            self.open = False
