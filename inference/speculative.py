"""Write an answer token by token, or several tokens per step when a drafter guesses them right.

Speculative decoding, exact. A drafter (inference.drafters) guesses the next tokens d1..dk after the
pending token t; the model evaluates [t, d1..dk] in one batch, which gives its own next-token
logits after each of them. Walking the rows in order, the sampler (the full chain: grammar,
top-k, presence penalty, top-p, min-p, temperature, then a draw; or greedy) draws a token from each
row, exactly as a plain run draws from each step's logits. A drawn token equal to the draft is kept
and the walk goes on; the first one that differs is kept instead of the draft and ends the step,
and the drafts after it are taken back out of the context. For a deterministic draft x this is the
standard accept/reject rule: x survives with probability p(x) under the chain's final
distribution, and on rejection the token comes from p with x removed, renormalised. So the answer
follows the model's distribution unchanged; greedy answers are the plain run's tokens, and with the
same seed even sampled answers are, since every kept token costs the sampler one draw as before.

One caveat, measured: llama.cpp's CPU kernels round differently for a batch of several tokens than
for one (other matrix routines; row results even depend on the batch length), so the logits of a
checked row can differ from a one-token decode: by ~1e-5 with F32 weights (tiny qwen35), by up to
about one logit with Gemma 3 Q4_K_M. llama.cpp's own speculative server has the same property
(ggml-org/llama.cpp#25618). Exactness is therefore: every token is the model's own draw, by the
same sampler and RNG, from the logits llama.cpp computed for its position; a plain run can differ
only where two candidates are within that rounding. With n_ubatch=1 every checked row is computed
alone, equals a one-token decode bit for bit, and answers are identical (tests/e2e/test_speculative.py
proves it that way, and at full batch speed shows greedy answers part only at such near-ties).

Taking drafts back: attention caches drop the rejected positions; recurrent layers (Qwen3.5's
Gated DeltaNet) cannot be rewound, so the context keeps one recurrent-state snapshot per token of
its last batch (llama.cpp's `n_rs_seq`, as its own speculative server does for qwen35) and
removing positions selects the snapshot. Drafts are never longer than that.

`Pace` decides whether drafting pays: a batch of k+1 tokens costs far more than one token on a CPU.
"""

from __future__ import annotations

import codecs
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from inference.drafters import MtpDrafter, PromptLookup
from inference.errors import EngineError
from inference.events import EngineEvent, TokenText
from inference.llama_native import NativeContext, NativeModel, NativeSampler

DEFAULT_DRAFT_TOKENS = 8


@dataclass
class DraftCounts:
    drafted: int = 0  # drafted tokens the model checked
    accepted: int = 0  # of those, the ones it would have written itself (kept in the answer)
    by_kind: dict[str, tuple[int, int]] = field(default_factory=dict)  # kind -> (drafted, accepted)

    def add(self, kind: str, drafted: int, accepted: int) -> None:
        self.drafted += drafted
        self.accepted += accepted
        d, a = self.by_kind.get(kind, (0, 0))
        self.by_kind[kind] = (d + drafted, a + accepted)


@dataclass
class _Costs:
    """Decode seconds of a batch of n >= 2 tokens as a + b*n, fitted to the fastest of the recent
    times of each batch length. The fastest, because the machine is shared: another program's work
    only ever adds time, so the fastest time is the decode's own cost, and a length timed once (a
    probe) looks dearer, not cheaper, than it is: drafting is never switched on by noise."""

    samples: dict[int, deque[float]] = field(default_factory=dict)

    def add(self, n: int, seconds: float) -> None:
        self.samples.setdefault(n, deque(maxlen=16)).append(seconds)

    def line(self, single: float) -> tuple[float, float] | None:
        """(a, b), or None before any batch was timed. With one batch length seen so far, the line
        runs through it and through the one-token decode (`single`): a guessed slope was wrong by
        4x on this CPU, where a batch costs about one decode per token, and would be on a GPU,
        where it costs about one decode in all."""
        points = [(n, min(times)) for n, times in self.samples.items() if times]
        if not points:
            return None
        if len(points) == 1:
            (n0, t0) = points[0]
            b = max(0.0, (t0 - single) / (n0 - 1))
            return t0 - b * n0, b
        count = len(points)
        mean_n = sum(n for n, _ in points) / count
        mean_t = sum(t for _, t in points) / count
        spread = sum((n - mean_n) ** 2 for n, _ in points)
        b = max(0.0, sum((n - mean_n) * (t - mean_t) for n, t in points) / spread)
        return mean_t - b * mean_n, b


@dataclass
class Pace:
    """How many drafted tokens are worth checking, from measurements rather than assumptions.

    Checking k drafts costs one decode of k+1 tokens plus the drafting, and pays when enough of them
    are accepted. Pace keeps the time of a one-token decode, a line fitted to the time of batches,
    and per kind of draft the rate at which drafted tokens are accepted; it picks the length with
    the most expected tokens per second, or none when a plain step is faster.

    Nothing is drafted on a guess. What a batch costs differs 10x between machines (on a 2-core
    CPU a batch of 3 cost 2.9 one-token decodes; on a GPU it costs about one), so until a batch has
    been timed here, drafting is off. The first batch is a probe, taken only when the guesses look
    good enough to pay on a fast machine and paid from a credit of PROBE_SHARE of a decode per
    plain token (counted in tokens, not seconds, so a busy machine's noise cannot buy probes). When
    the line then says no, a new probe comes after REPROBE_AFTER plain tokens at the earliest
    (twice as long after each probe that changed nothing), paid the same way. So drafting costs at
    most about PROBE_SHARE where it never pays.
    How often prompt-lookup guesses are right is learnt for free (Drafting.propose judges each
    guess it did not check against the tokens written next), so a quote that starts late in an
    answer is noticed without checking anything."""

    max_draft: int
    singles: deque[float] = field(default_factory=lambda: deque(maxlen=64))  # recent one-token decodes, seconds
    fit: _Costs = field(default_factory=_Costs)
    acceptance: dict[str, float] = field(default_factory=dict)
    draft_s: dict[str, float] = field(default_factory=dict)  # seconds to draft one token, by source
    credit: float = 0.0  # drafted tokens probes may still check: PROBE_SHARE per plain token, less probes
    plain_since_batch: int = 0  # plain tokens since a batch was last timed
    probing: bool = False  # the length last returned is a probe, paid from the credit
    probes: int = 0
    reprobe_after: int = 0  # plain tokens before the next probe when the line says no (0: REPROBE_AFTER)

    PRIOR_ACCEPTANCE: ClassVar[dict[str, float]] = {
        "lookup+": 0.9,
        "lookup4": 0.8,
        "lookup3": 0.7,
        "lookup2": 0.5,
        "mtp": 0.6,
    }
    FAST_BATCH_SLOPE = 0.1  # a fast machine: each extra token in a batch costs a tenth of a decode
    PROBE_SHARE = 0.02
    PROBE_DRAFTS = 2
    REPROBE_AFTER = 256  # doubled after each probe that changed nothing, up to REPROBE_MAX
    REPROBE_MAX = 4096
    LEARN = 0.15

    @property
    def single_s(self) -> float:
        """A one-token decode, seconds: the fastest recent one (see _Costs on why the fastest)."""
        return min(self.singles) if self.singles else 0.0

    def decoded(self, n: int, seconds: float) -> None:
        if n == 1:
            self.singles.append(seconds)
            self.credit += self.PROBE_SHARE
            self.plain_since_batch += 1
            self.probing = False  # a probe whose drafts the grammar refused was never taken
            return
        self.fit.add(n, seconds)
        self.plain_since_batch = 0
        if self.probing:
            self.credit -= n - 1  # at worst each checked draft cost one decode
            self.probing = False

    def drafted(self, source: str, n: int, seconds: float) -> None:
        if n:
            per = seconds / n
            old = self.draft_s.get(source)
            self.draft_s[source] = per if old is None else old * 0.8 + per * 0.2

    def checked(self, kind: str, drafted: int, accepted: int) -> None:
        """Per-token acceptance, geometric: `accepted` successes, then one failure if any draft was refused."""
        a = self.acceptance.get(kind, self.PRIOR_ACCEPTANCE.get(kind, 0.5))
        for _ in range(accepted):
            a += self.LEARN * (1 - a)
        if accepted < drafted:
            a -= self.LEARN * a
        self.acceptance[kind] = a

    def length(self, kind: str, available: int) -> int:
        """Drafted tokens to check now (0: decode one token plainly)."""
        limit = min(available, self.max_draft)
        if limit <= 0 or not self.single_s:  # no plain step timed yet: nothing to compare with
            return 0
        family = kind.rstrip("+0123456789")
        a = min(self.acceptance.get(kind, self.PRIOR_ACCEPTANCE.get(kind, 0.5)), 0.999)
        per_draft = self.draft_s.get(family, 0.0)
        line = self.fit.line(self.single_s)
        wait = self.reprobe_after or self.REPROBE_AFTER
        if line is not None:
            best = self._best(a, line, per_draft, limit)
            if best:
                self.reprobe_after = 0
            if best or self.plain_since_batch < wait:
                return best
        # Not timed here yet, or long ago and it did not pay: probe, if it could pay at all and the
        # credit covers the worst case (a batch that costs one decode per token).
        slope = self.FAST_BATCH_SLOPE * self.single_s
        fast = (self.single_s - slope, slope)
        if family != "lookup":  # MTP guesses are only scored when checked: give them their chance again
            a = max(a, self.PRIOR_ACCEPTANCE.get(kind, 0.5))
        k = min(self._best(a, fast, per_draft, limit), self.PROBE_DRAFTS)
        if not k or self.credit < k:
            return 0
        self.probing = True
        self.probes += 1
        if line is not None:  # a probe again: the next one waits twice as long, unless drafting starts to pay
            self.reprobe_after = min(wait * 2, self.REPROBE_MAX)
        return k

    def idle_note(self) -> str:
        """Why nothing was drafted, in words a user can act on."""
        line = self.fit.line(self.single_s) if self.single_s else None
        if line is None:
            return "no drafts yet: Folio first times what checking guesses costs on this computer"
        if not self._best(self.PRIOR_ACCEPTANCE["lookup+"], line, 0.0, self.max_draft):  # not even for quotes
            cost = (line[0] + line[1] * 3) / self.single_s
            return f"no drafts: checking 2 guesses costs {cost:.1f}x writing one token on this computer"
        return "no drafts: no guess was likely enough to pay"

    def _best(self, a: float, line: tuple[float, float], per_draft: float, limit: int) -> int:
        best, best_rate = 0, 1.0 / self.single_s
        for k in range(1, limit + 1):
            expected = (1 - a ** (k + 1)) / (1 - a)  # the pending token plus the accepted run
            rate = expected / (line[0] + line[1] * (k + 1) + per_draft * k)
            if rate > best_rate:
                best, best_rate = k, rate
        return best


class Drafting:
    """The drafters of one engine, kept in step with what its context holds, and their pace."""

    def __init__(self, max_draft: int, mtp: MtpDrafter | None = None) -> None:
        self.lookup = PromptLookup()
        self.mtp = mtp
        self.pace = Pace(max_draft)
        self._run_end = -1  # where in the context the next token of an accepted lookup run lies
        self._shadow: _Shadow | None = None  # a lookup guess not checked, judged by the tokens written next

    def close(self) -> None:
        if self.mtp is not None:
            self.mtp.close()
            self.mtp = None

    # -- while the prompt is read (only the MTP context follows it position by position) ----------
    def follow(self, held: list[int], n_stable: int) -> None:
        """The context was brought to hold `held` (its first n_stable tokens: the documents' prefix)."""
        if self.mtp is not None:
            self.mtp.sync(held, n_stable)

    def read(self, tokens: list[int], pos0: int) -> None:
        if self.mtp is not None:
            self.mtp.decoded(tokens, pos0)

    def read_image(self, n_pos: int) -> None:
        if self.mtp is not None:
            self.mtp.skipped(n_pos)

    # -- while the answer is written ------------------------------------------------------------------
    def begin(self, held: list[int], n_stable: int) -> None:
        self.lookup.sync(held, n_stable)
        self._run_end = -1
        self._shadow = None

    def decoded(self, tokens: list[int], pos0: int) -> None:
        """The context evaluated `tokens` at pos0.. in its last batch, and keeps them."""
        self.lookup.extend(tokens)
        self.read(tokens, pos0)

    def propose(self, pending: int, limit: int) -> tuple[str, list[int]]:
        """(kind of draft, tokens) to check after `pending`; no tokens when drafting does not pay."""
        self._judge_shadow(pending)
        if limit <= 0:
            return "", []
        draft, n, start = self.lookup.propose(pending, limit)
        if draft:
            kind = "lookup+" if start == self._run_end else f"lookup{n}"
            k = self.pace.length(kind, len(draft))
            if k:
                self._shadow = None
                self._run_end = start + k + 1  # if all k are accepted, the next token follows there
                return kind, draft[:k]
            if self._shadow is None:
                self._shadow = _Shadow(kind, draft, start)
        if self.mtp is not None:
            k = self.pace.length("mtp", limit)
            if k:
                self._shadow = None
                began = time.perf_counter()
                draft = self.mtp.propose(pending, k)
                self.pace.drafted("mtp", len(draft), time.perf_counter() - began)
                return "mtp", draft
        return "", []

    def _judge_shadow(self, written: int) -> None:
        """`written` is the token the model wrote after the last one: it scores the unchecked guess
        exactly as a check would have (the model keeps a draft only when it draws the same token)."""
        shadow = self._shadow
        if shadow is None:
            return
        if written == shadow.draft[shadow.matched]:
            shadow.matched += 1
            if shadow.matched < len(shadow.draft):
                return
            self._run_end = shadow.start + len(shadow.draft)  # `written` ended it: the run goes on from there
        self.pace.checked(shadow.kind, len(shadow.draft), shadow.matched)
        self._shadow = None

    def idle_note(self) -> str:
        return self.pace.idle_note()

    def checked(self, kind: str, drafted: int, accepted: int) -> None:
        self.pace.checked(kind, drafted, accepted)
        if kind.startswith("lookup") and accepted < drafted:
            self._run_end = -1


@dataclass
class _Shadow:
    kind: str
    draft: list[int]
    start: int  # where in the context the guess was copied from
    matched: int = 0  # its tokens the model has written so far, in order


@dataclass
class AnswerWriter:
    """Samples an answer into a context that holds the prompt (`held`, updated in place)."""

    ctx: NativeContext
    model: NativeModel
    sampler: NativeSampler
    held: list[int]
    cancelled: Callable[[], bool]
    failed: Callable[[int], None]  # a decode failed: the engine brings `held` back in line (or raises)
    lost: Callable[[], None]  # the context no longer matches `held` at all: the engine empties it
    drafting: Drafting | None = None
    rollback_limit: int = 1 << 30  # the most positions the context can take back (recurrent: n_rs_seq)
    counts: DraftCounts = field(default_factory=DraftCounts)

    def run(self, max_tokens: int, emit: Callable[[EngineEvent], None], first: Callable[[], None]) -> tuple[int, str]:
        """(tokens written, stop reason: 'eos' | 'length' | 'cancelled')."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

        def say(tokens: list[int], final: bool = False) -> None:
            text = "".join(decoder.decode(self.model.piece(t)) for t in tokens)
            if final:
                text += decoder.decode(b"", final=True)
            if text:
                emit(TokenText(text))

        if max_tokens <= 0:
            return 0, "length"
        if self.cancelled():
            return 0, "cancelled"
        token = self.sampler.sample(self.ctx)
        first()
        count = 0
        while True:
            if self.model.is_eog(token):
                say([], final=True)
                return count, "eos"
            count += 1
            say([token])
            if count >= max_tokens:
                return count, "length"
            if self.cancelled():
                return count, "cancelled"
            kind, drafts = self._drafts(token, max_tokens - count)
            pos = len(self.held)
            batch = [token, *drafts]
            began = time.perf_counter()
            rc = self.ctx.decode(batch, pos, want_logits=True, all_logits=bool(drafts))
            if rc != 0:
                self.failed(rc)
                return count, "cancelled"
            if self.drafting is not None:
                self.drafting.pace.decoded(len(batch), time.perf_counter() - began)
            self.held.extend(batch)
            if not drafts:
                if self.drafting is not None:
                    self.drafting.decoded(batch, pos)
                token = self.sampler.sample(self.ctx)
                continue
            # Walk the rows: row i holds the model's logits for the position after batch[i].
            kept: list[int] = []
            stop = ""
            for i in range(len(drafts) + 1):
                drawn = self.sampler.sample(self.ctx, i)
                if i == len(drafts) or drawn != drafts[i]:
                    token = drawn
                    break
                if self.model.is_eog(drawn):
                    stop = "eos"
                    break
                kept.append(drawn)
                count += 1
                if count >= max_tokens:
                    stop = "length"
                    break
            self._settle(kind, pos, batch, len(drafts), kept)
            say(kept, final=stop == "eos")
            if stop:
                return count, stop

    def _drafts(self, pending: int, room: int) -> tuple[str, list[int]]:
        if self.drafting is None:
            return "", []
        kind, drafts = self.drafting.propose(pending, min(room, self.rollback_limit))
        # Drafts the answer format's grammar refuses could never be drawn: drop them before checking.
        return kind, drafts[: self.sampler.grammar_allows(drafts)]

    def _settle(self, kind: str, pos: int, batch: list[int], drafted: int, kept: list[int]) -> None:
        """Keep the pending token and the accepted drafts; take the rest back out of the context."""
        assert self.drafting is not None
        keep = 1 + len(kept)
        if keep < len(batch):
            if not self.ctx.trim(pos + keep):
                self.lost()
                raise EngineError("llama.cpp could not take back drafted tokens; ask again")
            del self.held[pos + keep :]
        self.drafting.decoded(batch[:keep], pos)
        self.drafting.checked(kind, drafted, len(kept))
        self.counts.add(kind, drafted, len(kept))
