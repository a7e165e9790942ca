"""Engine faults the user can run into, end to end: damaged or foreign model files and a projector that
does not fit reach llama.cpp and come back as one clear line, the engine process survives them; an
engine killed mid-answer is reported by the CLI and by the window, and the next question works.

(The GGUF facts reader's own refusals are in tests/unit/test_gguf_facts.py; this file covers what
happens when such a file gets past it - registered earlier, damaged later - and hits llama.cpp.)
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from inference.chat_format import Message, render, template_for
from inference.engine import EngineConfig, GenerateRequest, Sampling
from inference.engine_process import EngineProcess
from inference.errors import ModelFileError
from inference.events import Finished
from inference.gguf_facts import read_facts
from tests.conftest import REPO, run_folio
from tests.fixtures.tiny_qwen35 import write_gguf_header
from tests.fixtures.tiny_vision import write_tiny_mmproj

pytestmark = pytest.mark.e2e

STORY = "Write a long story about a lighthouse keeper and the sea."


def _request(max_tokens: int) -> GenerateRequest:
    parts = render(template_for("gemma3", None), [Message("user", STORY)], enable_thinking=False)
    return GenerateRequest(parts, Sampling(max_tokens=max_tokens))


def _bad_files(folder: Path, good: Path) -> dict[str, Path]:
    """Each bad file, keyed by the reason llama.cpp's refusal must give."""
    data = good.read_bytes()
    files = {
        "the file is truncated or damaged": folder / "truncated.gguf",
        "the file is damaged": folder / "garbage.gguf",
        "its architecture 'future-arch-9000' is unknown": write_gguf_header(folder / "future.gguf", "future-arch-9000"),
        "it is not a GGUF model file": folder / "notes.gguf",
    }
    files["the file is truncated or damaged"].write_bytes(data[: len(data) // 3])
    files["the file is damaged"].write_bytes(b"GGUF\x03\x00\x00\x00" + os.urandom(64 * 1024))
    files["it is not a GGUF model file"].write_text("These are meeting notes, not a model.")
    return files


def test_damaged_and_foreign_model_files_fail_in_one_line_and_the_engine_lives_on(
    tmp_path: Path, tiny_qwen35: Path, starter_gguf: Path
) -> None:
    engine = EngineProcess()
    try:
        for reason, path in _bad_files(tmp_path, tiny_qwen35).items():
            with pytest.raises(ModelFileError) as llama:
                list(engine.load(EngineConfig(str(path), n_ctx=512, n_threads=1)))
            message = str(llama.value)
            assert message.startswith(f"llama.cpp could not load {path.name}: {reason}"), message
            assert "\n" not in message
            with pytest.raises(ModelFileError) as facts:  # `folio models add` refuses it before llama.cpp
                read_facts(path)
            assert "\n" not in str(facts.value), reason
        pid = engine.pid
        events = list(engine.generate(EngineConfig(str(starter_gguf), n_ctx=1024, n_threads=2), _request(4)))
        assert isinstance(events[-1], Finished) and events[-1].stats.completion_tokens > 0
        assert engine.pid == pid  # the same engine process: the bad files never crashed it
    finally:
        engine.close()


def test_a_projector_that_does_not_fit_fails_in_one_line_and_the_engine_lives_on(
    tmp_path: Path, starter_gguf: Path
) -> None:
    mmproj = write_tiny_mmproj(tmp_path / "mmproj-other-model.gguf")  # 64-wide; Gemma 3 270M is 640-wide
    engine = EngineProcess()
    try:
        with pytest.raises(ModelFileError, match="vision projector") as info:
            list(engine.load(EngineConfig(str(starter_gguf), n_ctx=1024, n_threads=2, mmproj_path=str(mmproj))))
        assert "\n" not in str(info.value)
        events = list(engine.generate(EngineConfig(str(starter_gguf), n_ctx=1024, n_threads=2), _request(4)))
        assert isinstance(events[-1], Finished)
    finally:
        engine.close()


def test_a_registered_model_damaged_later_gives_one_line_and_another_model_still_answers(
    starter_home: Path, contract_pdf: Path, tiny_qwen35: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "qwen.gguf"
    copy.write_bytes(tiny_qwen35.read_bytes())
    for args in (("add", str(contract_pdf)), ("models", "add", str(copy))):
        code, _out, err = run_folio(*args)
        assert code == 0, err
    copy.write_bytes(copy.read_bytes()[:4096])  # a copy cut short, a USB stick pulled mid-copy
    code, out, err = run_folio("ask", str(contract_pdf), "Which law governs?")
    assert code == 1 and out == ""
    assert err == "folio: error: llama.cpp could not load qwen.gguf: the file is truncated or damaged\n", err
    code, _out, err = run_folio("models", "use", "starter")
    assert code == 0, err
    code, out, err = run_folio("ask", str(contract_pdf), "Which law governs?", "--max-tokens", "4")
    assert code == 0 and out.strip(), err


def _engine_child(parent: int, timeout: float = 120) -> psutil.Process:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in psutil.Process(parent).children(recursive=True):
            try:
                if "spawn_main" in " ".join(child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.05)
    raise AssertionError("no engine process appeared")


def test_cli_reports_an_engine_killed_mid_answer_and_the_next_question_works(
    starter_home: Path, contract_pdf: Path
) -> None:
    code, _out, err = run_folio("add", str(contract_pdf))
    assert code == 0, err
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "ask", str(contract_pdf), STORY, "--max-tokens", "2000"],
        cwd=REPO,
        env=os.environ.copy(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        engine = _engine_child(proc.pid)
        assert proc.stdout is not None
        first = proc.stdout.read(1)  # the answer is streaming: the engine is mid-answer
        assert first, proc.stderr.read() if proc.stderr else ""
        engine.send_signal(signal.SIGKILL)  # as the kernel's out-of-memory killer would
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 1
    errors = [line for line in err.splitlines() if line.startswith("folio: error:")]
    assert len(errors) == 1 and "model engine stopped unexpectedly (killed by SIGKILL" in errors[0], err
    assert "None" not in errors[0] and "Traceback" not in err
    db = sqlite3.connect(starter_home / "data" / "folio.sqlite3")
    try:
        status, error, conv = db.execute(
            "SELECT status, error, conversation_id FROM messages WHERE role = 'assistant'"
        ).fetchone()
    finally:
        db.close()
    assert status == "error" and "stopped unexpectedly" in error
    code, out, err = run_folio("ask", "--conversation", str(conv), "Who are the parties?", "--max-tokens", "4")
    assert code == 0 and out.strip(), err
