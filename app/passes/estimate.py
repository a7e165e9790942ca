"""How long each reading the window offers would take, when a question does not fit the context.

The tokens come from the plan the reading would run (app/passes/service.py: every request's exact
prompt, less what the engine's kept states already hold); the speeds come from what this computer
measured with the model: its last answers (the messages' prefill and generation figures) and the
documents it read ahead (the reading records). No measurement, no number: the estimate then says the
time is unknown rather than guess one from the hardware. Each estimate carries the plan it counted
(app/passes/plans.py): the reading chosen from the estimates is run by it, not planned a second time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.clock import duration_words
from app.passes.plans import Planned


@dataclass(frozen=True)
class Speed:
    """The model's measured speeds on this computer (0: not measured yet)."""

    read_per_s: float = 0.0  # prompt tokens read a second
    write_per_s: float = 0.0  # answer tokens written a second
    answer_tokens: float = 0.0  # an answer's usual length, in tokens (at most the longest allowed)

    @classmethod
    def measured(
        cls,
        read: Sequence[tuple[int, float]],
        written: tuple[int, float],
        answers: int,
        longest_answer: int,
    ) -> Speed:
        """From (tokens, milliseconds) sums: `read` from each source (answers, documents read ahead),
        `written` from the answers, `answers` of them, none counted longer than `longest_answer`."""
        read_tokens, read_ms = sum(t for t, _ in read), sum(ms for _, ms in read)
        written_tokens, write_ms = written
        return cls(
            read_per_s=read_tokens / (read_ms / 1000) if read_tokens > 0 and read_ms > 0 else 0.0,
            write_per_s=written_tokens / (write_ms / 1000) if written_tokens > 0 and write_ms > 0 else 0.0,
            answer_tokens=min(written_tokens / answers, longest_answer) if answers else 0.0,
        )


@dataclass(frozen=True)
class ReadingEstimate:
    """One reading's requests (parts), the prompt tokens they hold, what of that is kept already, and
    the time at this computer's speed. `note`: the reading cannot be done, in words (then no time)."""

    strategy: str  # 'passes' | 'search'
    parts: int = 0  # requests still to ask (a part answered before, by a stopped run, is not asked again)
    prompt_tokens: int = 0  # every part's prompt, added up
    kept_tokens: int = 0  # of them, held by states kept on disk: restored, not read
    answers: int = 0  # answers to write: one per part, and the short one merged from them
    speed: Speed = Speed()
    note: str = ""
    plan: Planned | None = field(default=None, repr=False, compare=False)  # the reading estimated

    @property
    def tokens_to_read(self) -> int:
        return max(self.prompt_tokens - self.kept_tokens, 0)

    @property
    def reading_s(self) -> float | None:
        if self.speed.read_per_s <= 0:
            return None
        return self.tokens_to_read / self.speed.read_per_s

    @property
    def writing_s(self) -> float | None:
        if self.speed.write_per_s <= 0 or self.speed.answer_tokens <= 0:
            return None
        return self.answers * self.speed.answer_tokens / self.speed.write_per_s

    @property
    def seconds(self) -> float | None:
        """Reading and writing, when both were measured."""
        reading, writing = self.reading_s, self.writing_s
        return None if reading is None or writing is None else reading + writing

    def words(self) -> str:
        """'about 6 min on this computer', or why there is no number."""
        if self.note:
            return self.note
        if not self.parts:
            return "answered before: nothing left to read"
        if self.seconds is not None:
            return f"about {duration_words(self.seconds)} on this computer"
        if self.reading_s is not None:
            answers = f"{self.answers} answer{'s' if self.answers != 1 else ''}"
            return f"about {duration_words(self.reading_s)} of reading on this computer, then writing {answers}"
        return "time unknown until Folio has read a document with this model"

    def line(self) -> str:
        """The parts and the time: '5 passes, about 6 min on this computer'."""
        if self.note or not self.parts:
            return self.words()
        parts = f"{self.parts} parts" if self.parts > 1 else "one pass"
        return f"{parts}, {self.words()}"


def estimate(
    strategy: str,
    prompt_tokens: Sequence[int],
    kept_tokens: Sequence[int],
    speed: Speed,
    *,
    plan: Planned | None = None,
) -> ReadingEstimate:
    """The estimate of a reading whose parts hold `prompt_tokens` each, `kept_tokens` of each already
    held by a kept state (a part answered before counts as 0 and 0: it is not asked again)."""
    asked = [i for i, tokens in enumerate(prompt_tokens) if tokens > 0]
    parts = len(asked)
    # Two or more parts are merged by one more answer, written from theirs (read, as short as they are).
    merge = 1 if parts > 1 else 0
    merged_read = round(parts * speed.answer_tokens) if merge else 0
    return ReadingEstimate(
        strategy,
        parts=parts,
        prompt_tokens=sum(prompt_tokens[i] for i in asked) + merged_read,
        # A state as long as its request or longer cannot be the prefix it starts from: not counted.
        kept_tokens=sum(kept_tokens[i] for i in asked if kept_tokens[i] < prompt_tokens[i]),
        answers=parts + merge,
        speed=speed,
        plan=plan,
    )


@dataclass(frozen=True)
class ReadingEstimates:
    """The estimates of the readings offered for one question that does not fit."""

    passes: ReadingEstimate
    search: ReadingEstimate

    def plan(self, strategy: str | None) -> Planned | None:
        """The plan of the reading chosen ('passes' | 'search'; None, pages the user names: not estimated)."""
        chosen = {"passes": self.passes, "search": self.search}.get(strategy or "")
        return chosen.plan if chosen is not None else None
