"""The engine seam: what the app asks of an engine, whatever runs the model.

`inference.engine_process.EngineProcess` (llama.cpp in a child process) implements `Engine`, and so
does `inference.remote.RemoteEngine` (an OpenAI-compatible server; it takes config None). Requests
carry the prompt as `parts` (template markup, untrusted content and images, so each engine tokenizes
content safely) and the structured `messages` for engines that apply the chat template themselves
(`applies_template`). An engine that plans its own context (the local one) counts tokens
(`count_tokens`) and lists the GPUs it can offload to, so the planner can size that context. Code
outside `inference/` asks an engine what it does, never which class it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from inference.chat_format import Message, PromptPart
from inference.events import EngineEvent


@dataclass(frozen=True)
class EngineConfig:
    model_path: str
    n_ctx: int  # always explicit: llama-cpp-python's default of 512 would silently cut documents
    n_threads: int
    n_batch: int = 512  # tokens per prefill chunk: progress and cancel happen between chunks
    n_ubatch: int = 512
    kv_type: str = "f16"  # f16 | q8_0 | q4_0 (quantized V needs flash attention)
    flash_attn: bool = True
    n_gpu_layers: int = 0
    seed: int = 1234
    mmproj_path: str | None = None  # vision projector: scanned pages and keyframes go in as images
    model_id: str = ""  # the model file's sha256; keys the snapshot cache ("" = path, size and mtime)
    state_cache_dir: str = ""  # where document snapshots persist ("" = kept in memory only)
    state_cache_bytes: int = 0  # size cap of that folder (least recently used snapshots go first)
    # Seconds of reading between checkpoints of a long prefix read (0 = none): a quit, crash or kill
    # loses at most this much reading. Measured in benchmarks/bench_read.py.
    checkpoint_s: float = 30.0
    # Speculative decoding: the most drafted tokens checked per step (0 = off). Drafts come from the
    # context itself (prompt lookup) and, when the GGUF carries them, the model's MTP layers.
    draft_tokens: int = 0

    def same_model(self, other: EngineConfig | None) -> bool:
        """True when only context settings differ: the weights can stay loaded."""
        return other is not None and (other.model_path, other.n_gpu_layers, other.wants_mtp) == (
            self.model_path,
            self.n_gpu_layers,
            self.wants_mtp,
        )

    @property
    def wants_mtp(self) -> bool:
        """Load the multi-token-prediction layers (when the GGUF has them): they draft tokens."""
        return self.draft_tokens > 0


@dataclass(frozen=True)
class Sampling:
    temperature: float = 0.7
    top_p: float = 0.8
    top_k: int = 20
    min_p: float = 0.0
    presence_penalty: float = 1.5
    max_tokens: int = 1024

    @classmethod
    def recommended(cls, *, thinking: bool, max_tokens: int) -> Sampling:
        """Qwen's recommended settings for thinking and non-thinking mode."""
        if thinking:
            return cls(1.0, 0.95, 20, 0.0, 1.5, max_tokens)
        return cls(0.7, 0.8, 20, 0.0, 1.5, max_tokens)


@dataclass(frozen=True)
class GenerateRequest:
    parts: list[PromptPart]
    sampling: Sampling
    prefix_parts: int = 0  # leading parts that hold instructions + documents: the snapshot boundary
    # The conversation before templating, for engines that apply the template themselves (remote).
    messages: tuple[Message, ...] = ()
    thinking: bool = False
    json_schema: str | None = None  # constrain the answer to JSON valid under this schema (llama.cpp grammar)
    # Labels stored with a snapshot of the prefix (the app passes its documents' sha256), so every
    # snapshot holding a document can be found and deleted when the document is purged.
    prefix_tags: tuple[str, ...] = ()
    # The same labels per document, in prompt order, when the prompt marks where its documents end:
    # the state kept where document k ends is labelled with the first k only (a purge of a later
    # document leaves it alone).
    document_tags: tuple[tuple[str, ...], ...] = ()
    # Read the documents (the prefix) and stop there: no answer, the snapshot is what is wanted.
    # Ends with Finished(stop_reason 'read').
    read_only: bool = False
    # False: write this answer token by token even where the engine drafts (a benchmark compares
    # both ways on one engine, so nothing but drafting differs between them).
    drafting: bool = True
    # The most threads this request may use (0 = the context's own). Set on the live context for the
    # request only (llama_set_n_threads), so a background read can leave cores to the user without
    # re-creating the context and dropping what it holds.
    n_threads: int = 0
    # Score these answers instead of writing one: each choice is one or more spellings ("Yes", "yes"),
    # and the engine reports how likely the answer's first token is each choice's (Scored), from one
    # forward pass over the prompt. A decision read from the model's own probabilities costs no
    # generated answer. Ends with Finished(stop_reason 'scored'); an engine that cannot read the
    # probabilities (a model server that returns no logprobs) raises ScoringUnsupported.
    choices: tuple[tuple[str, ...], ...] = ()
    # Which request this is (0: the engine numbers it): a cancel names the request it stops, so a stop
    # meant for one job never lands on the next request, another job's or the same job's.
    request_id: int = 0

    @property
    def prefix(self) -> list[PromptPart]:
        return self.parts[: self.prefix_parts]


@dataclass(frozen=True)
class TokenCount:
    total: int
    prefix: int


class Engine(Protocol):
    """Runs one request at a time. Iterators yield inference.events; failures raise EngineError."""

    @property
    def config(self) -> EngineConfig | None: ...

    @property
    def applies_template(self) -> bool:
        """True when the engine takes `messages` and applies the chat template itself (a model server,
        config None); False when it takes rendered `parts` on a context the app plans."""
        ...

    @property
    def label(self) -> str:
        """Who answers, for the user: the served model and host, or "" for a local model file."""
        ...

    def count_tokens(self, config: EngineConfig, parts: list[PromptPart], prefix_parts: int) -> TokenCount:
        """Exact token counts of a rendered prompt (engines that plan their context)."""
        ...

    def gpu_devices(self) -> list[tuple[str, int, int]]:
        """(name, free bytes, total bytes) of the GPUs this engine can offload to; [] when none or remote."""
        ...

    def load(self, config: EngineConfig | None) -> Iterator[EngineEvent]:
        """Make the model ready with this configuration (a no-op when it already is)."""
        ...

    def generate(self, config: EngineConfig | None, request: GenerateRequest) -> Iterator[EngineEvent]:
        """Load if needed, read the prompt (reusing a snapshot when possible), stream the answer.

        Ends with Finished; a cancel ends it early with stop_reason 'cancelled' (not an error)."""
        ...

    def cancel(self, request_id: int = 0) -> None:
        """Ask the request with this id to stop soon (0: the one under way, if any); a request not yet
        started stops at once when it starts. Safe to call from another thread."""
        ...

    def close(self) -> None: ...
