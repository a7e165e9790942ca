"""The in-process llama.cpp engine: read the documents once, answer many questions on top of them.

It runs inside the engine process (inference.engine_process); nothing else touches llama.cpp.

What the context holds is tracked token by token (`_held`), together with where llama.cpp's
micro-batches ended while reading it (`_cuts`). A prompt is always read in the same micro-batches:
from 0 up to the end of the first document, from there to the end of the next, and so on to the end
of the prefix (instructions + documents), then from there to the end. Each document is tokenized
apart (inference.prompt marks where each ends), so the tokens and micro-batches up to the end of a
document do not depend on the documents after it. So a state that stops at a cut both readings
share is bit-identical to a fresh reading, and only the tokens after it are evaluated. In order of
preference:
- attention-only memory (plain transformers): keep the longest shared part, drop the rest;
- recurrent state (hybrid qwen35, Mamba...) cannot be rolled back: if the context holds exactly a
  shared part, continue after it; otherwise restore the recurrent part of the state copied to
  memory right after the prefix (tens of MB) and trim the attention KV cache back to the prefix;
- a snapshot file of the prefix, written when it was first read, loaded by llama.cpp itself;
- a state file of part of the prefix, the longest that checks out: where one of its first documents
  ends (written when a selection starting with those documents was read: a question about {A, B}
  after A was read reads only B), or a checkpoint written during an earlier read that did not finish
  (quit, crash, kill -9, cancel); the read continues after it.
Checkpoints are written at chunk ends of the prefix, every `checkpoint_s` seconds of reading (and
never more often than 20 times the last save took, so saving costs at most ~5% of the reading),
and on cancel; the chunk ends of a fresh read are the same, so a resumed read is bit-identical.
The tests prove equivalence on logits: restored == fresh, bit for bit.

Scanned pages and keyframes (image parts) go through the vision projector (inference.vision) into
the same context; an image fills its KV cells with one call and counts as one piece of the layout.

Answers are written by inference.speculative: token by token, or several per step when drafted
tokens (inference.drafters) check out. Drafts the model refuses are taken back out of the context,
so `_held` stays true; a context that must take back recurrent state keeps per-token snapshots of
its last batch, which also changes where llama.cpp ends micro-batches (`_keep_tail`).
"""

from __future__ import annotations

import bisect
import hashlib
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inference import llama_native
from inference.chat_format import PromptPart
from inference.drafters import MtpDrafter
from inference.engine_api import EngineConfig, GenerateRequest, Sampling, TokenCount
from inference.errors import ContextOverflow, EngineError
from inference.events import (
    EngineEvent,
    Finished,
    GenerationStats,
    PrefillProgress,
    PrefixReused,
    Scored,
    StateSaved,
)
from inference.llama_native import ContextParams, NativeContext, NativeModel, NativeSampler, lib
from inference.speculative import AnswerWriter, DraftCounts, Drafting
from inference.state_cache import StateStore, prefix_keys
from inference.tokens import common_prefix
from inference.vision import (
    ImagePiece,
    Piece,
    PreparedPrompt,
    Vision,
    VisionEvalError,
    estimate_image_tokens,
    has_images,
    prepare,
)

__all__ = ["EngineConfig", "GenerateRequest", "LocalEngine", "Sampling", "run_generation"]

MIN_ANSWER_TOKENS = 16
CHECKPOINT_COST_SHARE = 0.05  # at most this share of reading time goes into writing checkpoints
_DECODE_ABORTED = 2
_DECODE_NO_SLOT = 1


@dataclass
class _RecurrentSnapshot:
    n_tokens: int
    data: Any  # ctypes byte array from llama_state_seq_get_data_ext(PARTIAL_ONLY)


@dataclass(frozen=True)
class Prompt:
    """A prompt ready to read: text runs and images in order, one key per position it takes."""

    pieces: list[Piece]
    keys: list[int]  # token ids; an image contributes ids derived from its file, one per position
    n_prefix: int  # positions taken by the prefix (instructions + documents)
    prefix_cells: int  # KV cells the prefix fills (an M-RoPE image fills more cells than positions)
    cells: int
    prefix_has_images: bool
    ends: tuple[int, ...] = ()  # positions where a document ends inside the prefix (its last is n_prefix)

    @property
    def stops(self) -> list[int]:
        """Positions no reading chunk straddles: each document's end and the end of the prefix. The
        state at each is kept, and a reading of a prompt that shares the text up to one splits it into
        the same micro-batches up to there, so that state is bit-identical to a fresh reading's."""
        if not self.n_prefix:
            return []
        return sorted({end for end in self.ends if 0 < end < self.n_prefix} | {self.n_prefix})


class LocalEngine:
    def __init__(self, config: EngineConfig, cancelled: Callable[[], bool]) -> None:
        L = lib()
        self._cancelled = cancelled
        # Checked by llama.cpp inside a decode, so a long prefill chunk stops promptly too.
        self._abort_cb = L.ggml_abort_callback(lambda _data: bool(self._cancelled()))
        self.model: NativeModel | None = None
        self.ctx: NativeContext | None = None
        self.config: EngineConfig | None = None
        self.store: StateStore | None = None
        self._held: list[int] = []
        self._cuts: list[int] = []  # where micro-batches ended while reading what `_held` holds
        self._snapshot: _RecurrentSnapshot | None = None
        self._drafting: Drafting | None = None
        self._prefix_memo: OrderedDict[str, PreparedPrompt] = OrderedDict()
        self.vision: Vision | None = None
        self._model_identity = ""
        self.last_reuse: tuple[int, str] = (0, "")
        self._tags: tuple[str, ...] = ()  # the running request's prefix_tags, for its snapshot record
        self._document_tags: tuple[tuple[str, ...], ...] = ()  # and per document (GenerateRequest)
        self._checkpoints: list[str] = []  # checkpoints of the prefix being read: deleted when it is read
        try:
            self.configure(config)
        except BaseException:
            self.close()  # free the weights of a half-made engine now, not at garbage collection
            raise

    # -- lifecycle -----------------------------------------------------------------------------------
    def configure(self, config: EngineConfig) -> None:
        """Apply a configuration; the weights stay loaded when only the context changes."""
        if self.model is None or not config.same_model(self.config):
            self.close()
            self.model = NativeModel(config.model_path, n_gpu_layers=config.n_gpu_layers, load_mtp=config.wants_mtp)
            self._prefix_memo.clear()
            self._model_identity = config.model_id or _file_identity(config.model_path)
        if self.vision is None or self.config is None or self.config.mmproj_path != config.mmproj_path:
            self._close_vision()
            if config.mmproj_path:
                self.vision = Vision(
                    self.model.ptr,
                    config.mmproj_path,
                    n_threads=config.n_threads,
                    flash_attn=config.flash_attn,
                    log_callback=llama_native.log_callback(),
                )
            self._prefix_memo.clear()  # image sizes depend on the projector
        drafts = config.draft_tokens
        params = ContextParams(
            n_ctx=config.n_ctx,
            n_batch=config.n_batch,
            n_ubatch=config.n_ubatch,
            n_threads=config.n_threads,
            kv_type=config.kv_type,
            flash_attn=config.flash_attn,
            n_outputs=drafts + 1,
            # Drafts refused by the model are taken back; recurrent state needs a snapshot per token for it.
            n_rs_seq=max(0, min(drafts, config.n_ubatch - 2)) if self.model.is_recurrent else 0,
        )
        if self.ctx is None or self.ctx.params != params:
            self._close_context()
            self._held, self._cuts, self._snapshot = [], [], None
            self.ctx = NativeContext(self.model, params, abort=self._abort_cb)
            self._drafting = self._make_drafting(params)
        self.store = StateStore(config.state_cache_dir, config.state_cache_bytes) if config.state_cache_dir else None
        self.config = config

    @property
    def n_ctx(self) -> int:
        assert self.ctx is not None
        return self.ctx.n_ctx

    @property
    def memory_report(self) -> dict[str, int]:
        """Buffer sizes llama.cpp reported for this model and its contexts (with the MTP one), in bytes."""
        assert self.model is not None and self.ctx is not None
        report = {**self.model.buffers, **self.ctx.buffers}
        mtp = self._drafting.mtp if self._drafting is not None else None
        for kind, size in (mtp.ctx.buffers if mtp is not None else {}).items():
            report[kind] = report.get(kind, 0) + size
        return report

    def forget(self) -> None:
        """Empty the context and the in-memory snapshot (snapshot files stay)."""
        if self.ctx is not None:
            self._clear()

    def _make_drafting(self, params: ContextParams) -> Drafting | None:
        assert self.model is not None and self.ctx is not None
        if params.n_outputs <= 1:
            return None
        if self.model.is_recurrent and self.ctx.n_rs_seq == 0:
            return None  # llama.cpp keeps no rollback snapshots for this architecture: no drafting
        mtp = None
        if self.model.n_layer_nextn > 0:
            try:
                mtp = MtpDrafter(self.model, self.ctx, params, abort=self._abort_cb)
            except EngineError:
                mtp = None  # no memory for the MTP context: draft from the context alone
        return Drafting(self._rollback_limit(params.n_outputs - 1), mtp)

    def _rollback_limit(self, drafts: int) -> int:
        assert self.model is not None and self.ctx is not None
        return min(drafts, self.ctx.n_rs_seq) if self.model.is_recurrent else drafts

    def _keep_tail(self) -> int:
        """llama.cpp keeps the last n_rs_seq + 1 tokens of a batch in one micro-batch (rollback snapshots)."""
        assert self.ctx is not None
        return self.ctx.n_rs_seq + 1 if self.ctx.n_rs_seq else 0

    def _close_context(self) -> None:
        if self._drafting is not None:
            self._drafting.close()  # the MTP context follows the main one: it goes first
            self._drafting = None
        if self.ctx is not None:
            self.ctx.close()
            self.ctx = None

    def _close_vision(self) -> None:
        if self.vision is not None:
            self.vision.close()
            self.vision = None

    def close(self) -> None:
        self._close_vision()  # the projector refers to the text model: free it first
        self._close_context()
        if self.model is not None:
            self.model.close()
            self.model = None
        self._held, self._cuts, self._snapshot = [], [], None

    # -- tokens -------------------------------------------------------------------------------------
    def tokenize(self, parts: list[PromptPart], *, first: bool = True) -> list[int]:
        assert self.model is not None
        tokens: list[int] = []
        for i, part in enumerate(parts):
            # Untrusted content is tokenized with special-token parsing off: '<|im_end|>' in a PDF
            # becomes ordinary text tokens, never a turn boundary.
            tokens += self.model.tokenize(part.text, add_special=first and i == 0, parse_special=part.special)
        return tokens

    def prompt(self, parts: list[PromptPart], prefix_parts: int) -> Prompt:
        """Tokens and measured images of the prompt, split at the prefix (instructions + documents).

        The prefix's pieces are remembered, so a follow-up does not re-tokenize a 262K-token document."""
        assert self.model is not None
        prefix, suffix = parts[:prefix_parts], parts[prefix_parts:]
        memo_key = _parts_digest(prefix)
        prepared = self._prefix_memo.get(memo_key)
        if prepared is None:
            prepared = prepare(prefix, _encoder(self.model, True), self.vision)
            self.adopt_prefix(memo_key, prepared.pieces, prepared.ends)
        else:
            self._prefix_memo.move_to_end(memo_key)
        head = prepared.pieces
        tail = prepare(suffix, _encoder(self.model, not prefix), self.vision).pieces
        head_keys = _keys(head)
        return Prompt(
            pieces=head + tail,
            keys=head_keys + _keys(tail),
            n_prefix=len(head_keys),
            prefix_cells=_cells(head),
            cells=_cells(head) + _cells(tail),
            prefix_has_images=any(isinstance(p, ImagePiece) for p in head),
            ends=prepared.ends,
        )

    def adopt_prefix(self, key: str, pieces: list[Piece], ends: tuple[int, ...] = ()) -> None:
        """Remember a prefix's pieces (and where its documents end) under its `_parts_digest`, e.g.
        tokens counted before the load with the same file's vocabulary, so the first question does not
        tokenize the documents again."""
        self._prefix_memo[key] = PreparedPrompt(pieces, ends)
        self._prefix_memo.move_to_end(key)
        while len(self._prefix_memo) > 4:
            self._prefix_memo.popitem(last=False)

    def prompt_tokens(self, parts: list[PromptPart], prefix_parts: int) -> tuple[list[int], int]:
        """The prompt's keys (token ids for text) and how many belong to the prefix."""
        p = self.prompt(parts, prefix_parts)
        return p.keys, p.n_prefix

    def count(self, parts: list[PromptPart], prefix_parts: int) -> TokenCount:
        """KV cells the prompt fills; images are estimated from their size until a projector is loaded."""
        if self.vision is None and has_images(parts):
            assert self.model is not None
            return count_parts(self.model, parts, prefix_parts)
        p = self.prompt(parts, prefix_parts)
        return TokenCount(p.cells, p.prefix_cells)

    # -- generation ----------------------------------------------------------------------------------
    def generate(self, request: GenerateRequest, emit: Callable[[EngineEvent], None]) -> GenerationStats:
        assert self.ctx is not None
        own = self.ctx.params.n_threads
        threads = min(request.n_threads, own) if request.n_threads > 0 else own
        if threads == own:
            return self._generate(request, emit)
        self._set_threads(threads)  # fewer for this request only (a background read leaves cores free)
        try:
            return self._generate(request, emit)
        finally:
            self._set_threads(own)

    def _set_threads(self, n_threads: int) -> None:
        assert self.ctx is not None
        self.ctx.set_threads(n_threads)
        mtp = self._drafting.mtp if self._drafting is not None else None
        if mtp is not None:
            mtp.ctx.set_threads(n_threads)  # it reads along with the main context

    def _generate(self, request: GenerateRequest, emit: Callable[[EngineEvent], None]) -> GenerationStats:
        assert self.model is not None and self.ctx is not None
        t0 = time.perf_counter()
        grammar = _grammar(request.json_schema)  # a bad answer format fails before the long prefill
        self._tags, self._document_tags = request.prefix_tags, request.document_tags
        prompt = self.prompt(request.parts, request.prefix_parts)
        budget = self.n_ctx - prompt.cells
        if budget < MIN_ANSWER_TOKENS:
            raise ContextOverflow(
                f"the prompt needs {prompt.cells:,} tokens but the context holds {self.n_ctx:,}; "
                "select fewer pages or documents"
            )
        until = prompt.n_prefix if request.read_only else len(prompt.keys)
        n_keep = self._read_prompt(prompt, emit, until)
        prefill_ms = (time.perf_counter() - t0) * 1000
        cached = _cells_before(prompt.pieces, n_keep)
        if self._cancelled():
            return GenerationStats(prompt.cells, cached, 0, prefill_ms, 0.0, self.n_ctx, "cancelled")
        key = self._key(prompt) if prompt.n_prefix else ""
        if key and self.store is not None and self.store.has(key):
            emit(StateSaved(key, prompt.prefix_cells, complete=True, documents=_ends_within(prompt, prompt.n_prefix)))
        if request.read_only:
            kept = min(cached, prompt.prefix_cells)  # the context may hold more than the documents
            return GenerationStats(prompt.prefix_cells, kept, 0, prefill_ms, 0.0, self.n_ctx, "read")
        if request.choices:
            emit(Scored(self._score(request.choices)))
            return GenerationStats(prompt.cells, cached, 0, prefill_ms, 0.0, self.n_ctx, "scored")
        ttft: list[float] = []
        completion, reason, drafts = self._sample_loop(
            request.sampling,
            min(request.sampling.max_tokens, budget),
            emit,
            lambda: ttft.append(time.perf_counter()),
            grammar,
            prompt.n_prefix,
            drafting=request.drafting,
        )
        generate_ms = (time.perf_counter() - t0) * 1000 - prefill_ms
        ttft_ms = (ttft[0] - t0) * 1000 if ttft else 0.0
        return GenerationStats(
            prompt.cells,
            cached,
            completion,
            prefill_ms,
            generate_ms,
            self.n_ctx,
            reason,
            ttft_ms,
            drafted_tokens=drafts.drafted,
            accepted_tokens=drafts.accepted,
            draft_note=self._drafting.idle_note()
            if self._drafting is not None and request.drafting and not drafts.drafted
            else "",
        )

    def _score(self, choices: tuple[tuple[str, ...], ...]) -> tuple[float, ...]:
        """log P(first answer token is one of each choice's spellings' first tokens), from the logits
        the prompt's last token left (the whole vocabulary's softmax, computed in float64)."""
        assert self.ctx is not None and self.model is not None
        import numpy as np

        logits = self.ctx.logits().astype(np.float64)
        top = float(logits.max())
        log_total = top + float(np.log(np.exp(logits - top).sum()))
        out = []
        for spellings in choices:
            ids = sorted(
                {t[0] for s in spellings if (t := self.model.tokenize(s, add_special=False, parse_special=False))}
            )
            if not ids:
                raise EngineError(f"the answer choice {spellings!r} has no tokens")
            chosen = logits[ids]
            peak = float(chosen.max())
            out.append(peak + float(np.log(np.exp(chosen - peak).sum())) - log_total)
        return tuple(out)

    def prompt_logits(self, request: GenerateRequest) -> Any:
        """Read the prompt exactly as generate() does and return the next-token logits (for tests)."""
        self._tags, self._document_tags = request.prefix_tags, request.document_tags
        self._read_prompt(self.prompt(request.parts, request.prefix_parts), lambda _e: None)
        assert self.ctx is not None
        return self.ctx.logits()

    def _read_prompt(self, prompt: Prompt, emit: Callable[[EngineEvent], None], until: int | None = None) -> int:
        """Bring the context to hold the prompt (up to position `until`: a read of the documents alone
        stops at the end of the prefix); returns how many positions were reused, not read."""
        start = time.perf_counter()
        n_keep, source = self._reuse(prompt)
        self.last_reuse = (n_keep, source)
        if self._drafting is not None:
            self._drafting.follow(self._held, prompt.n_prefix)
        if n_keep:
            emit(PrefixReused(_cells_before(prompt.pieces, n_keep), source, time.perf_counter() - start))
        self._prefill(prompt, n_keep, emit, len(prompt.keys) if until is None else until)
        return n_keep

    # -- reuse ---------------------------------------------------------------------------------------
    def _reuse(self, prompt: Prompt) -> tuple[int, str]:
        assert self.ctx is not None and self.model is not None and self.config is not None
        held, keys, n_prefix = self._held, prompt.keys, prompt.n_prefix
        limit = len(keys) - 1  # the last prompt token is always evaluated: it yields the logits
        layout = _layout(prompt.pieces, prompt.stops, self.config.n_batch, self.config.n_ubatch, self._keep_tail())
        shared = _shared_cuts(self._cuts, layout, min(common_prefix(held, keys), limit))
        key = self._key(prompt) if n_prefix else ""
        may_load = bool(key) and self.store is not None and self.store.has(key) and n_prefix <= limit
        # States on disk of a part of this prefix, shortest first (only when there is no snapshot of
        # all of it): where earlier documents end (read before, alone or in another selection), and
        # checkpoints of an unfinished read.
        found = self._states_of(prompt, layout) if key and not may_load and n_prefix <= limit else []
        self._checkpoints = [k for _, k, checkpoint in found if checkpoint]
        if shared:
            cut = shared[-1]
            better_on_disk = (may_load and cut < n_prefix) or (bool(found) and found[-1][0] > cut)
            in_place = cut == len(held)  # recurrent state can only be continued, never trimmed
            if not better_on_disk and (in_place or (not self.model.is_recurrent and self.ctx.trim(cut))):
                self._held, self._cuts = held[:cut], shared
                return cut, "context"
        snap = self._snapshot
        if (
            self.model.is_recurrent
            and snap is not None
            and snap.n_tokens in shared
            and self.ctx.set_state(snap.data, partial=True)
            and self.ctx.trim(snap.n_tokens)
        ):
            self._held = held[: snap.n_tokens]
            self._cuts = shared[: shared.index(snap.n_tokens) + 1]
            return snap.n_tokens, "memory"
        self._clear()
        on_disk = self.store.lookup(key) if may_load and self.store is not None else None
        if on_disk is not None and on_disk.n_tokens == n_prefix:
            restored = self.ctx.load_file(str(on_disk.path), n_prefix)
            if restored == keys[:n_prefix] and self.ctx.pos_max() == n_prefix - 1:
                self._held = restored
                self._cuts = [c for c in layout if c <= n_prefix]
                self._remember_recurrent(n_prefix)
                return n_prefix, "disk"
            self._clear()
            assert self.store is not None
            self.store.discard(key)  # llama.cpp refused it: it is rebuilt during this read
        for cut, state, checkpoint in reversed(found):
            if self._load_checkpoint(prompt, cut, state):
                self._cuts = [c for c in layout if c <= cut]
                return cut, "checkpoint" if checkpoint else "documents"
        return 0, ""

    def _states_of(self, prompt: Prompt, layout: list[int]) -> list[tuple[int, str, bool]]:
        """(tokens, key, is a checkpoint) of the states on disk that hold a part of this prompt's
        prefix, ending at a cut of its fresh reading (so what follows is read as a fresh read would)."""
        if self.store is None:
            return []
        on_disk = self.store.keys()
        if not on_disk:
            return []
        cuts = [c for c in layout if c < prompt.n_prefix]
        found = self._keys_at(prompt, cuts)
        return [(cut, key, self.store.is_checkpoint(key)) for cut, key in found if key in on_disk]

    def _load_checkpoint(self, prompt: Prompt, cut: int, key: str) -> bool:
        """Restore a state of part of the prefix (a checkpoint, or where a document ends); a torn or
        refused one is deleted (the next shorter one is tried)."""
        assert self.store is not None and self.ctx is not None
        snap = self.store.lookup(key)  # verifies size and checksum: a torn write is never used
        if snap is not None and snap.n_tokens == cut:
            restored = self.ctx.load_file(str(snap.path), cut)
            if restored == prompt.keys[:cut] and self.ctx.pos_max() == cut - 1:
                self._held = restored
                return True
            self._clear()
        self.store.discard(key)
        return False

    def _clear(self) -> None:
        assert self.ctx is not None
        self.ctx.clear()
        self._held, self._cuts, self._snapshot = [], [], None

    def _key(self, prompt: Prompt) -> str:
        return self._keys_at(prompt, [prompt.n_prefix])[0][1]

    def _keys_at(self, prompt: Prompt, cuts: list[int]) -> list[tuple[int, str]]:
        """(cut, state key of the prompt's first `cut` positions) for each cut, ascending. The vision
        projector is part of a state's identity only once an image was read: a text-only document's
        state is the same with or without a later scanned one."""
        first_image = _first_image(prompt.pieces)
        before = [c for c in cuts if first_image is None or c <= first_image]
        after = cuts[len(before) :]
        out = prefix_keys(self._fingerprint(False), prompt.keys, before) if before else []
        return out + (prefix_keys(self._fingerprint(True), prompt.keys, after) if after else [])

    def _fingerprint(self, images: bool) -> dict[str, Any]:
        """Every setting that changes the numbers of a state (the prompt's tokens aside); `images`:
        the state holds an image (its embedding comes from the projector)."""
        assert self.config is not None
        c = self.config
        import llama_cpp

        fingerprint: dict[str, Any] = {
            "model": self._model_identity,
            "llama_cpp": llama_cpp.__version__,
            "kv": c.kv_type,
            "flash_attn": c.flash_attn,
            "n_batch": c.n_batch,
            "n_ubatch": c.n_ubatch,
            "gpu_layers": c.n_gpu_layers,
        }
        if images and c.mmproj_path:  # image embeddings come from the projector
            fingerprint["mmproj"] = _file_identity(c.mmproj_path)
        if self._keep_tail() and c.n_batch > c.n_ubatch:  # only then can it move micro-batch ends
            fingerprint["keep_tail"] = self._keep_tail()
        return fingerprint

    def _remember_recurrent(self, n_tokens: int) -> None:
        assert self.ctx is not None and self.model is not None
        if self.model.is_recurrent:
            self._snapshot = _RecurrentSnapshot(n_tokens, self.ctx.get_state(partial=True))

    def _snapshot_prefix(self, prompt: Prompt) -> None:
        """Called when the context holds exactly the prefix: keep it in memory and on disk."""
        assert self.ctx is not None
        self._remember_recurrent(prompt.n_prefix)
        if self.store is None:
            return
        key = self._key(prompt)
        if self.store.lookup(key) is None:
            ctx, keys = self.ctx, prompt.keys[: prompt.n_prefix]
            self.store.save(key, len(keys), lambda tmp: ctx.save_file(str(tmp), keys), self._tags)
        self._drop_checkpoints()  # the read is complete: the snapshot replaces them

    def _snapshot_document(self, prompt: Prompt, at: int, emit: Callable[[EngineEvent], None]) -> None:
        """Called when the context holds the prefix exactly up to the end of a document (not the last):
        keep that state on disk, so a later selection starting with these documents starts there."""
        assert self.ctx is not None and self.store is not None
        key = self._keys_at(prompt, [at])[0][1]
        held = _ends_within(prompt, at)
        # Checked cheaply (no checksum of a state of many GB): a damaged one is found when it is loaded.
        if not self.store.has(key):
            ctx, keys = self.ctx, prompt.keys[:at]
            tags = self._tags
            if len(self._document_tags) >= held:
                tags = tuple(dict.fromkeys(t for doc in self._document_tags[:held] for t in doc))
            if self.store.save(key, at, lambda tmp: ctx.save_file(str(tmp), keys), tags) is None:
                return
        self._drop_checkpoints()  # each is shorter than this state, which is committed now
        emit(StateSaved(key, _cells_before(prompt.pieces, at), complete=True, documents=held))

    def _checkpoint(self, prompt: Prompt, at: int, emit: Callable[[EngineEvent], None]) -> None:
        """Write the context (which holds the prefix up to `at`, a chunk end) as a checkpoint."""
        assert self.ctx is not None and self.store is not None
        key = self._keys_at(prompt, [at])[0][1]
        if key in self._checkpoints:
            return
        ctx, keys = self.ctx, prompt.keys[:at]
        if self.store.save(key, at, lambda tmp: ctx.save_file(str(tmp), keys), self._tags, checkpoint=True):
            self._drop_checkpoints()  # only the newest is needed, and it is committed now
            self._checkpoints = [key]
            emit(StateSaved(key, _cells_before(prompt.pieces, at), complete=False))

    def _drop_checkpoints(self) -> None:
        if self.store is not None:
            for key in self._checkpoints:
                self.store.discard(key)
        self._checkpoints = []

    # -- evaluation ----------------------------------------------------------------------------------
    def _prefill(self, prompt: Prompt, n_keep: int, emit: Callable[[EngineEvent], None], until: int) -> None:
        assert self.ctx is not None and self.config is not None
        total = _cells_before(prompt.pieces, until) - _cells_before(prompt.pieces, n_keep)
        start = time.perf_counter()
        done = 0
        n_prefix = prompt.n_prefix
        stops = prompt.stops
        pos = 0
        checkpoints = self.store is not None and self.config.checkpoint_s > 0 and n_prefix > 0
        last_mark, save_cost = start, 0.0

        def checkpoint_at(at: int) -> None:
            nonlocal last_mark, save_cost
            began = time.perf_counter()
            self._checkpoint(prompt, at, emit)
            last_mark = time.perf_counter()
            save_cost = last_mark - began

        def document_read(at: int) -> None:
            nonlocal last_mark
            self._snapshot_document(prompt, at, emit)
            last_mark = time.perf_counter()  # it is as good as a checkpoint

        for index, piece in enumerate(prompt.pieces):
            if pos >= until:
                return
            last_piece = index == len(prompt.pieces) - 1
            if isinstance(piece, ImagePiece):
                begin, pos = pos, pos + piece.n_pos
                if pos <= n_keep:
                    continue
                if self._cancelled() or not self._read_image(piece, begin, last_piece):
                    return
                if self._drafting is not None:
                    self._drafting.read_image(piece.n_pos)
                self._held.extend(_image_keys(piece))
                self._cuts.append(pos)
                done += piece.n_tokens
            else:
                run_start, run_end = pos, pos + len(piece)
                at = max(run_start, n_keep)
                while at < min(run_end, until):
                    if self._cancelled():
                        if checkpoints and 0 < at < n_prefix:
                            checkpoint_at(at)  # a cancel keeps what was read
                        return
                    # Chunks never straddle the end of a document or of the prefix: the snapshots
                    # are taken exactly there (recurrent state cannot be rolled back to them), and
                    # every reading of a prompt that shares the text up to one splits it into the
                    # same micro-batches.
                    stop = min(at + self.config.n_batch, _region_end(stops, at, run_end))
                    batch = piece[at - run_start : stop - run_start]
                    rc = self.ctx.decode(batch, at, want_logits=last_piece and stop == run_end)
                    if rc != 0:
                        self._after_failed_decode(rc, "reading the prompt")
                        # Stopped before the chunk changed the memory: keep what was read.
                        if checkpoints and 0 < at < n_prefix and self.ctx.pos_max() + 1 == at == len(self._held):
                            checkpoint_at(at)
                        return
                    if self._drafting is not None:
                        self._drafting.read(batch, at)
                    self._held.extend(batch)
                    self._cuts.extend(_layout_between(at, stop, self.config.n_ubatch, self._keep_tail()))
                    done += stop - at
                    at = stop
                    if at == n_prefix:
                        self._snapshot_prefix(prompt)
                    elif at in prompt.ends and self.store is not None:
                        document_read(at)
                    elif checkpoints and at < n_prefix:
                        now = time.perf_counter()
                        if now - last_mark >= max(self.config.checkpoint_s, save_cost / CHECKPOINT_COST_SHARE):
                            checkpoint_at(at)
                    elapsed = time.perf_counter() - start
                    rate = done / elapsed if elapsed > 0 else 0.0
                    emit(PrefillProgress(done, total, rate, (total - done) / rate if rate > 0 else 0.0))
                pos = run_end
                continue
            if pos == n_prefix:
                self._snapshot_prefix(prompt)
            elif pos in prompt.ends and pos < until and self.store is not None:
                document_read(pos)  # a document that ends with an image
            elapsed = time.perf_counter() - start
            rate = done / elapsed if elapsed > 0 else 0.0
            emit(PrefillProgress(done, total, rate, (total - done) / rate if rate > 0 else 0.0))

    def _read_image(self, piece: ImagePiece, pos: int, last: bool) -> bool:
        """Encode an image with the projector into the context at pos; False when cancelled."""
        assert self.vision is not None and self.ctx is not None and self.config is not None
        try:
            after = self.vision.evaluate(piece, pos, self.config.n_batch, logits_last=last, lctx=self.ctx.ptr)
        except VisionEvalError:
            if not self._cancelled():
                self._clear()
                raise
            self._after_failed_decode(_DECODE_ABORTED, "reading an image")
            return False
        if after != pos + piece.n_pos:
            self._clear()
            raise EngineError("the vision projector placed an image at unexpected positions")
        return True

    def _after_failed_decode(self, rc: int, doing: str) -> None:
        """Keep `_held` true to what the memory holds after a decode that did not complete."""
        assert self.ctx is not None
        if rc == _DECODE_ABORTED or self._cancelled():
            # Whole micro-batches that finished before the abort stay in memory.
            n = self.ctx.pos_max() + 1
            self._held = self._held[:n]
            self._cuts = [c for c in self._cuts if c <= n]
            return
        if rc == _DECODE_NO_SLOT:
            raise ContextOverflow("the context is full; select fewer pages or documents")
        self._clear()
        raise EngineError(f"llama.cpp failed while {doing} (code {rc})")

    def _sample_loop(
        self,
        sampling: Sampling,
        max_tokens: int,
        emit: Callable[[EngineEvent], None],
        first: Callable[[], None],
        grammar: str | None = None,
        n_stable: int = 0,
        *,
        drafting: bool = True,
    ) -> tuple[int, str, DraftCounts]:
        assert self.model is not None and self.ctx is not None and self.config is not None
        sampler = NativeSampler(
            self.model.n_vocab,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k,
            min_p=sampling.min_p,
            presence_penalty=sampling.presence_penalty,
            seed=self.config.seed,
            vocab=self.model.vocab,
            grammar=grammar,
        )
        drafter = self._drafting if drafting else None
        if drafter is not None:
            drafter.begin(self._held, n_stable)
        writer = AnswerWriter(
            self.ctx,
            self.model,
            sampler,
            self._held,
            self._cancelled,
            failed=lambda rc: self._after_failed_decode(rc, "answering"),
            lost=self._clear,
            drafting=drafter,
            rollback_limit=self._rollback_limit(self.config.draft_tokens),
        )
        try:
            count, reason = writer.run(max_tokens, emit, first)
        finally:
            sampler.close()
        return count, reason, writer.counts


def _encoder(model: NativeModel, first: bool) -> Callable[[str, bool, bool], list[int]]:
    def encode(text: str, bos: bool, special: bool) -> list[int]:
        # Untrusted content is tokenized with special-token parsing off: '<|im_end|>' in a PDF
        # becomes ordinary text tokens, never a turn boundary.
        return model.tokenize(text, add_special=first and bos, parse_special=special)

    return encode


@dataclass(frozen=True)
class CountedPrefix:
    """A text-only prefix tokenized while counting, kept to hand to the engine once it loads."""

    model_path: str
    key: str
    pieces: list[Piece]
    ends: tuple[int, ...] = ()  # where the documents end (PreparedPrompt.ends)


def count_keeping_prefix(
    model: NativeModel, parts: list[PromptPart], prefix_parts: int
) -> tuple[TokenCount, CountedPrefix | None]:
    """`count_parts`, keeping the prefix's tokens when they are exact (no image to estimate)."""
    prefix = parts[:prefix_parts]
    if has_images(prefix):
        return count_parts(model, parts, prefix_parts), None
    prepared = prepare(prefix, _encoder(model, True), None)
    n_prefix = _cells(prepared.pieces)
    total = n_prefix + _count(model, parts[prefix_parts:], prefix_parts == 0)
    return TokenCount(total, n_prefix), CountedPrefix(model.path, _parts_digest(prefix), prepared.pieces, prepared.ends)


def count_parts(model: NativeModel, parts: list[PromptPart], prefix_parts: int) -> TokenCount:
    """Token counts from the vocabulary alone: exact for text, images estimated from their pixels."""
    prefix = _count(model, parts[:prefix_parts], True)
    return TokenCount(prefix + _count(model, parts[prefix_parts:], prefix_parts == 0), prefix)


def _count(model: NativeModel, parts: list[PromptPart], first: bool) -> int:
    encode = _encoder(model, first)
    return sum(
        estimate_image_tokens(part.image) if part.image is not None else len(encode(part.text, i == 0, part.special))
        for i, part in enumerate(parts)
    )


def _grammar(json_schema: str | None) -> str | None:
    """GBNF that only lets the sampler produce JSON valid under the schema."""
    if json_schema is None:
        return None
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        return str(json_schema_to_gbnf(json_schema))
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise EngineError(f"the answer format could not be turned into a grammar ({exc})") from exc


def run_generation(engine: LocalEngine, request: GenerateRequest, emit: Callable[[EngineEvent], None]) -> None:
    stats = engine.generate(request, emit)
    emit(Finished(stats))


def _layout_between(start: int, stop: int, n_ubatch: int, keep_tail: int = 0) -> list[int]:
    """Where llama.cpp's micro-batches end when it evaluates tokens start..stop in one batch.

    With keep_tail, a micro-batch that would leave fewer than keep_tail tokens for the last one ends
    early, so the last keep_tail tokens stay together (llama_batch_allocr::split_equal)."""
    cuts: list[int] = []
    at = start
    while at < stop:
        take = min(n_ubatch, stop - at)
        rest = stop - at - take
        if 0 < rest < keep_tail:
            take -= keep_tail - rest
        at += take
        cuts.append(at)
    return cuts


def _layout(pieces: list[Piece], stops: list[int], n_batch: int, n_ubatch: int, keep_tail: int = 0) -> list[int]:
    """Micro-batch ends of a fresh reading: text runs in batches from their start (split at every
    stop: the documents' ends and the end of the prefix), each image in one go."""
    cuts: list[int] = []
    pos = 0
    for piece in pieces:
        if isinstance(piece, ImagePiece):
            pos += piece.n_pos
            cuts.append(pos)
            continue
        run_end = pos + len(piece)
        while pos < run_end:
            stop = min(pos + n_batch, _region_end(stops, pos, run_end))
            cuts += _layout_between(pos, stop, n_ubatch, keep_tail)
            pos = stop
    return cuts


def _region_end(stops: list[int], pos: int, run_end: int) -> int:
    """The first stop after pos inside the run, or the run's end: no chunk straddles a stop."""
    i = bisect.bisect_right(stops, pos)
    return stops[i] if i < len(stops) and stops[i] < run_end else run_end


def _keys(pieces: list[Piece]) -> list[int]:
    keys: list[int] = []
    for piece in pieces:
        keys += _image_keys(piece) if isinstance(piece, ImagePiece) else piece
    return keys


def _image_keys(piece: ImagePiece) -> list[int]:
    """Stand-ins for an image's positions: negative (never a token id), derived from the file."""
    digest = hashlib.sha256(_file_identity(piece.path).encode()).digest()
    base = int.from_bytes(digest[:3], "little") << 6
    return [-(1 + base + i % 64) for i in range(piece.n_pos)]


def _first_image(pieces: list[Piece]) -> int | None:
    """The position where the prompt's first image starts, or None."""
    pos = 0
    for piece in pieces:
        if isinstance(piece, ImagePiece):
            return pos
        pos += len(piece)
    return None


def _ends_within(prompt: Prompt, at: int) -> int:
    """How many of the prompt's documents end at or before position `at`."""
    return sum(1 for end in prompt.ends if end <= at)


def _cells(pieces: list[Piece]) -> int:
    return sum(p.n_tokens if isinstance(p, ImagePiece) else len(p) for p in pieces)


def _cells_before(pieces: list[Piece], position: int) -> int:
    """KV cells filled by the pieces that end at or before `position` (plus text up to it)."""
    cells = pos = 0
    for piece in pieces:
        if pos >= position:
            break
        if isinstance(piece, ImagePiece):
            pos += piece.n_pos
            cells += piece.n_tokens
        else:
            take = min(len(piece), position - pos)
            pos += take
            cells += take
    return cells


def _shared_cuts(old: list[int], new: list[int], bound: int) -> list[int]:
    """The leading cuts both readings share, up to `bound` tokens: states there are bit-identical."""
    n = 0
    while n < len(old) and n < len(new) and old[n] == new[n] and old[n] <= bound:
        n += 1
    return new[:n]


def _parts_digest(parts: list[PromptPart]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(b"\x01" if part.special else b"\x00")
        h.update(b"\x01" if part.ends_document else b"\x00")
        data = part.text.encode("utf-8")
        if part.image is not None:
            data += b"\x00image:" + _file_identity(part.image).encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _file_identity(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}|missing"  # reported properly when the file is read
    return f"{Path(path).resolve()}|{st.st_size}|{st.st_mtime_ns}"
