"""The engine runs in a child process: a llama.cpp crash cannot take the window or the CLI down.

One owner drives an EngineProcess at a time. Requests and events travel over one-way OS pipes
(no sockets); cancel is a shared flag the child checks between tokens and inside llama_decode.
A crash or an out-of-memory kill of the child surfaces as EngineCrashed; the next request starts a
new child. Implements inference.engine_api.Engine.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from inference.chat_format import PromptPart
from inference.engine_api import EngineConfig, GenerateRequest, TokenCount
from inference.errors import ContextOverflow, EngineCrashed, EngineError, ModelFileError, ScoringUnsupported
from inference.events import EngineEvent, Failed, Finished, Loaded, Loading

_POLL_S = 0.05


class CancelFlag:
    """A shared bool with no lock. An Event's lock taken by the child (it polls the flag inside
    every decode) stays taken when the child is killed there, and the parent's next clear() hangs."""

    def __init__(self, context: Any) -> None:
        self._value = context.RawValue(ctypes.c_bool, False)

    def set(self) -> None:
        self._value.value = True

    def clear(self) -> None:
        self._value.value = False

    def is_set(self) -> bool:
        return bool(self._value.value)


class EngineProcess:
    def __init__(self, *, memory_limit_bytes: int = 0) -> None:
        """memory_limit_bytes > 0 caps the child's address space, so an oversized context fails
        inside the child (as an error event) instead of pushing the machine into swap."""
        self._memory_limit = memory_limit_bytes
        self._mp = mp.get_context("spawn")
        self._cancel = CancelFlag(self._mp)
        self._proc: Any = None
        self._requests: Connection | None = None
        self._events: Connection | None = None
        self._config: EngineConfig | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    @property
    def config(self) -> EngineConfig | None:
        return self._config

    @property
    def applies_template(self) -> bool:
        return False  # takes rendered parts on a context the app plans

    @property
    def label(self) -> str:
        return ""

    def _start(self) -> None:
        req_r, req_w = self._mp.Pipe(duplex=False)
        ev_r, ev_w = self._mp.Pipe(duplex=False)
        self._proc = self._mp.Process(
            target=_serve, args=(req_r, ev_w, self._cancel, self._memory_limit), name="folio-engine", daemon=True
        )
        self._proc.start()
        req_r.close()
        ev_w.close()
        self._requests, self._events = req_w, ev_r
        self._config = None

    def close(self) -> None:
        if self._proc is None:
            return
        try:
            if self._requests is not None:
                self._requests.send(("quit",))
        except (OSError, EOFError):
            pass
        self._proc.join(timeout=5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(timeout=5)
        self._reset()

    def kill(self) -> None:
        """Hard stop, as when the OS kills the engine; the next request starts a new process."""
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join(timeout=5)

    def _reset(self) -> None:
        for conn in (self._requests, self._events):
            if conn is not None:
                conn.close()
        self._proc = self._requests = self._events = self._config = None

    def cancel(self) -> None:
        self._cancel.set()

    # -- requests --------------------------------------------------------------------------------
    def load(self, config: EngineConfig | None) -> Iterator[EngineEvent]:
        """Make sure the model is loaded with this configuration (reloads only what changed)."""
        if config is None:
            raise EngineError("the local engine needs a model configuration")
        self._ensure_started()
        if self._config == config:
            return
        yield Loading(config.model_path)
        self._send(("load", config))
        event = self._receive()
        if isinstance(event, Failed):
            self._config = None
            raise _error_from(event)
        self._config = config
        yield event

    def generate(self, config: EngineConfig | None, request: GenerateRequest) -> Iterator[EngineEvent]:
        self._cancel.clear()
        yield from self.load(config)
        self._send(("generate", request))
        while True:
            event = self._receive()
            if isinstance(event, Failed):
                raise _error_from(event)
            yield event
            if isinstance(event, Finished):
                return

    def count_tokens(self, config: EngineConfig, parts: list[PromptPart], prefix_parts: int) -> TokenCount:
        """Exact token counts, with the loaded model or (before any load) its vocabulary alone."""
        self._ensure_started()
        self._send(("count", config.model_path, parts, prefix_parts))
        event = self._receive_any()
        if isinstance(event, Failed):
            raise _error_from(event)
        assert isinstance(event, TokenCount)
        return event

    def gpu_devices(self) -> list[tuple[str, int, int]]:
        """(name, free, total) of the GPUs llama.cpp can offload to, asked of the child process."""
        self._ensure_started()
        self._send(("devices",))
        event = self._receive_any()
        if isinstance(event, Failed):
            raise _error_from(event)
        devices: list[tuple[str, int, int]] = event
        return devices

    def prompt_logits(self, config: EngineConfig, request: GenerateRequest) -> Any:
        """Next-token logits after reading the prompt the way generate() does (for equivalence tests)."""
        self._cancel.clear()
        for _ in self.load(config):
            pass
        self._send(("logits", request))
        event = self._receive_any()
        if isinstance(event, Failed):
            raise _error_from(event)
        return event

    def _ensure_started(self) -> None:
        if self._proc is not None and not self._proc.is_alive():
            self._reset()
        if self._proc is None:
            self._start()

    def _send(self, message: tuple[Any, ...]) -> None:
        assert self._requests is not None
        try:
            self._requests.send(message)
        except (OSError, EOFError):
            self._crashed()

    def _receive(self) -> EngineEvent:
        event: EngineEvent = self._receive_any()
        return event

    def _receive_any(self) -> Any:
        assert self._events is not None and self._proc is not None
        while True:
            try:
                if self._events.poll(_POLL_S):
                    return self._events.recv()
            except (OSError, EOFError):
                self._crashed()
            if not self._proc.is_alive() and not self._events.poll(0):
                self._crashed()

    def _crashed(self) -> NoReturn:
        code = None
        if self._proc is not None:
            # A pipe can break a moment before the OS reports the exit: reap the child, then read it.
            self._proc.join(timeout=2)
            code = self._proc.exitcode
        self.kill()
        self._reset()
        raise EngineCrashed(f"the model engine stopped unexpectedly ({_describe_exit(code)}); ask again to restart it")


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = ", as when the system runs out of memory" if -code == getattr(signal, "SIGKILL", 9) else ""
        return f"killed by {name}{hint}"
    return f"exit code {code}"


def _error_from(event: Failed) -> EngineError:
    if event.kind == "overflow":
        return ContextOverflow(event.message)
    if event.kind == "model":
        return ModelFileError(event.message)
    if event.kind == "scoring":
        return ScoringUnsupported(event.message)
    return EngineError(event.message)


def _serve(requests: Connection, events: Connection, cancel: CancelFlag, memory_limit: int = 0) -> None:
    """Child process main loop. Exits when the parent goes away (pipe EOF)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C belongs to the parent, which cancels us
    parent = os.getppid()

    def stop() -> bool:
        # A parent that died (kill, crash) cannot cancel: a long read would run on as an orphan.
        return cancel.is_set() or os.getppid() != parent

    if memory_limit > 0:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    from inference.engine import CountedPrefix, LocalEngine, count_keeping_prefix, run_generation
    from inference.llama_native import NativeModel

    engine: LocalEngine | None = None
    vocab: NativeModel | None = None  # vocabulary-only model, to count tokens before a load
    # The documents' tokens from the last count before a load: the question that follows loads the
    # model and would otherwise tokenize a 262K-token prefix a second time.
    counted: CountedPrefix | None = None
    while True:
        try:
            message = requests.recv()
        except (EOFError, OSError):
            return
        command = message[0]
        if command == "quit":
            return
        try:
            if command == "load":
                config = message[1]
                start = time.perf_counter()
                if vocab is not None:
                    vocab.close()
                    vocab = None
                if engine is None:
                    engine = LocalEngine(config, cancelled=stop)
                else:
                    try:
                        engine.configure(config)
                    except BaseException:
                        engine.close()
                        engine = None
                        raise
                if counted is not None and counted.model_path == config.model_path:
                    engine.adopt_prefix(counted.key, counted.pieces, counted.ends)
                counted = None
                events.send(Loaded(config.model_path, engine.n_ctx, time.perf_counter() - start, engine.memory_report))
            elif command == "generate":
                if engine is None:
                    events.send(Failed("no model is loaded"))
                    continue
                run_generation(engine, message[1], events.send)
            elif command == "logits":
                if engine is None:
                    events.send(Failed("no model is loaded"))
                    continue
                events.send(engine.prompt_logits(message[1]))
            elif command == "devices":
                from inference.llama_native import gpu_devices

                events.send(gpu_devices())
            elif command == "count":
                _path, parts, prefix_parts = message[1:]
                if engine is not None and engine.config is not None and engine.config.model_path == _path:
                    events.send(engine.count(parts, prefix_parts))
                    continue
                if vocab is None or vocab.path != _path:
                    if vocab is not None:
                        vocab.close()
                    vocab = NativeModel(_path, vocab_only=True)
                count, counted = count_keeping_prefix(vocab, parts, prefix_parts)
                events.send(count)
        except ContextOverflow as exc:
            events.send(Failed(str(exc), kind="overflow"))
        except ModelFileError as exc:
            events.send(Failed(str(exc), kind="model"))
        except EngineError as exc:
            events.send(Failed(str(exc)))
        except MemoryError:
            events.send(Failed("the engine ran out of memory; choose a smaller context or model"))
        except Exception as exc:  # report, don't die: the next question should still work
            events.send(Failed(f"engine error: {type(exc).__name__}: {exc}"))
