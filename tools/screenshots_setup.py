"""Screenshots of model setup, settings, dark mode, 150% scaling and the error dialog, of the real
window under Xvfb (make screenshots runs this beside tools/screenshots.py).

It uses a throw-away FOLIO_HOME and a throw-away user folder in which Ollama, LM Studio and the
Hugging Face cache hold models exactly as those tools lay them out (small GGUF files written by the
gguf package). `--scale 1.5` re-runs itself at 150% for the scaled shots.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
OUT = REPO / "docs" / "screenshots"
CORPUS = REPO.parent / "shared" / "corpus"
CONTRACT = "contracts_tune/LEGACYTECHNOLOGYHOLDINGS,INC_12_09_2005-EX-10.2-DISTRIBUTOR AGREEMENT.PDF"


def fake_stores(home: Path) -> None:
    from inference.planner import QWEN35_TIERS
    from tests.fixtures.model_stores import (
        hf_cached_model,
        lmstudio_model,
        ollama_model,
        write_meta_gguf,
        write_projector,
    )

    work = home / "tmp"
    size = {t.name: t.q4_k_m_bytes for t in QWEN35_TIERS}  # sparse files as large as the real ones
    ollama_model(
        home / ".ollama" / "models",
        "qwen3.5",
        "9b",
        write_meta_gguf(work / "a.gguf", name="Qwen3.5 9B", pad_to=size["Qwen3.5-9B"]),
        write_projector(work / "b.gguf"),
    )
    lmstudio_model(
        home / ".lmstudio" / "models",
        "lmstudio-community",
        "Qwen3.5-4B-GGUF",
        {"Qwen3.5-4B-Q4_K_M.gguf": write_meta_gguf(work / "c.gguf", tier="4B", pad_to=size["Qwen3.5-4B"])},
    )
    llama = write_meta_gguf(work / "d.gguf", architecture="llama", tier="2B", pad_to=2_019_377_696)
    hf_cached_model(
        home / ".cache" / "huggingface" / "hub",
        "bartowski/Llama-3.2-3B-Instruct-GGUF",
        {"Llama-3.2-3B-Instruct-Q4_K_M.gguf": llama},
    )
    ollama_model(
        home / ".ollama" / "models",
        "gemma3",
        "12b",
        write_meta_gguf(work / "e.gguf", architecture="gemma3", vision_tensors=True, pad_to=8_149_190_624),
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    if args.scale != 1.0 and os.environ.get("QT_SCALE_FACTOR") != str(args.scale):
        env = {**os.environ, "QT_SCALE_FACTOR": str(args.scale)}
        return subprocess.call([sys.executable, __file__, "--scale", str(args.scale)], env=env)

    root = Path(tempfile.mkdtemp(prefix="folio-shot-setup-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)  # a copy of the starter model: 250 MB
    os.environ["FOLIO_HOME"] = str(root / "folio")
    (root / "folio" / "config").mkdir(parents=True)
    (root / "folio" / "config" / "settings.toml").write_text("schema_version = 1\n")
    home = root / "home"
    fake_stores(home)

    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox, QScrollArea, QWidget

    from app.context import open_app
    from app.models.discovery import default_stores
    from ui.app_setup import prepare_app
    from ui.main_window import MainWindow
    from ui.model_setup import ModelSetupDialog
    from ui.settings_dialog import SettingsDialog
    from ui.theme import apply_scheme

    app = QApplication(sys.argv)
    ctx = open_app()
    prepare_app(app, ctx.paths.cache_dir)
    window = MainWindow(ctx)  # the size it picks for the screen (make screenshots: 1366x768)
    window.show()
    OUT.mkdir(parents=True, exist_ok=True)
    suffix = "" if args.scale == 1.0 else f"-{round(args.scale * 100)}"

    def save(widget: QWidget, name: str) -> None:
        path = OUT / f"{name}{suffix}.png"
        screen = app.primaryScreen()
        geometry = widget.frameGeometry()
        screen.grabWindow(0, geometry.x(), geometry.y(), geometry.width(), geometry.height()).save(str(path))
        print(f"saved {path}")

    steps: list[Callable[[], bool]] = []  # each returns False to be asked again a little later

    def run_steps() -> None:
        if not steps:
            window.close()
            return
        if steps[0]():
            steps.pop(0)
        QTimer.singleShot(300, run_steps)

    state: dict[str, object] = {}

    def open_setup() -> bool:
        dialog = ModelSetupDialog(ctx, window, stores=default_stores(home=home, environ={}))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.move(window.geometry().topLeft())
        dialog.open()
        state["setup"] = dialog
        return True

    def shoot_setup() -> bool:
        dialog = state["setup"]
        assert isinstance(dialog, ModelSetupDialog)
        if dialog.busy:
            return False
        dialog.found_list.item(0).setSelected(True)
        app.processEvents()
        save(dialog, "model-setup")
        return True

    def shoot_setup_plan() -> bool:
        dialog = state["setup"]
        assert isinstance(dialog, ModelSetupDialog)
        scroll = dialog.findChild(QScrollArea)
        scroll.verticalScrollBar().setValue(scroll.verticalScrollBar().maximum())
        app.processEvents()
        save(dialog, "model-setup-plan")
        dialog.close()
        return True

    def open_settings(name: str) -> Callable[[], bool]:
        def step() -> bool:
            dialog = SettingsDialog(ctx, window)
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.move(window.geometry().topLeft())
            dialog.open()
            state["settings"] = dialog
            state["settings_name"] = name
            return True

        return step

    def shoot_settings() -> bool:
        dialog = state["settings"]
        assert isinstance(dialog, SettingsDialog)
        save(dialog, str(state["settings_name"]))
        dialog.close()
        return True

    def add_contract() -> bool:
        window.add_paths([str(CORPUS / CONTRACT)])  # a real CUAD contract, under its own long name
        return True

    def go_dark() -> bool:
        if window.library.model.rowCount() == 0:
            return False
        window.library.select(window.library.model.document_at(0))
        apply_scheme(app, Qt.ColorScheme.Dark)
        return True

    def shoot_window_dark() -> bool:
        if window.viewer.last is None:  # the page is still being drawn
            return False
        save(window, "main-window-dark")
        return True

    def error_dialog() -> bool:
        def close_box() -> None:
            for w in QApplication.topLevelWidgets():
                if isinstance(w, QMessageBox) and w.isVisible():
                    w.move(window.geometry().topLeft() + window.rect().center() / 2)
                    app.processEvents()
                    save(w, "error-dialog")
                    w.button(QMessageBox.StandardButton.Close).click()
                    return
            QTimer.singleShot(200, close_box)

        def broken() -> None:
            raise KeyError("citation")  # a bug in a handler, as the global hook meets it

        QTimer.singleShot(500, close_box)
        QTimer.singleShot(0, broken)
        return True

    if args.scale == 1.0:
        steps += [open_setup, shoot_setup, shoot_setup_plan, open_settings("settings"), shoot_settings]
        steps += [add_contract, go_dark, shoot_window_dark]
        steps += [open_settings("settings-dark"), shoot_settings, error_dialog, lambda: True, lambda: True]
    else:
        steps += [open_setup, shoot_setup, shoot_setup_plan, open_settings("settings"), shoot_settings]
    QTimer.singleShot(500, run_steps)
    code = app.exec()
    ctx.close()
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main())
