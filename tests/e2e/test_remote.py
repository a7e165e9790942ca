"""Scale-out against a REAL OpenAI-compatible server on loopback: llama-cpp-python's server extra
serving the starter model (and, for images, the tiny qwen35 + qwen3vl_merger pair through mtmd).
Also: with no server URL configured, asking opens no network socket at all.
"""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from inference.chat_format import Message
from inference.engine import GenerateRequest, Sampling
from inference.errors import EngineError
from inference.events import EngineEvent, Finished, Scored, TokenText
from inference.prompt import PromptDocument, SourceBlock, build_messages
from inference.remote import RemoteConfig, RemoteEngine
from tests.conftest import run_folio
from tests.fixtures.tiny_vision import png_image, write_tiny_mmproj, write_tiny_qwen35

pytestmark = pytest.mark.e2e
pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python's server extra is not installed (dev extra)")

ALIAS = "folio-test"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama_server(model: str, log: Path, *extra: str) -> Iterator[str]:
    port = _free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", model, "--model_alias", ALIAS,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2", "--verbose", "False",
        *extra,
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 240  # shared CI machines can be slow to import FastAPI and load
        while True:
            try:
                with urllib.request.urlopen(url + "/v1/models", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"the test server did not start:\n{log.read_text()[-2000:]}") from None
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture(scope="module")
def starter_server(shared_models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    model = str(next((shared_models_dir / "starter").glob("*.gguf")))
    with llama_server(model, tmp_path_factory.mktemp("server") / "log.txt", "--chat_format", "gemma") as url:
        yield url


def _request(question: str = "Write a long story about a lighthouse.", max_tokens: int = 12) -> GenerateRequest:
    messages = (Message("user", question),)
    return GenerateRequest([], Sampling(temperature=0.8, max_tokens=max_tokens), 0, messages, False)


def test_streams_an_answer_from_a_real_server(starter_server: str) -> None:
    engine = RemoteEngine(RemoteConfig(starter_server))
    events = list(engine.generate(None, _request()))
    assert engine.model_id == ALIAS
    texts = [e.text for e in events if isinstance(e, TokenText)]
    stats = next(e for e in events if isinstance(e, Finished)).stats
    assert "".join(texts).strip()
    assert stats.stop_reason in ("eos", "length") and 0 < stats.completion_tokens <= 12
    assert stats.prefill_ms > 0 and stats.generate_ms >= 0


def test_cancel_stops_a_real_stream_and_the_server_stays_usable(starter_server: str) -> None:
    engine = RemoteEngine(RemoteConfig(starter_server))
    seen: list[EngineEvent] = []
    ended: list[float] = []

    def consume() -> None:
        seen.extend(engine.generate(None, _request(max_tokens=1500)))
        ended.append(time.perf_counter())

    thread = threading.Thread(target=consume)
    thread.start()
    deadline = time.time() + 120
    while not any(isinstance(e, TokenText) for e in seen) and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    asked = time.perf_counter()
    engine.cancel()
    thread.join(10)
    assert ended and ended[0] - asked < 0.5
    finished = seen[-1]
    assert isinstance(finished, Finished) and finished.stats.stop_reason == "cancelled"
    again = list(engine.generate(None, _request(max_tokens=4)))
    assert isinstance(again[-1], Finished) and again[-1].stats.stop_reason in ("eos", "length")


YES_NO = (("Yes", "yes"), ("No", "no"))


def test_choices_are_scored_from_a_real_servers_logprobs(starter_server: str) -> None:
    engine = RemoteEngine(RemoteConfig(starter_server))
    question = "Yes or no?"  # the starter answers it with one of the two
    scored = GenerateRequest([], Sampling(0.0, 1.0, 1, 0.0, 0.0, 4), 0, (Message("user", question),),
                             choices=YES_NO)  # fmt: skip
    events = list(engine.generate(None, scored))
    (score,) = [e for e in events if isinstance(e, Scored)]
    assert score.source == "logprobs" and len(score.logprobs) == 2
    assert all(lp <= 0 for lp in score.logprobs)
    assert isinstance(events[-1], Finished) and events[-1].stats.stop_reason == "scored"
    greedy = GenerateRequest([], Sampling(0.0, 1.0, 1, 0.0, 0.0, 2), 0, (Message("user", question),))
    said = "".join(e.text for e in engine.generate(None, greedy) if isinstance(e, TokenText)).strip().lower()
    # The greedy answer's first word is the choice with the higher probability.
    if said.startswith("yes"):
        assert score.logprobs[0] > score.logprobs[1]
    elif said.startswith("no"):
        assert score.logprobs[1] > score.logprobs[0]
    else:
        pytest.fail(f"the starter answered neither yes nor no: {said!r}")


def test_prompt_larger_than_the_servers_context_is_one_line(starter_server: str) -> None:
    engine = RemoteEngine(RemoteConfig(starter_server))
    with pytest.raises(EngineError, match="may not fit its context") as info:
        list(engine.generate(None, _request("clause " * 3000)))
    assert "\n" not in str(info.value)


def test_folio_ask_goes_to_the_configured_server(starter_server: str, starter_home: Path, contract_pdf: Path) -> None:
    settings = starter_home / "config" / "settings.toml"
    settings.write_text(settings.read_text() + f'server_url = "{starter_server}"\n')
    code, _out, err = run_folio("add", str(contract_pdf))
    assert code == 0, err
    code, out, err = run_folio("ask", str(contract_pdf), "Which law governs this agreement?")
    assert code == 0, err
    host = starter_server.removeprefix("http://")
    assert f"connected to {ALIAS} at {host}" in err
    assert "loading" not in err and "Demo model" not in err  # no local model was touched
    db = sqlite3.connect(starter_home / "data" / "folio.sqlite3")
    db.row_factory = sqlite3.Row
    reply = db.execute("SELECT * FROM messages WHERE role = 'assistant'").fetchone()
    db.close()
    assert reply["status"] == "complete" and reply["text"] and out.startswith(reply["text"])  # the verdicts follow
    assert reply["model"] == f"{ALIAS} at {host}" and reply["model_sha256"] is None
    assert 0 < reply["completion_tokens"] <= 48


def test_page_images_go_to_a_real_multimodal_server(tmp_path: Path) -> None:
    model = str(write_tiny_qwen35(tmp_path / "tiny-qwen35.gguf"))
    mmproj = str(write_tiny_mmproj(tmp_path / "tiny-mmproj.gguf"))
    page = tmp_path / "page.png"
    page.write_bytes(png_image(96, 64, (200, 30, 30), stripe=True))
    doc = PromptDocument(1, "Scan", [SourceBlock("[p. 1]", "Signed on 3 March.", image=str(page))])
    messages = build_messages("Answer from the document.", [doc], [], "What is on page 1?")
    request = GenerateRequest([], Sampling(max_tokens=6), 0, tuple(messages), False)
    extra = ("--chat_format", "mtmd", "--clip_model_path", mmproj)
    with llama_server(model, tmp_path / "log.txt", *extra) as url:
        events = list(RemoteEngine(RemoteConfig(url)).generate(None, request))
        broken = tmp_path / "broken.png"
        broken.write_bytes(b"\x89PNG\r\n\x1a\nnot an image")
        bad = build_messages("A", [PromptDocument(1, "S", [SourceBlock("[p. 1]", "", image=str(broken))])], [], "q")
        with pytest.raises(EngineError) as info:
            list(RemoteEngine(RemoteConfig(url)).generate(None, GenerateRequest([], Sampling(), 0, tuple(bad), False)))
        assert "\n" not in str(info.value)
    stats = next(e for e in events if isinstance(e, Finished)).stats
    assert stats.stop_reason in ("eos", "length") and stats.completion_tokens <= 6


def test_no_network_socket_without_a_server_url(starter_home: Path, contract_pdf: Path) -> None:
    """The default: asking runs the local engine over OS pipes and never touches the network."""
    from app.chat import ChatService
    from app.context import open_app

    opened: list[tuple[str, Any]] = []
    watching = threading.Event()

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if not watching.is_set():
            return
        if event in ("socket.connect", "socket.getaddrinfo", "socket.bind") or (
            event == "socket.__new__" and len(args) > 1 and args[1] in (socket.AF_INET, socket.AF_INET6)
        ):
            opened.append((event, args))

    sys.addaudithook(audit)  # hooks cannot be removed; this one only records while `watching`
    ctx = open_app()
    try:
        doc = ctx.library.add(contract_pdf).document
        watching.set()
        service = ChatService(ctx)
        try:
            message = service.ask([doc.id], "Which law governs this agreement?")
        finally:
            service.close()
            watching.clear()
    finally:
        ctx.close()
    assert message.status == "complete"
    assert opened == []
