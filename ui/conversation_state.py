"""What the window knows about the engine's job and the conversation on screen, in one place: the
kind of job the engine is busy with, and the conversation an answer is being written into."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Job(Enum):
    """The kinds of work the window hands the engine (one at a time)."""

    ASK = "ask"
    EXTRACT = "extract"
    COMPARE = "compare"
    NAMES = "names"  # the people and organisations to offer for redaction
    REVIEW = "review"  # a document checked against a playbook

    @property
    def busy(self) -> str:
        """What the engine is busy with, for 'The model is busy with ...'."""
        return {
            Job.ASK: "an answer",
            Job.EXTRACT: "an extraction run",
            Job.COMPARE: "a comparison",
            Job.NAMES: "names to redact",
            Job.REVIEW: "a playbook review",
        }[self]

    @property
    def engine_state(self) -> str:
        """The status bar's engine word as the job starts."""
        return {
            Job.ASK: "loading",
            Job.EXTRACT: "extracting",
            Job.COMPARE: "comparing",
            Job.NAMES: "loading",
            Job.REVIEW: "reviewing",
        }[self]


@dataclass
class ConversationState:
    """The conversation on screen and the answer being written into it."""

    id: int | None = None  # the conversation shown (None: a new one starts with the next question)
    pending_user: int | None = None  # the question being answered, once stored
    selection_changed: bool = False  # the user picked other documents while the answer was written
    regenerating: bool = False  # the answer asks the last question again; the old one stays until it is stored
