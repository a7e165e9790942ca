"""Installing the starter model from a file (the installers do not contain it), sha256-checked."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from app.errors import FolioError
from tests.conftest import run_folio

STARTER_NAME = "gemma-3-270m-q4_k_m.gguf"


@pytest.fixture
def starter_file(shared_models_dir: Path) -> Path:
    return shared_models_dir / "starter" / STARTER_NAME


def _leftovers(models_dir: Path) -> list[str]:
    folder = models_dir / "starter"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_install_copies_and_registers_the_starter(ctx, starter_file: Path) -> None:  # type: ignore[no-untyped-def]
    record = ctx.models.install_starter(starter_file)
    installed = Path(record.path)
    assert installed == ctx.paths.models_dir / "starter" / STARTER_NAME
    assert installed.stat().st_size == starter_file.stat().st_size
    assert record.is_starter and record.architecture == "gemma3"
    assert ctx.models.starter().id == record.id  # what the app uses until another model is chosen
    assert _leftovers(ctx.paths.models_dir) == [STARTER_NAME]  # no temp file left behind


def test_a_wrong_file_is_refused_and_nothing_is_left(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    fake = tmp_path / STARTER_NAME
    fake.write_bytes(b"GGUF" + os.urandom(1 << 20))
    with pytest.raises(FolioError, match="is not the Folio starter model"):
        ctx.models.install_starter(fake)
    assert _leftovers(ctx.paths.models_dir) == []
    assert ctx.models.all() == []
    with pytest.raises(FolioError, match="no such file"):
        ctx.models.install_starter(tmp_path / "missing.gguf")


def test_without_pip_chunks_the_starter_comes_from_a_file_or_a_clear_error(
    ctx,  # type: ignore[no-untyped-def]
    starter_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import app.models.registry

    # What the installers look like: the model chunks are not there.
    monkeypatch.setattr(app.models.registry, "packaged_starter_available", lambda: False)
    monkeypatch.delenv("FOLIO_STARTER_GGUF", raising=False)
    with pytest.raises(FolioError, match=re.escape("folio models add-starter gemma-3-270m-q4_k_m.gguf")):
        ctx.models.starter()
    monkeypatch.setenv("FOLIO_STARTER_GGUF", str(starter_file))
    record = ctx.models.starter()
    assert Path(record.path).parent == ctx.paths.models_dir / "starter"
    assert record.sha256 == app.models.registry.starter_sha256()


def test_cli_add_starter_prints_the_checked_sha256(starter_file: Path) -> None:
    from app.models.registry import starter_sha256

    code, out, err = run_folio("models", "add-starter", str(starter_file))
    assert code == 0, err
    assert f"sha256 {starter_sha256()} (checked)" in out
    code, out, _ = run_folio("models", "list")
    assert "demo model" in out


def test_cli_add_starter_rejects_another_file_in_one_line(tmp_path: Path) -> None:
    other = tmp_path / "other.gguf"
    other.write_bytes(b"not a model")
    code, _, err = run_folio("models", "add-starter", str(other))
    assert code == 1
    assert err.strip().count("\n") == 0 and "is not the Folio starter model" in err
