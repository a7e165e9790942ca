"""The engine interface against an OpenAI-compatible server (vLLM, SGLang, llama-server) on the LAN.

For teams whose documents outgrow a workstation. It speaks /v1/chat/completions with streaming
(server-sent events) through httpx and httpx-sse: one connection per answer, so cancel is simply
shutting that connection's socket down, which also makes the server stop generating. Every failure
becomes one plain line. Nothing here runs (httpx is not even imported) unless a server URL is
configured: this is the only module of Folio that opens a socket.

The server applies its own chat template and tokenizes the prompt itself, usually with special
tokens parsed, so text that looks like chat markup (<|im_start|>, <start_of_turn>...) is broken
up with a zero-width space before it leaves Folio: a document cannot open a turn of its own.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from inference.chat_format import Message, PromptPart, content_parts
from inference.engine_api import EngineConfig, GenerateRequest, TokenCount
from inference.errors import ContextOverflow, EngineError, ScoringUnsupported
from inference.events import EngineEvent, Finished, GenerationStats, Loaded, Loading, Scored, TokenText

if TYPE_CHECKING:
    import httpx

USER_AGENT = "Folio"
_SPECIAL_LOOKING = re.compile(
    r"<(?=\|[^<>|\s]{1,40}\|>|/?(?:start_of_turn|end_of_turn|think|start_of_image|end_of_image|s)>)"
)
_CONTEXT_WORDS = re.compile(r"context|too long|maximum.*length|exceed", re.IGNORECASE)
_MAX_DETAIL = 200
TOP_LOGPROBS = 20  # OpenAI's most; a scored answer's choices are among them unless the model shuns them


@dataclass(frozen=True)
class RemoteConfig:
    url: str  # http(s)://host:port, with or without a trailing /v1
    model: str = ""  # the served model name; "" = the first one the server lists
    api_key: str = ""
    connect_timeout_s: float = 10.0
    # The longest silence allowed: a server reading a 200K-token prompt sends nothing for a while.
    read_timeout_s: float = 600.0

    def __post_init__(self) -> None:
        parts = urlsplit(self.url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EngineError(f"the model server URL must look like http://host:port (got {self.url!r})")

    @property
    def _split(self) -> Any:
        return urlsplit(self.url.strip())

    @property
    def host(self) -> str:
        parts = self._split
        return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)

    @property
    def base_url(self) -> str:
        parts = self._split
        path = parts.path.rstrip("/").removesuffix("/v1")
        return f"{parts.scheme}://{parts.netloc}{path}"


class RemoteEngine:
    """Same shape as EngineProcess: load / generate (events) / cancel / close."""

    def __init__(self, config: RemoteConfig) -> None:
        self.remote = config
        self.model_id = config.model
        self.n_ctx = 0
        self._connected = False
        self._cancel = threading.Event()  # the request under way was asked to stop
        self._running = 0  # its request id
        self._stopped: set[int] = set()  # ids asked to stop before they started
        self._next_id = 0
        self._lock = threading.Lock()
        # The socket of the request under way: shutting it down wakes a read blocked on it at once
        # (closing it from another thread would not), and the server sees the drop.
        self._active: socket.socket | None = None

    # -- the EngineProcess shape -----------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return None

    @property
    def config(self) -> EngineConfig | None:
        return None

    @property
    def label(self) -> str:
        return f"{self.model_id or 'model'} at {self.remote.host}"

    @property
    def applies_template(self) -> bool:
        return True

    def count_tokens(self, config: EngineConfig, parts: list[PromptPart], prefix_parts: int) -> TokenCount:
        raise EngineError("token counts need the local engine; the model server counts its own")

    def gpu_devices(self) -> list[tuple[str, int, int]]:
        return []  # the server's GPUs are its own business

    def cancel(self, request_id: int = 0) -> None:
        with self._lock:
            if request_id and request_id != self._running:
                self._stopped.add(request_id)  # not started yet (or long over): it stops when it starts
                return
            self._cancel.set()
            sock = self._active
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes the reader; the server sees the drop

    def _begin(self, request_id: int) -> int:
        """Make `request_id` (or a new number) the request under way; its cancel flag says whether it
        was already asked to stop."""
        with self._lock:
            if not request_id:
                self._next_id -= 1  # numbers of its own, apart from the callers' (positive) ones
                request_id = self._next_id
            self._running = request_id
            if request_id in self._stopped:
                self._stopped.discard(request_id)
                self._cancel.set()
            else:
                self._cancel.clear()
            return request_id

    def close(self) -> None:
        self.cancel()
        self._connected = False

    def kill(self) -> None:
        self.close()

    def load(self, config: EngineConfig | None = None) -> Iterator[EngineEvent]:
        """Reach the server and learn which model it serves (once); EngineConfig is not used."""
        self._begin(0)
        try:
            yield from self._load()
        except _Cancelled:
            raise EngineError(f"connecting to the model server at {self.remote.host} was cancelled") from None

    def _load(self) -> Iterator[EngineEvent]:
        if self._connected:
            return
        yield Loading(self.remote.url)
        start = time.perf_counter()
        listing = self._get_json("/v1/models")
        models = listing.get("data") if isinstance(listing, dict) else None
        if not isinstance(models, list) or not models:
            raise EngineError(f"the model server at {self.remote.host} lists no models")
        ids = [str(m.get("id", "")) for m in models if isinstance(m, dict)]
        if self.model_id and self.model_id not in ids:
            raise EngineError(
                f"the model server at {self.remote.host} does not serve {self.model_id!r} (it serves: {', '.join(ids)})"
            )
        chosen = next(m for m in models if isinstance(m, dict) and (not self.model_id or m.get("id") == self.model_id))
        self.model_id = str(chosen.get("id", ""))
        meta = chosen.get("meta")
        meta = meta if isinstance(meta, dict) else {}
        self.n_ctx = int(chosen.get("max_model_len") or meta.get("n_ctx_train") or meta.get("n_ctx") or 0)
        self._connected = True
        yield Loaded(self.model_id, self.n_ctx, time.perf_counter() - start)

    def generate(self, config: EngineConfig | None, request: GenerateRequest) -> Iterator[EngineEvent]:
        self._begin(request.request_id)
        start = time.perf_counter()
        try:
            yield from self._load()
        except _Cancelled:
            yield Finished(self._stats(start, None, 0, {}, {}, "cancelled"))
            return
        if not request.messages:
            raise EngineError("the model server needs the conversation, not a rendered prompt")
        with self._client() as client:
            if request.choices:
                yield from self._score(client, request, start)
                return
            yield from self._stream(client, self._body(request), start)

    def _score(self, client: httpx.Client, request: GenerateRequest, start: float) -> Iterator[EngineEvent]:
        """The choices scored from the first answer token's top log-probabilities (OpenAI's logprobs):
        one token, greedy. A server that returns none raises ScoringUnsupported."""
        import httpx

        body = {
            **self._body(request),
            "stream": False,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": TOP_LOGPROBS,
        }
        body.pop("stream_options", None)
        body.pop("response_format", None)
        where = self.remote.host
        try:
            with client.stream("POST", "/v1/chat/completions", json=body) as response:
                self._hold(response)
                raw = response.read()
        except _Cancelled:
            yield Finished(self._stats(start, None, 0, {}, {}, "cancelled"))
            return
        except httpx.HTTPError as exc:
            if self._cancel.is_set():
                yield Finished(self._stats(start, None, 0, {}, {}, "cancelled"))
                return
            raise self._reach_error(exc) from exc
        finally:
            self._release()
        if response.status_code >= 400:
            if b"logprob" in raw.lower():
                raise ScoringUnsupported(f"the model server at {where} does not return token probabilities")
            raise _http_error(where, response.status_code, raw[: 64 * 1024])
        try:
            reply = json.loads(raw)
            top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            seen = [(str(t["token"]), float(t["logprob"])) for t in top]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ScoringUnsupported(f"the model server at {where} does not return token probabilities") from exc
        if not seen:
            raise ScoringUnsupported(f"the model server at {where} does not return token probabilities")
        yield Scored(choice_logprobs(request.choices, seen), source="logprobs")
        yield Finished(self._stats(start, None, 0, reply.get("usage") or {}, reply.get("timings") or {}, "scored"))

    # -- request ---------------------------------------------------------------------------------
    def _body(self, request: GenerateRequest) -> dict[str, Any]:
        s = request.sampling
        body = {
            "model": self.model_id,
            "messages": wire_messages(request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": s.max_tokens,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "top_k": s.top_k,
            "min_p": s.min_p,
            "presence_penalty": s.presence_penalty,
            # vLLM, SGLang and llama-server pass these to the model's template (Qwen3.5 thinking).
            "chat_template_kwargs": {"enable_thinking": request.thinking},
        }
        if request.json_schema is not None:
            # OpenAI's structured output: llama-server, vLLM and SGLang constrain decoding to the schema.
            schema = json.loads(request.json_schema)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "folio_answer", "schema": schema, "strict": True},
            }
        return body

    def _client(self) -> httpx.Client:
        import httpx

        timeout = httpx.Timeout(self.remote.read_timeout_s, connect=self.remote.connect_timeout_s)
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self.remote.api_key:
            headers["Authorization"] = f"Bearer {self.remote.api_key}"
        # trust_env off: no proxy or certificate settings from the environment; the URL is the server.
        return httpx.Client(base_url=self.remote.base_url, headers=headers, timeout=timeout, trust_env=False)

    def _hold(self, response: httpx.Response) -> None:
        """Keep the response's socket, so cancel can shut it down while a read is blocked on it."""
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        with self._lock:
            self._active = sock if isinstance(sock, socket.socket) else None
        if self._cancel.is_set():
            raise _Cancelled

    def _release(self) -> None:
        with self._lock:
            self._active = None

    def _reach_error(self, exc: Exception) -> EngineError:
        """A failure to reach the server or to read its reply, in one plain line."""
        import httpx

        where = self.remote.host
        causes = _causes(exc)
        if isinstance(exc, httpx.ConnectTimeout):
            seconds = self.remote.connect_timeout_s
            return EngineError(f"the model server at {where} did not accept a connection within {seconds:g} s")
        if isinstance(exc, httpx.TimeoutException):
            return _silent(where, self.remote.read_timeout_s)
        if any(isinstance(c, socket.gaierror) for c in causes):
            return EngineError(f"cannot find the model server {where} (check the server URL)")
        if any(isinstance(c, ConnectionRefusedError) for c in causes) or "refused" in str(exc).lower():
            return EngineError(f"the model server at {where} refused the connection; is it running?")
        ssl_error = next((c for c in causes if isinstance(c, ssl.SSLError)), None)
        if ssl_error is not None:
            return EngineError(f"a secure connection to the model server at {where} failed ({ssl_error.reason})")
        return EngineError(f"cannot reach the model server at {where} ({_short(str(exc) or type(exc).__name__)})")

    def _get_json(self, path: str) -> Any:
        import httpx

        with self._client() as client:
            try:
                with client.stream("GET", path) as response:
                    self._hold(response)
                    raw = response.read()
            except httpx.HTTPError as exc:
                if self._cancel.is_set():
                    raise _Cancelled from exc
                raise self._reach_error(exc) from exc
            finally:
                self._release()
        if response.status_code >= 400:
            raise _http_error(self.remote.host, response.status_code, raw[: 64 * 1024])
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise EngineError(f"the model server at {self.remote.host} sent a reply Folio cannot read") from exc

    # -- streaming -------------------------------------------------------------------------------
    def _stream(self, client: httpx.Client, body: dict[str, Any], start: float) -> Iterator[EngineEvent]:
        import httpx
        from httpx_sse import SSEError, connect_sse

        where = self.remote.host
        first_at: float | None = None
        deltas = 0
        usage: dict[str, Any] = {}
        timings: dict[str, Any] = {}
        finish = ""
        done = False
        in_thinking = False
        try:
            with connect_sse(client, "POST", "/v1/chat/completions", json=body) as source:
                self._hold(source.response)
                if source.response.status_code >= 400:
                    raw = source.response.read()
                    raise _http_error(where, source.response.status_code, raw[: 64 * 1024])
                for sse in source.iter_sse():
                    if sse.data == "[DONE]":
                        done = True
                        break
                    try:
                        chunk = json.loads(sse.data)
                    except ValueError as exc:
                        raise EngineError(f"the model server at {where} sent a reply Folio cannot read") from exc
                    if not isinstance(chunk, dict):
                        continue
                    if "error" in chunk:
                        raise _http_error(where, 500, json.dumps(chunk).encode())
                    usage = chunk.get("usage") or usage
                    timings = chunk.get("timings") or timings
                    for choice in chunk.get("choices") or []:
                        delta = choice.get("delta") or {}
                        reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
                        content = delta.get("content") or ""
                        text = ""
                        if reasoning:
                            text += ("" if in_thinking else "<think>") + reasoning
                            in_thinking = True
                        if content:
                            text += ("</think>" if in_thinking else "") + content
                            in_thinking = False
                        if text:
                            if first_at is None:
                                first_at = time.perf_counter()
                            deltas += 1
                            yield TokenText(text)
                        finish = choice.get("finish_reason") or finish
        except _Cancelled:
            pass
        except SSEError as exc:
            raise EngineError(
                f"the model server at {where} sent a reply Folio cannot read ({_short(str(exc))})"
            ) from exc
        except httpx.HTTPError as exc:
            if not self._cancel.is_set():
                if first_at is None or isinstance(exc, httpx.TimeoutException):
                    raise self._reach_error(exc) from exc
                raise EngineError(f"the connection to the model server at {where} broke mid-answer") from exc
        finally:
            self._release()
        if in_thinking:
            yield TokenText("</think>")
        cancelled = self._cancel.is_set()
        if not cancelled and not finish and first_at is None:
            raise EngineError(
                f"the model server at {where} ended the answer without a word (the prompt may not fit its context)"
            )
        if not cancelled and not finish and not done:
            raise EngineError(f"the connection to the model server at {where} broke mid-answer")
        yield Finished(self._stats(start, first_at, deltas, usage, timings, "cancelled" if cancelled else finish))

    def _stats(
        self,
        start: float,
        first_at: float | None,
        deltas: int,
        usage: dict[str, Any],
        timings: dict[str, Any],
        finish: str,
    ) -> GenerationStats:
        end = time.perf_counter()
        first = first_at if first_at is not None else end
        details = usage.get("prompt_tokens_details") or {}
        cached = int(details.get("cached_tokens") or timings.get("cache_n") or 0)
        prompt = int(usage.get("prompt_tokens") or (int(timings.get("prompt_n") or 0) + cached))
        completion = int(usage.get("completion_tokens") or timings.get("predicted_n") or deltas)
        reason = {"stop": "eos", "length": "length", "cancelled": "cancelled"}.get(finish, finish or "eos")
        return GenerationStats(
            prompt_tokens=prompt,
            cached_tokens=cached,
            completion_tokens=completion,
            prefill_ms=(first - start) * 1000,
            generate_ms=(end - first) * 1000,
            n_ctx=self.n_ctx,
            stop_reason=reason,
        )


def choice_logprobs(choices: tuple[tuple[str, ...], ...], top: list[tuple[str, float]]) -> tuple[float, ...]:
    """Each choice's log-probability from a server's top tokens: the tokens whose text (spaces aside,
    any case) is one of its spellings, summed; a choice none of the top tokens spells gets the
    smallest probability listed, which bounds it from above."""
    import math

    floor = min(lp for _t, lp in top)
    out = []
    for spellings in choices:
        wanted = {s.strip().lower() for s in spellings}
        mine = [math.exp(lp) for token, lp in top if token.strip().lower() in wanted and token.strip()]
        out.append(math.log(sum(mine)) if mine else floor)
    return tuple(out)


class _Cancelled(Exception):
    """The user cancelled while the request was being sent."""


def wire_messages(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    """The conversation as OpenAI chat messages; page images become image_url parts (data URLs).

    OpenAI-style APIs (and Qwen's template) take images in user turns only, so a system message
    that carries images is sent as the opening of the first user turn instead.
    """
    out: list[dict[str, Any]] = []
    carried: list[dict[str, Any]] = []
    for message in messages:
        content = _content_json(message)
        if message.role == "system" and message.images:
            carried = [*content, {"type": "text", "text": "\n\n"}]
            continue
        if carried and message.role == "user":
            content = carried + (content if isinstance(content, list) else [{"type": "text", "text": content}])
            carried = []
        out.append({"role": message.role, "content": content})
    if carried:
        out.append({"role": "user", "content": carried})
    return out


def _content_json(message: Message) -> Any:
    if not message.images:
        return defuse_markup(message.content)
    content: list[dict[str, Any]] = []
    for part in content_parts(message):
        if part.image is not None:
            content.append({"type": "image_url", "image_url": {"url": _data_url(part.image)}})
        elif part.text:
            content.append({"type": "text", "text": defuse_markup(part.text)})
    return content


def defuse_markup(text: str) -> str:
    """Break up text that looks like chat-template special tokens, so the server reads it as text."""
    return _SPECIAL_LOOKING.sub("<\u200b", text)


def _data_url(path: str) -> str:
    from pathlib import Path

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise EngineError(f"an image of the document is missing or unreadable ({Path(path).name})") from exc
    mime = "image/jpeg" if data[:3] == b"\xff\xd8\xff" else "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _silent(where: str, seconds: float) -> EngineError:
    return EngineError(f"the model server at {where} sent nothing for {seconds:g} s; it may be overloaded (try again)")


def _http_error(where: str, status: int, raw: bytes) -> EngineError:
    detail = _detail(raw)
    if status in (401, 403):
        return EngineError(
            f"the model server at {where} refused Folio's credentials (HTTP {status}); set FOLIO_SERVER_API_KEY"
        )
    if status == 404:
        return EngineError(f"the model server at {where} has no OpenAI-compatible /v1/chat/completions (HTTP 404)")
    message = f"the model server at {where} refused the request (HTTP {status}: {detail})"
    if status in (400, 413, 422) and _CONTEXT_WORDS.search(detail):
        return ContextOverflow(f"the prompt does not fit the model server's context ({detail}); select fewer pages")
    return EngineError(message)


def _detail(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    try:
        payload = json.loads(text)
    except ValueError:
        return _short(text) or "no details"
    found: Any = payload
    if isinstance(payload, dict):
        error = payload.get("error", payload.get("detail", payload.get("message", payload)))
        found = error.get("message", error) if isinstance(error, dict) else error
    return _short(found if isinstance(found, str) else json.dumps(found)) or "no details"


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MAX_DETAIL else line[: _MAX_DETAIL - 3] + "..."


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception and what it was raised from (httpx wraps the OS's socket errors)."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found
