"""Where drafted tokens come from: the text already in the context, or the model's own MTP block.

A drafter only guesses; inference.speculative has the model check every guess before it is used,
so a drafter can never change an answer, only how fast it comes.

- `PromptLookup` (every model): when the last few tokens occurred before, in the documents, the
  conversation or the answer so far, it proposes what followed them there. Document answers quote
  the document (clauses, names, amounts), so these guesses are often right.
- `MtpDrafter` (GGUFs that carry multi-token-prediction "nextn" layers, such as Qwen3.5's): the MTP
  block reads the main model's last hidden state and the next token and predicts the token after,
  one step at a time. It runs in a second llama.cpp context whose KV cache (one layer) follows the
  main context position by position, fed with the hidden states the main model computes anyway.

`Drafting` holds both for one engine and keeps them in step with what the context holds.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from inference.llama_native import ContextParams, NativeContext, NativeModel
from inference.tokens import common_prefix

_KEY_BASE = 1 << 20  # token ids are below this (the largest vocabularies have ~262K tokens)
_HOLE = -(1 << 40)  # a position the MTP context never saw (restored from disk, an image)


def _ngram_key(tokens: list[int] | tuple[int, ...]) -> int | None:
    key = 0
    for t in tokens:
        if t < 0:  # an image position: never part of a match
            return None
        key = key * _KEY_BASE + t
    return key


class PromptLookup:
    """Drafts by n-gram lookup over the context's own tokens.

    Two tables: one for the stable prefix (instructions + documents: built once, reused by every
    question on the same documents) and one for what follows it (question, history, answer so far:
    rebuilt per answer, extended token by token). Each maps an n-gram to the position right after
    its most recent occurrence; the longest n-gram that matches wins."""

    name = "lookup"

    def __init__(self, sizes: tuple[int, ...] = (4, 3, 2)) -> None:
        self.sizes = sizes
        self._base: list[int] = []
        self._base_tables: dict[int, dict[int, int]] = {n: {} for n in sizes}
        self._tokens: list[int] = []  # everything indexed: base + tail
        self._tail_tables: dict[int, dict[int, int]] = {n: {} for n in sizes}

    def sync(self, held: list[int], n_stable: int) -> None:
        """Index exactly `held`; its first n_stable tokens are the part later answers share."""
        base = held[:n_stable]
        if base != self._base:
            self._base = list(base)
            self._base_tables = {n: _table(self._base, n) for n in self.sizes}
        self._tokens = list(self._base)
        self._tail_tables = {n: {} for n in self.sizes}
        self.extend(held[n_stable:])

    def extend(self, tokens: list[int]) -> None:
        for token in tokens:
            self._tokens.append(token)
            end = len(self._tokens) - 1  # the n-gram before `token` is now followed by it
            for n in self.sizes:
                if end >= n:
                    key = _ngram_key(self._tokens[end - n : end])
                    if key is not None:
                        self._tail_tables[n][key] = end

    def propose(self, pending: int, limit: int) -> tuple[list[int], int, int]:
        """Up to `limit` tokens expected after the context plus `pending`, the n-gram size matched and
        where in the context the guess was copied from."""
        if limit <= 0:
            return [], 0, -1
        context = self._tokens
        for n in self.sizes:
            if len(context) + 1 < n:
                continue
            key = _ngram_key([*context[len(context) - n + 1 :], pending])
            if key is None:
                continue
            start = self._tail_tables[n].get(key)
            if start is None:
                start = self._base_tables[n].get(key)
            if start is None:
                continue
            # The continuation: what followed, up to the end of what is known (pending included).
            draft = context[start : start + limit]
            if len(draft) < limit and start + len(draft) == len(context):
                draft = [*draft, pending][:limit]
            draft = _until_negative(draft)
            if draft:
                return draft, n, start
        return [], 0, -1


def _until_negative(tokens: list[int]) -> list[int]:
    for i, t in enumerate(tokens):
        if t < 0:
            return tokens[:i]
    return tokens


def _table(tokens: list[int], n: int) -> dict[int, int]:
    """n-gram -> position after its last occurrence, built with numpy (a 262K-token document in ~0.1 s)."""
    import numpy as np

    if len(tokens) <= n:
        return {}
    arr = np.asarray(tokens, dtype=np.int64)
    m = len(arr) - n  # n-grams that have a following token
    keys = np.zeros(m, dtype=np.int64)
    valid = np.ones(m, dtype=bool)
    for i in range(n):
        column = arr[i : i + m]
        keys = keys * _KEY_BASE + np.where(column >= 0, column, 0)
        valid &= column >= 0
    positions = np.arange(n, n + m, dtype=np.int64)
    return dict(zip(keys[valid].tolist(), positions[valid].tolist(), strict=True))


class MtpDrafter:
    """Drafts with the model's multi-token-prediction block, in a context of its own."""

    name = "mtp"

    def __init__(self, model: NativeModel, target: NativeContext, params: ContextParams, abort: Any = None) -> None:
        import numpy as np

        self.target = target
        mtp_params = dataclasses.replace(params, mtp=True, n_rs_seq=0, n_outputs=1)
        self.ctx = NativeContext(model, mtp_params, abort=abort)  # Stop ends its decodes too
        target.output_hidden(True, every_token=True)
        self.ctx.output_hidden(True, every_token=False)
        self._zero = np.zeros(model.n_embd, dtype=np.float32)
        self._mirror: list[int] = []  # the token at each position the MTP context holds (_HOLE: none)
        self._h_last: Any = self._zero  # the main model's hidden state at the last position held
        self._kept: dict[int, Any] = {}  # hidden state at the end of a stable prefix, for restores
        self._stable = 0

    def close(self) -> None:
        self.target.output_hidden(False, every_token=True)
        self.ctx.close()

    def sync(self, held: list[int], n_stable: int) -> None:
        """Follow the main context, which now holds `held`: keep the positions both share.

        Positions the main context restored without computing them (a snapshot from disk) become a
        hole here: drafts get worse around it, never wrong (every draft is checked)."""
        n = common_prefix(self._mirror, held)
        if n < len(self._mirror):
            self.ctx.trim(n)
            del self._mirror[n:]
            self._kept = {p: h for p, h in self._kept.items() if p <= n}
            self._h_last = self._kept.get(n, self._zero)
        if n < len(held):
            self.skipped(len(held) - n)
        self._stable = n_stable

    def decoded(self, tokens: list[int], pos0: int) -> None:
        """The main context just evaluated `tokens` at pos0.. (rows 0.. of its last batch)."""
        import numpy as np

        if pos0 > len(self._mirror):  # not expected: out of step only makes drafts worse, so follow
            self.skipped(pos0 - len(self._mirror))
        elif pos0 < len(self._mirror):
            self.ctx.trim(pos0)
            del self._mirror[pos0:]
            self._h_last = self._zero
        rows = self.target.hidden(0, len(tokens))
        # Each token is paired with the hidden state of the position before it (what predicted it).
        inputs = np.vstack([self._h_last[None, :], rows[:-1]])
        if self.ctx.decode_with_hidden(tokens, inputs, pos0, logits_last=False) != 0:
            self.skipped(len(tokens))  # the MTP context is full: these positions stay a hole
            return
        self._mirror += tokens
        self._h_last = rows[-1]
        if pos0 + len(tokens) == self._stable:
            self._kept = {self._stable: self._h_last}

    def skipped(self, n_pos: int) -> None:
        """Positions filled without text (an image): the MTP context leaves them out."""
        self._mirror += [_HOLE] * n_pos
        self._h_last = self._zero

    def propose(self, pending: int, limit: int) -> list[int]:
        """Greedy drafts after `pending`, one MTP step per token; the MTP context is left as it was."""
        import numpy as np

        pos = len(self._mirror)
        token, hidden = pending, self._h_last
        out: list[int] = []
        try:
            for i in range(limit):
                if self.ctx.decode_with_hidden([token], hidden[None, :], pos + i, logits_last=True) != 0:
                    break
                token = int(np.argmax(self.ctx.logits()))
                out.append(token)
                hidden = self.ctx.hidden(-1)[0]
        finally:
            self.ctx.trim(pos)
        return out
