"""Start the desktop app."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    from app.cli.x11_libraries import startup_problem

    # Qt aborts without naming the library when its X11 plugin cannot load: say which, and how to get it.
    problem = startup_problem(list(argv or []))
    if problem is not None:
        print(f"folio: error: {problem}", file=sys.stderr)
        return 1
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.context import open_app
    from app.errors import USER_ERRORS, one_line
    from app.paths import default_paths
    from ui.app_setup import prepare_app
    from ui.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0], *(argv or [])])
    app.setApplicationName("Folio")
    app.setOrganizationName("Folio")
    prepare_app(app, default_paths().cache_dir)  # icon, light/dark, the global error reporter
    try:
        ctx = open_app()
    except USER_ERRORS as exc:
        QMessageBox.critical(None, "Folio cannot start", one_line(exc))
        return 1
    window = MainWindow(ctx)
    window.show()
    window.setup_menu.offer_model_setup()  # first run without a Qwen3.5 model: the setup page
    # Files passed on the command line (the installers' "Open with Folio") are added like a drop.
    files = [a for a in (argv or []) if not a.startswith("-") and Path(a).is_file()]
    if files:
        window.add_paths(files, interactive=False)
    _close_on_sigterm(app, window)
    code = app.exec()
    ctx.close()
    return int(code)


def _close_on_sigterm(app: object, window: object) -> None:
    """A session manager ends the window with SIGTERM at logout or shutdown: close it as the user
    would (a background read stops with a checkpoint, the workers and child processes end) instead of
    dying mid-write. Qt's event loop runs C++ code; a timer lets Python run the handler within 0.25 s."""
    import signal

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    assert isinstance(app, QApplication) and isinstance(window, QMainWindow)

    def stop(_signum: int, _frame: object) -> None:
        window.close()
        app.quit()

    signal.signal(signal.SIGTERM, stop)
    timer = QTimer(app)
    timer.timeout.connect(lambda: None)
    timer.start(250)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
