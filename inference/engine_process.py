"""The engine runs in a child process: a llama.cpp crash cannot take the window or the CLI down.

One owner drives an EngineProcess at a time. Requests and events travel over one-way OS pipes
(no sockets) as the small dataclasses below, which the child dispatches with `match`. A request
carries its id; cancel is a shared number, the id of the request to stop, which the child compares
with the request it runs between tokens and inside llama_decode, so a stop never outlives its
request and never lands on the next one. A request names its configuration and the child loads (or
reconfigures) first when it differs: a cold question costs one round trip, not two.
A crash or an out-of-memory kill of the child surfaces as EngineCrashed; the next request starts a
new child. Implements inference.engine_api.Engine.
"""

from __future__ import annotations

import ctypes
import dataclasses
import itertools
import multiprocessing as mp
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from common.lifeline import Lifeline, lifeline, start_child
from inference.chat_format import PromptPart
from inference.engine_api import EngineConfig, GenerateRequest, TokenCount
from inference.errors import ContextOverflow, EngineCrashed, EngineError, ModelFileError, ScoringUnsupported
from inference.events import EngineEvent, Failed, Finished, Loaded, Loading

_POLL_S = 0.05


class CancelFlag:
    """The id of the request to stop, shared with the child and read without a lock: an Event's lock
    taken by the child (it polls the flag inside every decode) stays taken when the child is killed
    there, and the parent's next call on it hangs. Request ids only grow, so a stop meant for one
    request can never match a later one."""

    def __init__(self, context: Any) -> None:
        self._value = context.RawValue(ctypes.c_longlong, 0)

    def stop(self, request_id: int) -> None:
        self._value.value = request_id

    def stops(self, request_id: int) -> bool:
        return request_id != 0 and self._value.value == request_id


# -- what the parent asks of the child ---------------------------------------------------------------
@dataclass(frozen=True)
class Load:
    config: EngineConfig


@dataclass(frozen=True)
class Generate:
    config: EngineConfig  # loaded (or applied) first when the child holds another one
    request: GenerateRequest


@dataclass(frozen=True)
class Count:
    model_path: str
    parts: list[PromptPart]
    prefix_parts: int


@dataclass(frozen=True)
class Devices:
    pass


@dataclass(frozen=True)
class Logits:
    request: GenerateRequest


@dataclass(frozen=True)
class Quit:
    pass


Command = Load | Generate | Count | Devices | Logits | Quit
_IDS = itertools.count(1)  # request ids, unique in this process (the parent's)


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
        self._running = 0  # the id of the request under way (0: none)
        self._ids_lock = threading.Lock()

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
            target=_serve,
            args=(req_r, ev_w, self._cancel, self._memory_limit, lifeline()),
            name="folio-engine",
            daemon=True,
        )
        start_child(self._proc.start)  # ends with this process, however it ends (common/lifeline.py)
        req_r.close()
        ev_w.close()
        self._requests, self._events = req_w, ev_r
        self._config = None

    def close(self) -> None:
        if self._proc is None:
            return
        try:
            if self._requests is not None:
                self._requests.send(Quit())
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

    def cancel(self, request_id: int = 0) -> None:
        """Stop the request with this id, or (0) the one under way; thread-safe, takes no lock the
        child could hold."""
        target = request_id or self._running
        if target:
            self._cancel.stop(target)

    # -- requests --------------------------------------------------------------------------------
    def load(self, config: EngineConfig | None) -> Iterator[EngineEvent]:
        """Make sure the model is loaded with this configuration (reloads only what changed)."""
        if config is None:
            raise EngineError("the local engine needs a model configuration")
        self._ensure_started()
        if self._config == config:
            return
        yield Loading(config.model_path)
        self._send(Load(config))
        event = self._receive()
        if isinstance(event, Failed):
            self._config = None
            raise _error_from(event)
        self._config = config
        yield event

    def generate(self, config: EngineConfig | None, request: GenerateRequest) -> Iterator[EngineEvent]:
        if config is None:
            raise EngineError("the local engine needs a model configuration")
        if not request.request_id:
            request = dataclasses.replace(request, request_id=next(_IDS))
        self._ensure_started()
        if self._config != config:
            yield Loading(config.model_path)
        self._running = request.request_id
        try:
            self._send(Generate(config, request))
            while True:
                event = self._receive()
                if isinstance(event, Failed):
                    if event.kind == "model":
                        self._config = None
                    raise _error_from(event)
                if isinstance(event, Loaded):
                    self._config = config
                yield event
                if isinstance(event, Finished):
                    self._config = config
                    return
        finally:
            self._running = 0

    def count_tokens(self, config: EngineConfig, parts: list[PromptPart], prefix_parts: int) -> TokenCount:
        """Exact token counts, with the loaded model or (before any load) its vocabulary alone."""
        self._ensure_started()
        self._send(Count(config.model_path, parts, prefix_parts))
        event = self._receive_any()
        if isinstance(event, Failed):
            raise _error_from(event)
        assert isinstance(event, TokenCount)
        return event

    def gpu_devices(self) -> list[tuple[str, int, int]]:
        """(name, free, total) of the GPUs llama.cpp can offload to, asked of the child process."""
        self._ensure_started()
        self._send(Devices())
        event = self._receive_any()
        if isinstance(event, Failed):
            raise _error_from(event)
        devices: list[tuple[str, int, int]] = event
        return devices

    def prompt_logits(self, config: EngineConfig, request: GenerateRequest) -> Any:
        """Next-token logits after reading the prompt the way generate() does (for equivalence tests)."""
        for _ in self.load(config):
            pass
        self._send(Logits(request))
        event = self._receive_any()
        if isinstance(event, Failed):
            raise _error_from(event)
        return event

    def _ensure_started(self) -> None:
        if self._proc is not None and not self._proc.is_alive():
            self._reset()
        if self._proc is None:
            self._start()

    def _send(self, message: Command) -> None:
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


def _serve(
    requests: Connection, events: Connection, cancel: CancelFlag, memory_limit: int = 0, line: Lifeline | None = None
) -> None:
    """Child process main loop. Exits when the parent goes away (the lifeline, or pipe EOF)."""
    if line is not None:
        line.hold()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C belongs to the parent, which cancels us
    parent = os.getppid()

    running = 0  # the id of the request this child is working on

    def stop() -> bool:
        # A parent that died (kill, crash) cannot cancel: a long read would run on as an orphan.
        return cancel.stops(running) or os.getppid() != parent

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

    def load(config: EngineConfig) -> None:
        nonlocal engine, vocab, counted
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

    while True:
        try:
            message = requests.recv()
        except (EOFError, OSError):
            return
        try:
            match message:
                case Quit():
                    return
                case Load(config=config):
                    load(config)
                case Generate(config=config, request=request):
                    if engine is None or engine.config != config:
                        load(config)
                    assert engine is not None
                    running = request.request_id
                    try:
                        run_generation(engine, request, events.send)
                    finally:
                        running = 0
                case Logits(request=request):
                    if engine is None:
                        events.send(Failed("no model is loaded"))
                        continue
                    events.send(engine.prompt_logits(request))
                case Devices():
                    from inference.llama_native import gpu_devices

                    events.send(gpu_devices())
                case Count(model_path=path, parts=parts, prefix_parts=prefix_parts):
                    if engine is not None and engine.config is not None and engine.config.model_path == path:
                        events.send(engine.count(parts, prefix_parts))
                        continue
                    if vocab is None or vocab.path != path:
                        if vocab is not None:
                            vocab.close()
                        vocab = NativeModel(path, vocab_only=True)
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
