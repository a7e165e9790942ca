"""What the engine reports while it works. Plain dataclasses: they cross a process boundary."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Loading:
    model_path: str


@dataclass(frozen=True)
class Loaded:
    model_path: str
    n_ctx: int
    seconds: float
    memory: dict[str, int] = field(default_factory=dict)  # buffer bytes llama.cpp reported, by kind


@dataclass(frozen=True)
class PrefixReused:
    """The documents were not read again: their state came from the context, memory or disk."""

    tokens: int
    source: str  # 'context' | 'memory' | 'disk' | 'documents' (the earlier documents' state on disk) | 'checkpoint'
    seconds: float


@dataclass(frozen=True)
class StateSaved:
    """The documents' state is on disk: complete (the snapshot: questions start at once) or, during a
    long read, a checkpoint of the first `tokens` of them (a quit or crash resumes from there)."""

    key: str
    tokens: int
    complete: bool
    # How many of the prompt's documents, from the first, the state holds: all of them for the
    # snapshot after the prefix, fewer for the state kept where an earlier document ends (a later
    # selection that starts with those documents starts from it); 0 for a checkpoint, or when the
    # prompt does not mark where its documents end.
    documents: int = 0


@dataclass(frozen=True)
class PrefillProgress:
    done: int
    total: int
    tokens_per_s: float
    eta_s: float


@dataclass(frozen=True)
class TokenText:
    text: str


@dataclass(frozen=True)
class Scored:
    """A request's choices (GenerateRequest.choices), scored: for each, the natural log of the
    probability that the answer's first token is one of its spellings' first tokens, from the model's
    own next-token distribution over the whole vocabulary (so they need not sum to 1: the rest went
    to other tokens). `source` says how they were read: 'logits' (a local model) or 'logprobs' (a
    model server's top log-probabilities, with a choice missing from them at most the smallest there)."""

    logprobs: tuple[float, ...]
    source: str = "logits"


@dataclass(frozen=True)
class GenerationStats:
    prompt_tokens: int
    cached_tokens: int  # prompt tokens restored from a snapshot instead of evaluated
    completion_tokens: int
    prefill_ms: float
    generate_ms: float
    n_ctx: int
    stop_reason: str  # 'eos' | 'length' | 'cancelled' | 'read' (the documents alone) | 'scored' (choices)
    ttft_ms: float = 0.0  # request received -> first answer token (restore + prefill + first sample)
    drafted_tokens: int = 0  # speculative decoding: drafted tokens the model checked...
    accepted_tokens: int = 0  # ...and those it kept, having drawn the same tokens itself
    draft_note: str = ""  # drafting was on and nothing was drafted: why, in words
    # Figures added up over several requests (an answer read in parts): the most tokens one request held
    # in the context at once; 0 for one request, whose prompt and answer are what it held.
    peak_tokens: int = 0

    @property
    def in_context(self) -> int:
        """Tokens in the model's context at the fullest: what the context gauge shows against n_ctx."""
        return self.peak_tokens or self.prompt_tokens + self.completion_tokens

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / (self.generate_ms / 1000) if self.generate_ms > 0 else 0.0

    @property
    def acceptance(self) -> float | None:
        """Share of drafted tokens kept; None when nothing was drafted."""
        return self.accepted_tokens / self.drafted_tokens if self.drafted_tokens else None


@dataclass(frozen=True)
class Finished:
    stats: GenerationStats


@dataclass(frozen=True)
class Failed:
    message: str
    kind: str = "engine"  # engine | overflow | model | scoring


EngineEvent = Loading | Loaded | PrefixReused | StateSaved | PrefillProgress | TokenText | Scored | Finished | Failed
