"""`folio --self-test` from source: the same code the bundle test runs frozen (tests/slow)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.e2e


def test_self_test_prints_one_line_and_leaves_no_trace(shared_models_dir: Path, tmp_path: Path) -> None:
    starter = shared_models_dir / "starter" / "gemma-3-270m-q4_k_m.gguf"
    user_home = tmp_path / "user-folio-home"  # the self-test must not touch the user's FOLIO_HOME
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "FOLIO_HOME": str(user_home), "TMPDIR": str(scratch), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [sys.executable, "-m", "ui.entry", "--self-test", "--model", str(starter), "--tokens", "3"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("folio self-test ok: version ")
    assert "ingested a 2-page PDF" in lines[0] and "on CPU answered" in lines[0]
    assert "OCR (rapidocr) read a scanned page" in lines[0]
    assert re.search(r"; window offscreen \d{3,}x\d{3,}$", lines[0])
    assert not user_home.exists()
    assert not list(scratch.glob("folio-self-test-*"))


def test_self_test_failure_is_one_line_with_exit_code_1(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ui.entry", "--self-test", "--model", str(tmp_path / "nope.gguf"), "--no-window"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [f"folio: self-test failed: {tmp_path / 'nope.gguf'}: no such file"]


def test_self_test_finds_the_starter_the_user_installed(starter_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As on an installed Mac after `folio models add-starter`: no pip chunks, no --model."""
    import app.models.registry
    from app.cli.self_test import run_self_test

    monkeypatch.setattr(app.models.registry, "packaged_starter_available", lambda: False)
    monkeypatch.delenv("FOLIO_STARTER_GGUF", raising=False)
    result = run_self_test(None, max_tokens=2)
    assert result.pages == 2 and 1 <= result.answer_tokens <= 2
    assert "CPU" in result.backends
    assert os.environ["FOLIO_HOME"] == str(starter_home)  # restored after the temporary home
    assert not (starter_home / "data").exists()  # the user's library was never opened
