"""Reading that survives: checkpoints of a long read, and the proof that resuming from one gives the
state an uninterrupted read gives, bit for bit (next-token logits), on the hybrid qwen35 (recurrent
layers) and on the plain-transformer starter model. Then the real thing: kill -9 the engine process
in the middle of a read and show that the next read starts from a checkpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inference.engine import LocalEngine
from inference.engine_api import GenerateRequest
from inference.engine_process import EngineProcess
from inference.events import EngineEvent, Finished, PrefillProgress, PrefixReused
from tests.e2e.test_prefix_cache import Asker, _config, _fresh_logits

pytestmark = pytest.mark.e2e

SMALL_CHUNKS = {"n_batch": 64, "n_ubatch": 64}


def _records(cache: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted(cache.glob("*.json"))]


def _cancelled_read(model: Path, cache: Path, request: GenerateRequest, after: int) -> None:
    """Read the documents alone and cancel once `after` tokens are in: the cancel writes a checkpoint."""
    stop = {"now": False}
    engine = LocalEngine(_config(model, cache, **SMALL_CHUNKS), cancelled=lambda: stop["now"])

    def on_event(event: EngineEvent) -> None:
        if isinstance(event, PrefillProgress) and event.done >= after:
            stop["now"] = True

    try:
        read = GenerateRequest(request.parts, request.sampling, request.prefix_parts, read_only=True)
        assert engine.generate(read, on_event).stop_reason == "cancelled"
    finally:
        engine.close()


@pytest.fixture(params=["hybrid qwen35", "transformer gemma3"])
def model(request: pytest.FixtureRequest) -> Path:
    return request.getfixturevalue("tiny_qwen35" if request.param == "hybrid qwen35" else "starter_gguf")


def test_resuming_from_a_checkpoint_equals_an_uninterrupted_read(model: Path, tmp_path: Path) -> None:
    ask = Asker(model, 14)
    cache = tmp_path / "states"
    question = ask.request("When is item 9 delivered?")
    _cancelled_read(model, cache, question, after=128)
    records = _records(cache)
    assert len(records) == 1 and records[0]["checkpoint"] is True  # what was read is kept
    kept = int(records[0]["tokens"])  # type: ignore[call-overload]
    assert kept >= 128 and kept % 64 == 0

    engine = LocalEngine(_config(model, cache, **SMALL_CHUNKS), cancelled=lambda: False)  # a new context
    try:
        resumed = engine.prompt_logits(question)
        assert engine.last_reuse == (kept, "checkpoint")
        n_prefix = engine.prompt_tokens(question.parts, question.prefix_parts)[1]
        assert n_prefix > kept + 64  # the read really was cut in the middle of the documents
    finally:
        engine.close()
    # The read completed: its snapshot replaced the checkpoint.
    records = _records(cache)
    assert len(records) == 1 and "checkpoint" not in records[0] and records[0]["tokens"] == n_prefix
    assert np.array_equal(resumed, _fresh_logits(model, question, **SMALL_CHUNKS))


def test_a_damaged_checkpoint_is_never_used(tiny_qwen35: Path, tmp_path: Path) -> None:
    ask = Asker(tiny_qwen35, 14)
    cache = tmp_path / "states"
    question = ask.request("Who delivers?")
    _cancelled_read(tiny_qwen35, cache, question, after=128)
    state = next(cache.glob("*.state"))
    data = bytearray(state.read_bytes())
    data[len(data) // 2] ^= 0xFF  # as a write torn by a crash would leave it
    state.write_bytes(bytes(data))
    # A save killed halfway leaves a temp file and no record: never looked at.
    (cache / ".deadbeef.123.tmp").write_bytes(b"\0" * 100)

    engine = LocalEngine(_config(tiny_qwen35, cache, **SMALL_CHUNKS), cancelled=lambda: False)
    try:
        logits = engine.prompt_logits(question)
        assert engine.last_reuse == (0, "")  # read again from the start, not from the bad checkpoint
    finally:
        engine.close()
    assert np.array_equal(logits, _fresh_logits(tiny_qwen35, question, **SMALL_CHUNKS))


def test_kill_9_in_the_middle_of_a_read_resumes_from_a_checkpoint(starter_gguf: Path, tmp_path: Path) -> None:
    ask = Asker(starter_gguf, 90)
    cache = tmp_path / "states"
    question = ask.request("When is item 60 delivered?")
    read = GenerateRequest(question.parts, question.sampling, question.prefix_parts, read_only=True)
    config = _config(starter_gguf, cache, checkpoint_s=0.05, **SMALL_CHUNKS)

    first = EngineProcess()
    total = 0
    try:
        for event in first.generate(config, read):
            if isinstance(event, PrefillProgress):
                total = event.total
                if list(cache.glob("*.json")):  # a checkpoint is committed: pull the plug
                    first.kill()
                    break
            assert not isinstance(event, Finished), "the read finished before the kill"
    finally:
        first.close()
    records = _records(cache)
    assert len(records) == 1 and records[0]["checkpoint"] is True
    kept = int(records[0]["tokens"])  # type: ignore[call-overload]
    assert 0 < kept < total

    second = EngineProcess()
    try:
        events = list(second.generate(config, read))
        reused = next(e for e in events if isinstance(e, PrefixReused))
        done = next(e for e in events if isinstance(e, Finished)).stats
        assert reused.source == "checkpoint" and done.cached_tokens == reused.tokens >= kept
        assert done.stop_reason == "read" and done.prompt_tokens == total
        progress = [e for e in events if isinstance(e, PrefillProgress)]
        assert progress[-1].done == total - done.cached_tokens  # only the rest was read
        logits = second.prompt_logits(config, question)  # the question on top: from the snapshot
    finally:
        second.close()
    records = _records(cache)
    assert len(records) == 1 and "checkpoint" not in records[0]  # checkpoints gone, the snapshot stays
    assert np.array_equal(logits, _fresh_logits(starter_gguf, question, **SMALL_CHUNKS))


# Long enough for several checkpoints: after one, the next comes only after 20x its cost in reading.
LONG_PAGES, LONG = 150, {**SMALL_CHUNKS, "n_ctx": 16384}


def _read_killed_while_saving(model: str, cache: str, moment: str) -> None:
    """Run in a child process: read the documents with a checkpoint at every chunk end the cost cap
    allows, and SIGKILL this process in the middle of writing the second checkpoint."""
    import os
    import signal

    import inference.state_cache as state_cache

    saves = {"n": 0}
    real_save, real_commit = state_cache.StateStore.save, state_cache.atomic_write_bytes

    def save(self: state_cache.StateStore, key: str, n_tokens: int, write: Any, *args: Any, **kw: Any) -> Any:
        saves["n"] += bool(kw.get("checkpoint"))
        if saves["n"] < 2 or not kw.get("checkpoint"):
            return real_save(self, key, n_tokens, write, *args, **kw)

        def torn(tmp: Path) -> int:
            written = int(write(tmp))
            with tmp.open("r+b") as handle:  # llama.cpp was halfway through the file
                handle.truncate(written // 2)
            os.kill(os.getpid(), signal.SIGKILL)
            return written

        if moment == "writing the state":
            return real_save(self, key, n_tokens, torn, *args, **kw)
        # The state file is in place, its record not yet written.
        state_cache.atomic_write_bytes = lambda *_a, **_k: os.kill(os.getpid(), signal.SIGKILL)  # type: ignore[assignment]
        return real_save(self, key, n_tokens, write, *args, **kw)

    state_cache.StateStore.save = save  # type: ignore[method-assign]
    del real_commit
    question = Asker(Path(model), LONG_PAGES).request("When is item 60 delivered?")
    read = GenerateRequest(question.parts, question.sampling, question.prefix_parts, read_only=True)
    engine = LocalEngine(_config(Path(model), Path(cache), checkpoint_s=1e-6, **LONG), cancelled=lambda: False)
    engine.generate(read, lambda _e: None)
    raise SystemExit("the read finished: the kill never came")


@pytest.mark.parametrize("moment", ["writing the state", "before its record"])
def test_kill_9_while_a_checkpoint_is_written_resumes_from_the_one_before(
    tiny_qwen35: Path, tmp_path: Path, moment: str
) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO

    cache = tmp_path / "states"
    code = (
        "from tests.e2e.test_checkpoints import _read_killed_while_saving as r; "
        f"r({str(tiny_qwen35)!r}, {str(cache)!r}, {moment!r})"
    )
    child = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, timeout=600)
    assert child.returncode == -9, child.stderr.decode(errors="replace")[-2000:]
    records = _records(cache)
    assert len(records) == 1 and records[0]["checkpoint"] is True  # the first checkpoint, committed
    kept = int(records[0]["tokens"])  # type: ignore[call-overload]
    assert len(list(cache.glob("*.state"))) == (1 if moment == "writing the state" else 2)

    question = Asker(tiny_qwen35, LONG_PAGES).request("When is item 60 delivered?")
    engine = LocalEngine(_config(tiny_qwen35, cache, **LONG), cancelled=lambda: False)
    try:
        logits = engine.prompt_logits(question)
        assert engine.last_reuse == (kept, "checkpoint")  # the torn one is never used
    finally:
        engine.close()
    assert np.array_equal(logits, _fresh_logits(tiny_qwen35, question, **LONG))
