"""Run by tests/gui/test_scaling.py in a fresh process (Qt reads QT_SCALE_FACTOR once, at start).

Builds the main window, the settings dialog and the model setup page on the screen the environment
describes, each at the size it picks for itself, and prints as JSON every place where text does not
fit its widget, every control that is not wholly on the screen, and every horizontal scroll bar.
With --document, that file is added and selected first (a long real file name), and the extraction
table and the Compare view of it and a second version of it are checked too.
Usage: python scaling_probe.py [--font-scale F] [--document FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QProgressBar,
    QScrollBar,
    QSpinBox,
    QSplitterHandle,
    QTableView,
    QWidget,
)

# What a user reads or works: it must be wholly on the screen.
CONTROLS = (QAbstractButton, QLineEdit, QAbstractSpinBox, QComboBox, QAbstractScrollArea, QProgressBar, QLabel)


def _visible_on_top(widget: QWidget, top: QWidget) -> bool:
    return widget.isVisibleTo(top) and widget.width() > 0 and widget.height() > 0


def _name(w: QWidget) -> str:
    text = w.text() if isinstance(w, (QLabel, QAbstractButton, QLineEdit)) else ""
    return f"{type(w).__name__}({w.objectName() or text!s:.40})"


def clipped(top: QWidget) -> list[str]:
    """Text widgets narrower or lower than their text needs (a label cut in the middle on purpose
    must show a text that fits)."""
    from ui.elided_label import ElidedLabel

    problems = []
    for w in top.findChildren(QWidget):
        if not _visible_on_top(w, top) or w.objectName().startswith("qt_"):
            continue  # hidden, or Qt's own parts of a compound widget (a spin box's line edit)
        name = _name(w)
        if isinstance(w, ElidedLabel):
            shown = w.fontMetrics().horizontalAdvance(w.shown_text())
            if shown > w.contentsRect().width() + 1:
                problems.append(f"{name}: {w.width()} wide but shows {shown} px of text")
        elif isinstance(w, QLabel):
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
            if w.minimumWidth():  # a compact button (ui.sizing.compact): its minimum is its text's width
                hint.setWidth(w.minimumWidth())
            if hint.width() > w.width() + 1 or hint.height() > w.height() + 1:
                problems.append(f"{name}: {w.width()}x{w.height()} but needs at least {hint.width()}x{hint.height()}")
    return problems


def _scrolled(w: QWidget, top: QWidget) -> bool:
    """Inside a scroll area's contents (reached by scrolling, not meant to be all in view at once)."""
    parent = w.parentWidget()
    while parent is not None and parent is not top:
        outer = parent.parentWidget()
        if isinstance(outer, QAbstractScrollArea) and parent is outer.viewport():
            return True
        parent = outer
    return False


def off_screen(top: QWidget, screen: QRect) -> list[str]:
    """Controls not wholly on the screen, or cut off by the panel that holds them; horizontal scroll
    bars (a table of many fields may scroll sideways; nothing else may)."""
    problems = []
    frame = top.frameGeometry()
    if not screen.contains(frame):
        problems.append(f"{type(top).__name__} at {frame.getRect()} is not inside the screen {screen.getRect()}")
    for w in top.findChildren(QWidget):
        if not _visible_on_top(w, top) or w.objectName().startswith("qt_") or _scrolled(w, top):
            continue
        if isinstance(w, QScrollBar) and w.orientation().name == "Horizontal":
            area = w.parentWidget().parentWidget() if w.parentWidget() is not None else None
            if not isinstance(area, QTableView):
                problems.append(f"{_name(area or w)} needs a horizontal scroll bar")
            continue
        if not isinstance(w, CONTROLS) or isinstance(w, (QScrollBar, QSplitterHandle)):
            continue
        whole = QRect(w.mapToGlobal(QPoint(0, 0)), w.size())
        if not screen.contains(whole):
            problems.append(f"{_name(w)} at {whole.getRect()} is not inside the screen {screen.getRect()}")
            continue
        seen = QRect(w.mapTo(top, QPoint(0, 0)), w.size())
        parent = w.parentWidget()
        while parent is not None and parent is not top:
            seen = seen.intersected(QRect(parent.mapTo(top, QPoint(0, 0)), parent.size()))
            parent = parent.parentWidget()
        if seen.size() != w.size():
            problems.append(f"{_name(w)}: {w.width()}x{w.height()}, only {seen.width()}x{seen.height()} in view")
    return problems


def too_big(top: QWidget, screen: QRect) -> list[str]:
    minimum = top.minimumSizeHint().expandedTo(top.minimumSize())
    if minimum.width() > screen.width() or minimum.height() > screen.height():
        size = f"{minimum.width()}x{minimum.height()}"
        return [f"{type(top).__name__} needs at least {size} but the screen has {screen.width()}x{screen.height()}"]
    return []


def settle(app: QApplication, seconds: float = 0.3, until: object = None) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        if until is not None and until():  # type: ignore[operator]
            return
        time.sleep(0.02)


def check(top: QWidget, app: QApplication) -> list[str]:
    screen = app.primaryScreen().availableGeometry()
    return too_big(top, screen) + off_screen(top, screen) + clipped(top)


def second_version(path: Path, folder: Path) -> Path:
    """The same contract with one number changed, named as a revised copy (for the Compare view)."""
    from tests.fixtures.contract_versions import pdf_blocks, rewrite_blocks, writable

    target = folder / f"{path.stem} (revised){path.suffix}"
    blocks = pdf_blocks(path)
    index = next(k for k, b in enumerate(blocks) if any(c.isdigit() for c in b.text) and writable(b.lines))
    changed = "".join("7" if c.isdigit() else c for c in blocks[index].lines)
    rewrite_blocks(path, target, {index: changed})
    return target


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--font-scale", type=float, default=1.0)
    parser.add_argument("--document", type=Path)
    args = parser.parse_args()
    app = QApplication([sys.argv[0]])
    if args.font_scale != 1.0:
        font = app.font()
        font.setPointSizeF(font.pointSizeF() * args.font_scale)
        app.setFont(font)

    from app.context import open_app
    from ui.app_setup import prepare_app
    from ui.main_window import MainWindow
    from ui.model_setup import ModelSetupDialog
    from ui.settings_dialog import SettingsDialog

    ctx = open_app()
    prepare_app(app, ctx.paths.cache_dir)
    screen = app.primaryScreen()
    report: dict[str, object] = {
        "dpr": screen.devicePixelRatio(),
        "screen": [screen.availableGeometry().width(), screen.availableGeometry().height()],
        "font_pt": app.font().pointSizeF(),
    }
    doc = ctx.library.add(args.document).document if args.document else None
    window = MainWindow(ctx)
    window.show()
    settle(app)
    if doc is not None:
        window.library.select(doc.id)
        settle(app, 60, until=lambda: window.viewer.last is not None)
        settle(app, 0.5)  # the refit after the first page
        report["title"] = window.viewer.title.text()
        report["title_shown"] = window.viewer.title.shown_text()
        report["panels"] = [not window.left.isHidden(), not window.viewer.isHidden(), not window.chat.isHidden()]
    report["main window"] = check(window, app)

    tops: list[tuple[str, QWidget]] = [
        ("settings", SettingsDialog(ctx, window)),
        ("model setup", ModelSetupDialog(ctx, window)),
    ]
    if doc is not None:
        tops += _document_windows(ctx, window, doc.id, Path(args.document))
    for name, top in tops:
        top.show()
        settle(app)
        if isinstance(top, ModelSetupDialog):
            settle(app, 120, until=lambda top=top: not top.busy)
            report["setup_busy"] = top.busy
        settle(app)
        report[name] = check(top, app)
        top.close()
    window.close()
    settle(app)
    ctx.close()
    print(json.dumps(report))
    return 0


def _document_windows(ctx, window, doc_id: int, path: Path) -> list[tuple[str, QWidget]]:  # type: ignore[no-untyped-def]
    """The extraction table (sample answers, grounded for real), the playbook review of those answers and the
    Compare view of the document and a revised copy of it."""
    from app.compare.redline import compare
    from app.compare.versions import version_from_library
    from tests.fixtures.answers import store_sample_cells, store_sample_review
    from ui.compare_view import CompareView

    folder = Path(tempfile.mkdtemp(prefix="folio-probe-"))
    try:
        new = ctx.library.add(second_version(path, folder)).document
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    window.refresh_library(select=doc_id)
    run = store_sample_cells(ctx, doc_id)
    table = window.work_menu.show_table(run)
    review = window.work_menu.show_reviews(store_sample_review(ctx, doc_id, run))
    old = ctx.library.get(doc_id)
    view = CompareView(ctx, old.title, new.title, window)
    view.show_redline(compare(version_from_library(ctx, doc_id), version_from_library(ctx, new.id)))
    return [("extraction table", table.window()), ("playbook review", review), ("compare", view)]


if __name__ == "__main__":
    raise SystemExit(main())
