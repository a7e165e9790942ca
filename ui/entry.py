"""The `folio` launcher: `folio gui` (or no command) opens the window, anything else is the CLI.

It lives in ui/ because it may start the window; it imports PySide6 only for the window, so the
command line stays fast and works where Qt is missing.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    import multiprocessing

    multiprocessing.freeze_support()  # the engine child process in a frozen (PyInstaller) build
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--self-test":
        from ui.self_test import main as self_test_main

        return self_test_main(args[1:])
    if not args or args[0] == "gui":
        if args[1:2] in (["-h"], ["--help"]):
            from app.cli.commands import parse_args

            parse_args(args)
        from ui.main import main as gui_main

        return gui_main(args[1:])
    from app.cli.commands import parse_args, run

    return run(parse_args(args))


if __name__ == "__main__":
    raise SystemExit(main())
