"""Engine failures with a message a user can act on."""

from __future__ import annotations


class EngineError(RuntimeError):
    """str(error) is one plain line meant for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ModelFileError(EngineError):
    """The model file is not a GGUF llama.cpp can use."""


class EngineCrashed(EngineError):
    """The engine process died; the next request starts a new one."""


class ContextOverflow(EngineError):
    """The prompt does not fit in the context window."""


class ScoringUnsupported(EngineError):
    """The engine cannot read its model's probabilities (a model server that returns no logprobs):
    the caller falls back to a generated decision."""
