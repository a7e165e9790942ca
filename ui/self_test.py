"""`folio --self-test`: the core self-test (app.cli.self_test) plus a headless check that the window builds.

The window part proves the installed Qt libraries, plugins and every ui module load; it runs on
Qt's offscreen platform unless QT_QPA_PLATFORM says otherwise, so no display is needed.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="folio --self-test",
        description="Check this installation in a temporary folder: read a generated PDF, run the starter "
        "model for a few tokens, build the window offscreen. Prints one line; exit code 0 means it works.",
    )
    p.add_argument(
        "--model",
        type=Path,
        metavar="PATH.gguf",
        help="the starter model file (gemma-3-270m-q4_k_m.gguf); default: $FOLIO_STARTER_GGUF, "
        "beside the app, or the pip package in a source checkout",
    )
    p.add_argument("--tokens", type=int, default=8, help="answer length to generate (default 8)")
    p.add_argument("--no-window", action="store_true", help="skip the window check")
    p.add_argument("--timeout", type=float, default=900, help="give up after this many seconds (default 900)")
    p.add_argument("--verbose", action="store_true", help="print each step on stderr")
    return p


def check_window() -> str:
    from PySide6.QtWidgets import QApplication

    from app.cli.self_test import temporary_home
    from app.context import open_app
    from ui.app_icon import app_icon
    from ui.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0]])
    with temporary_home():
        ctx = open_app()
        try:
            window = MainWindow(ctx)
            window.show()
            app.processEvents()
            image = window.grab().toImage()
            window.close()
            app.processEvents()
        finally:
            ctx.close()
    if image.isNull() or image.width() < 100:
        raise RuntimeError("the window rendered nothing")
    if app_icon().isNull():  # drawn by Qt's SVG module: proves the bundle carries it
        raise RuntimeError("the app icon could not be drawn (Qt SVG support missing)")
    return f"{QApplication.platformName()} {image.width()}x{image.height()}"


def _give_up(seconds: float) -> None:
    print(f"folio: self-test failed: no result after {seconds:.0f} s", file=sys.stderr, flush=True)
    os._exit(3)


def main(argv: Sequence[str]) -> int:
    from app.cli.self_test import run_self_test
    from app.errors import USER_ERRORS, one_line

    args = _parser().parse_args(list(argv))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # A hung engine or a modal dialog must not hang an unattended check (CI, support scripts).
    watchdog = threading.Timer(args.timeout, _give_up, [args.timeout])
    watchdog.daemon = True
    watchdog.start()

    def progress(message: str) -> None:
        if args.verbose:
            print(f"... {message}", file=sys.stderr, flush=True)

    # A broken installation shows up as a missing library or file, or a Qt failure: one line each.
    failures: tuple[type[Exception], ...] = (*USER_ERRORS, RuntimeError, OSError, ImportError)
    try:
        result = run_self_test(args.model, max_tokens=args.tokens, progress=progress)
        if args.no_window:
            window = "skipped"
        else:
            progress("building the window offscreen")
            window = check_window()
    except failures as exc:
        print(f"folio: self-test failed: {one_line(exc)}", file=sys.stderr)
        return 1
    finally:
        watchdog.cancel()
    print(f"{result.summary()}; window {window}", flush=True)
    return 0
