"""What the engine is doing, in words a user reads: one `Progress` type for chat, extraction,
comparison and reading alike, made from the engine's events."""

from __future__ import annotations

from dataclasses import dataclass

from inference.events import EngineEvent, Loaded, Loading, PrefillProgress, PrefixReused


@dataclass(frozen=True)
class Progress:
    """What the engine is doing, for chat and extraction alike: a status line, or (total > 0) how
    far reading the prompt has come."""

    text: str = ""
    done: int = 0
    total: int = 0
    tokens_per_s: float = 0.0
    eta_s: float = 0.0
    reused: int = 0  # tokens of the documents restored, not read (a status line about reuse)

    @property
    def reading(self) -> bool:
        return self.total > 0


def progress_of(event: EngineEvent, label: str) -> Progress | None:
    """The user-facing progress for an engine event, or None for the answer's own events."""
    if isinstance(event, Loading):
        return Progress(f"loading {label}")
    if isinstance(event, Loaded):
        return Progress(f"model ready in {event.seconds:.1f} s (context {event.n_ctx:,} tokens)")
    if isinstance(event, PrefixReused):
        where = _REUSED_FROM.get(event.source, event.source)
        text = f"documents already read: {event.tokens:,} tokens reused ({where}, {event.seconds:.2f} s)"
        return Progress(text, reused=event.tokens)
    if isinstance(event, PrefillProgress):
        return Progress("", event.done, event.total, event.tokens_per_s, event.eta_s)
    return None


_REUSED_FROM = {
    "context": "still in the model's context",
    "memory": "snapshot in memory",
    "disk": "snapshot on disk",
    "documents": "the documents read before, from disk",
    "checkpoint": "continuing an unfinished reading",
}
