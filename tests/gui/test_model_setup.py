"""The model setup page: tiers for this computer, models found in other tools' stores, files from a USB
stick, the planner's choice, and the first-run offer. Real files, real registry, real engine process."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui


@pytest.fixture
def home_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user home, so discovery never looks at this machine's own model stores."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME", "OLLAMA_MODELS"):
        monkeypatch.delenv(name, raising=False)
    return home


def _open(qtbot, ctx, home: Path):  # type: ignore[no-untyped-def]
    from app.models.discovery import default_stores
    from ui.model_setup import ModelSetupDialog

    dialog = ModelSetupDialog(ctx, stores=default_stores(home=home, environ={}))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
    return dialog


def test_the_page_explains_the_files_and_the_tiers_of_this_computer(qtbot, starter_home: Path, home_dir: Path) -> None:  # type: ignore[no-untyped-def]
    from app.context import open_app
    from inference.planner import QWEN35_TIERS

    ctx = open_app()
    try:
        dialog = _open(qtbot, ctx, home_dir)
        texts = " ".join(label.text() for label in dialog.findChildren(type(dialog.machine_label)))
        assert "Qwen3.5-9B" in texts and "Q4_K_M" in texts and "mmproj" in texts and "USB stick" in texts
        assert dialog.machine is not None and dialog.machine_label.text().startswith("This computer:")
        table = dialog.tier_table
        assert [table.item(r, 0).text() for r in range(table.rowCount())] == [t.name for t in QWEN35_TIERS]
        if dialog.machine.recommended:
            row = [t.name for t in QWEN35_TIERS].index(dialog.machine.recommended)
            assert table.item(row, 0).font().bold()
            assert dialog.recommend_label.text().startswith(f"Recommended here: {dialog.machine.recommended}")
        # Nothing set up yet: the demo model answers, and the page says so.
        plan = dialog.plan_label.text()
        assert "Demo model" in plan and "The planner chose: context" in plan and "Predicted memory" in plan
        assert "None found" in dialog.found_label.text() and not dialog.found_list.isVisible()
        assert dialog.status_label.text().startswith("Active model: ")
    finally:
        ctx.close()


def test_a_model_found_in_the_hugging_face_cache_is_used_where_it_is(  # type: ignore[no-untyped-def]
    qtbot, starter_home: Path, home_dir: Path, tiny_qwen35: Path, tmp_path: Path
) -> None:
    from app.context import open_app
    from app.settings import load_settings
    from tests.fixtures.model_stores import hf_cached_model, lmstudio_model, write_meta_gguf
    from tests.fixtures.tiny_qwen35 import write_clip_header

    source = tmp_path / "tiny.gguf"
    shutil.copy(tiny_qwen35, source)
    hf_cached_model(
        home_dir / ".cache" / "huggingface" / "hub",
        "folio-tests/tiny-qwen35-GGUF",
        {"tiny-qwen35-F32.gguf": source, "mmproj-F16.gguf": write_clip_header(tmp_path / "mm.gguf")},
    )
    lmstudio_model(
        home_dir / ".lmstudio" / "models",
        "ollama-export",
        "qwen3.5-9b",
        {"model.gguf": write_meta_gguf(tmp_path / "v.gguf", vision_tensors=True)},
    )
    ctx = open_app()
    try:
        dialog = _open(qtbot, ctx, home_dir)
        assert dialog.found_list.count() == 2 and "Found 2 models (1 usable Qwen3.5)" in dialog.found_label.text()
        usable, unusable = (dialog.found_list.item(i) for i in range(2))
        assert usable.text().startswith("folio-tests/tiny-qwen35-GGUF — Qwen3.5 ALL_F32, ")
        assert "with vision file" in usable.text() and "Hugging Face cache" in usable.text()
        assert "llama.cpp cannot load it" in unusable.text() and not unusable.flags() & usable.flags().ItemIsEnabled
        assert not dialog.use_found_button.isEnabled()
        usable.setSelected(True)
        with qtbot.waitSignal(dialog.model_changed, timeout=120000):
            dialog.use_found_button.click()
            assert not dialog.close_button.isEnabled()
            dialog.reject()  # refused while the model file is being read
            assert dialog.isVisible() and "still reading" in dialog.status_label.text()
        qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
        record = ctx.models.active(ctx.settings)
        assert record.architecture == "qwen35" and Path(record.path).parent.name == "blobs"
        assert record.mmproj_path is not None and Path(record.mmproj_path).parent.name == "blobs"
        assert load_settings(ctx.paths.settings_file).active_model == record.sha256  # saved
        plan = dialog.plan_label.text()
        assert "tiny-qwen35" in plan and "Vision file: " in plan and "Demo model" not in plan
        assert "Longest document on this computer: about 262,144 tokens" in plan
        assert not list(ctx.paths.models_dir.rglob("tiny*.gguf"))  # used in place, not copied
        dialog.close_button.click()
        assert not dialog.isVisible()
    finally:
        ctx.close()


def test_files_from_a_usb_stick_with_the_vision_file_filled_in(  # type: ignore[no-untyped-def]
    qtbot, starter_home: Path, home_dir: Path, tiny_qwen35: Path, tmp_path: Path
) -> None:
    from app.context import open_app
    from tests.fixtures.tiny_qwen35 import write_clip_header

    stick = tmp_path / "media" / "USB"
    stick.mkdir(parents=True)
    model = stick / "Qwen3.5-tiny-F32.gguf"
    shutil.copy(tiny_qwen35, model)
    projector = write_clip_header(stick / "mmproj-Qwen3.5-tiny-F16.gguf")
    notes = stick / "notes.gguf"
    notes.write_text("not a model")
    ctx = open_app()
    try:
        dialog = _open(qtbot, ctx, home_dir)
        dialog.add_button.click()
        assert dialog.status_label.text() == "Choose the model file first (a .gguf file)"
        dialog.model_edit.setText(str(stick / "missing.gguf"))
        dialog.add_button.click()
        assert dialog.status_label.text() == f"{stick / 'missing.gguf'}: no such file"
        dialog.model_edit.setText(str(notes))
        dialog.add_button.click()
        qtbot.waitUntil(lambda: not dialog.busy, timeout=60000)
        assert dialog.status_label.text() == "notes.gguf: not a GGUF model file"
        assert ctx.settings.active_model == ""

        dialog.model_edit.clear()
        dialog.set_model_file(str(model))
        assert dialog.mmproj_edit.text() == str(projector)
        with qtbot.waitSignal(dialog.model_changed, timeout=120000):
            dialog.add_button.click()
        qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
        record = ctx.models.active(ctx.settings)
        assert record.path == str(model) and record.mmproj_path == str(projector)
        assert "mmproj-Qwen3.5-tiny-F16.gguf" in dialog.plan_label.text()
    finally:
        ctx.close()


def test_first_run_offers_the_page_once_and_the_status_bar_follows(  # type: ignore[no-untyped-def]
    qtbot, window, home_dir: Path, tiny_qwen35: Path
) -> None:
    from ui.model_setup import ModelSetupDialog

    assert window.setup_menu.actions["model_setup"].text() == "&Model setup…"
    dialog = window.setup_menu.offer_model_setup()
    assert isinstance(dialog, ModelSetupDialog) and dialog.isVisible() and dialog.parent() is window
    qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
    assert window.demo_badge.isVisible()
    # The page measured this computer with the window's own engine process: never a second one.
    assert dialog.worker._session is window.session and window.session.engine.pid is not None
    assert dialog.machine is not None
    dialog.model_edit.setText(str(tiny_qwen35))
    with qtbot.waitSignal(dialog.model_changed, timeout=120000):
        dialog.add_button.click()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
    assert not window.demo_badge.isVisible() and "tiny-qwen35" in window.model_label.text()
    dialog.close()
    assert window.setup_menu.offer_model_setup() is None  # shown once; Tools > Model setup… opens it again


def test_the_demo_model_is_installed_from_a_usb_stick(  # type: ignore[no-untyped-def]
    qtbot, ctx, home_dir: Path, starter_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As after the installers, which leave the starter model out: nothing to answer with until the user
    brings the starter file (or a model); the page says so and installs it, sha256-checked."""
    from PySide6.QtWidgets import QFileDialog

    import app.engine.setup as model_setup
    import app.models.registry as models
    from app.models.registry import starter_file_name

    monkeypatch.setattr(models, "packaged_starter_available", lambda: False)
    monkeypatch.setattr(model_setup, "packaged_starter_available", lambda: False)
    monkeypatch.delenv("FOLIO_STARTER_GGUF", raising=False)
    picked: list[str] = []

    def pick(_parent: object, caption: str, *_args: object) -> tuple[str, str]:
        picked.append(caption)
        return str(starter_gguf), ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", pick)
    dialog = _open(qtbot, ctx, home_dir)
    assert "The demo model is not installed" in dialog.starter_label.text()
    assert dialog.status_label.text().startswith("The starter model is not installed: add it with")
    assert dialog.plan_label.text().startswith("No model to plan for yet: the starter model is not installed")
    dialog.starter_button.click()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
    assert picked == [f"Choose {starter_file_name()}"]
    installed = ctx.paths.models_dir / "starter" / starter_file_name()
    assert installed.is_file() and installed.stat().st_size == starter_gguf.stat().st_size
    assert not dialog.starter_button.isVisibleTo(dialog) and "demo model" in dialog.starter_label.text()
    assert dialog.plan_label.text().startswith("Demo model: fine for trying Folio")
