"""Run by tests/gui/test_scaling.py in a fresh process (Qt reads QT_SCALE_FACTOR once, at start).

Builds the main window, the settings dialog and the model setup page on the screen the environment
describes, fits each on it as a window manager would, and prints as JSON every place where text
does not fit its widget, and every window that cannot fit on the screen at all.
Usage: python scaling_probe.py [font-scale]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)


def _visible_on_top(widget: QWidget, top: QWidget) -> bool:
    return widget.isVisibleTo(top) and widget.width() > 0 and widget.height() > 0


def clipped(top: QWidget) -> list[str]:
    """Text widgets narrower or lower than their text needs."""
    problems = []
    for w in top.findChildren(QWidget):
        if not _visible_on_top(w, top) or w.objectName().startswith("qt_"):
            continue  # hidden, or Qt's own parts of a compound widget (a spin box's line edit)
        name = f"{type(w).__name__}({w.objectName() or getattr(w, 'text', lambda: '')()!s:.40})"
        if isinstance(w, QLabel):
            if not w.text() or (w.pixmap() is not None and not w.pixmap().isNull()):
                continue
            if w.wordWrap():
                need_h = w.heightForWidth(w.width())
                if need_h > w.height() + 1:
                    problems.append(f"{name}: {w.width()}x{w.height()} but its text needs height {need_h}")
            else:
                hint = w.sizeHint()
                if hint.width() > w.width() + 1 or hint.height() > w.height() + 1:
                    need = f"{hint.width()}x{hint.height()}"
                    problems.append(f"{name}: {w.width()}x{w.height()} but its text needs {need}")
        elif isinstance(w, (QAbstractButton, QComboBox, QLineEdit, QSpinBox, QGroupBox)):
            hint = w.minimumSizeHint()
            if hint.width() > w.width() + 1 or hint.height() > w.height() + 1:
                problems.append(f"{name}: {w.width()}x{w.height()} but needs at least {hint.width()}x{hint.height()}")
    return problems


def fit_on_screen(top: QWidget, app: QApplication) -> list[str]:
    screen = app.primaryScreen().availableGeometry()
    minimum = top.minimumSizeHint().expandedTo(top.minimumSize())
    problems = []
    if minimum.width() > screen.width() or minimum.height() > screen.height():
        problems.append(
            f"{type(top).__name__} needs at least {minimum.width()}x{minimum.height()} "
            f"but the screen has {screen.width()}x{screen.height()}"
        )
    size = top.size().boundedTo(screen.size()).expandedTo(minimum)
    top.resize(size)
    return problems


def settle(app: QApplication, seconds: float = 0.3, until: object = None) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        if until is not None and until():  # type: ignore[operator]
            return
        time.sleep(0.02)


def main() -> int:
    font_scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    app = QApplication([sys.argv[0]])
    if font_scale != 1.0:
        font = app.font()
        font.setPointSizeF(font.pointSizeF() * font_scale)
        app.setFont(font)

    from app.context import open_app
    from ui.app_setup import prepare_app
    from ui.main_window import MainWindow
    from ui.model_setup import ModelSetupDialog
    from ui.settings_dialog import SettingsDialog

    ctx = open_app()
    prepare_app(app, ctx.paths.cache_dir)
    report: dict[str, object] = {
        "dpr": app.primaryScreen().devicePixelRatio(),
        "screen": [app.primaryScreen().availableGeometry().width(), app.primaryScreen().availableGeometry().height()],
        "font_pt": app.font().pointSizeF(),
    }
    window = MainWindow(ctx)
    settings = SettingsDialog(ctx, window)
    setup = ModelSetupDialog(ctx, window)
    for name, top in (("main window", window), ("settings", settings), ("model setup", setup)):
        top.show()
        settle(app)
        if top is setup:
            settle(app, 120, until=lambda: not setup.busy)
            report["setup_busy"] = setup.busy
        problems = fit_on_screen(top, app)
        settle(app)
        report[name] = problems + clipped(top)
    setup.close()
    settings.close()
    window.close()
    settle(app)
    ctx.close()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
