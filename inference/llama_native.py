"""A thin layer over llama.cpp's C API (through llama-cpp-python's ctypes bindings).

Folio drives llama.cpp directly instead of through `llama_cpp.Llama`: it needs its own batches
(to split prefill at the document boundary), the sequence-state functions (snapshots), the memory
functions (trimming the KV cache) and llama.cpp's own state files (fast restore). The high-level
class would also allocate an (n_batch x n_vocab) float array — 0.5 GB for a 248K vocabulary.

Only the engine process imports this module.
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from inference.errors import EngineError, ModelFileError

KV_TYPES = {"f16": 1, "q8_0": 8, "q4_0": 2}  # ggml_type ids (GGML_TYPE_*)
_LOG_ERROR = 4  # GGML_LOG_LEVEL_ERROR (2 info, 3 warn)
_BUFFER_RE = re.compile(r"^\w+:\s+(\S+)\s+(model|KV|RS|output|compute) buffer size =\s+([\d.]+) MiB")
_KINDS = {"model": "weights", "KV": "kv", "RS": "recurrent", "output": "output", "compute": "compute"}
# Text shaped like a tag, as the vocabulary's markup tokens are ('<think>', '<start_of_image>').
_TAG_RE = re.compile(r"<[^<>\s]{1,64}>")
_ATTR_CONTROL = 8  # LLAMA_TOKEN_ATTR_CONTROL
_ATTR_USER_DEFINED = 16  # LLAMA_TOKEN_ATTR_USER_DEFINED


@dataclass
class LlamaLog:
    """Everything llama.cpp logs goes here instead of stderr: errors to explain failures, buffer sizes."""

    errors: deque[str] = field(default_factory=lambda: deque(maxlen=8))
    buffers: dict[str, float] = field(default_factory=dict)  # 'weights'|'kv'|... -> bytes, summed over devices
    _partial: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def feed(self, level: int, text: str) -> None:
        with self._lock:
            text = self._partial + text
            lines = text.split("\n")
            self._partial = lines.pop()
            for line in lines:
                self._line(level, line.strip())

    def _line(self, level: int, line: str) -> None:
        if not line:
            return
        if level == _LOG_ERROR:
            self.errors.append(line)
        match = _BUFFER_RE.match(line)
        if match:
            kind = _KINDS[match.group(2)]
            self.buffers[kind] = self.buffers.get(kind, 0.0) + float(match.group(3)) * 1024 * 1024

    def last_error(self) -> str:
        return self.errors[-1] if self.errors else ""

    def take_buffers(self) -> dict[str, int]:
        with self._lock:
            out = {k: int(v) for k, v in self.buffers.items()}
            self.buffers.clear()
            return out


# What llama.cpp's loader says, in words a user can act on (its last line is always the generic one).
_LOAD_FAILURES = [
    (re.compile(r"unknown model architecture: '([^']*)'"), "its architecture {0!r} is unknown to this llama.cpp"),
    (re.compile(r"invalid magic characters"), "it is not a GGUF model file"),
    (
        re.compile(r"not within the file bounds|failed to read|unexpectedly reached end|truncated"),
        "the file is truncated or damaged",
    ),
    (re.compile(r"number of tensors|invalid|corrupt"), "the file is damaged"),
]


def load_failure(errors: list[str]) -> str:
    """The most telling reason among the loader's error lines."""
    for line in errors:
        for pattern, reason in _LOAD_FAILURES:
            match = pattern.search(line)
            if match:
                return reason.format(*match.groups())
    specific = [e for e in errors if "failed to load model" not in e]
    return (specific or errors or ["unknown error"])[0].split(": ", 1)[-1]


LOG = LlamaLog()
_log_callback: Any = None
_backend_ready = False


def lib() -> Any:
    """llama_cpp's bindings, with logging captured and the backend initialised once per process."""
    global _log_callback, _backend_ready
    import llama_cpp

    if _log_callback is None:

        def on_log(level: int, text: bytes, _user: Any) -> None:
            LOG.feed(level, text.decode("utf-8", "replace"))

        _log_callback = llama_cpp.llama_log_callback(on_log)
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
    if not _backend_ready:
        from inference.backends import load_backends

        load_backends()  # a no-op unless llama.cpp was built with loadable backends (the installers)
        llama_cpp.llama_backend_init()
        _backend_ready = True
    return llama_cpp


def log_callback() -> Any:
    """The ctypes log callback, for other llama.cpp libraries (mtmd) to log through the same capture."""
    lib()
    return _log_callback


class NativeModel:
    """Weights and vocabulary of one GGUF."""

    def __init__(
        self,
        path: str,
        *,
        n_gpu_layers: int = 0,
        use_mmap: bool = False,
        vocab_only: bool = False,
        load_mtp: bool = False,
    ) -> None:
        L = lib()
        params = L.llama_model_default_params()
        params.n_gpu_layers = n_gpu_layers
        params.load_mtp = load_mtp  # the multi-token-prediction block, when it drafts answers
        # Read into memory rather than mmap: CPU 'repacked' tensors would otherwise exist twice
        # (mapped file + repacked copy), and the planner's weight figure would not hold.
        params.load_mode = 1 if use_mmap else 0
        params.lazy_mode = 0
        params.vocab_only = vocab_only
        LOG.take_buffers()
        LOG.errors.clear()
        self.path = path
        self.ptr = L.llama_model_load_from_file(path.encode("utf-8"), params)
        if not self.ptr:
            raise ModelFileError(
                f"llama.cpp could not load {path.rsplit('/', 1)[-1]}: {load_failure(list(LOG.errors))}"
            )
        self.buffers = LOG.take_buffers()
        self.vocab = L.llama_model_get_vocab(self.ptr)
        self.n_vocab = int(L.llama_vocab_n_tokens(self.vocab))
        self.n_ctx_train = int(L.llama_model_n_ctx_train(self.ptr))
        self.is_recurrent = bool(L.llama_model_is_recurrent(self.ptr)) or bool(L.llama_model_is_hybrid(self.ptr))
        self.add_bos = bool(L.llama_vocab_get_add_bos(self.vocab))
        self.n_embd = int(L.llama_model_n_embd(self.ptr))
        self.n_layer_nextn = int(L.llama_model_n_layer_nextn(self.ptr)) if load_mtp else 0
        self._pieces: dict[int, bytes] = {}
        self._markup: dict[str, bool] = {}

    def tokenize(self, text: str, *, add_special: bool, parse_special: bool) -> list[int]:
        """Token ids. With parse_special off (untrusted content) no special token comes out at all.

        llama.cpp skips CONTROL tokens when special parsing is off, but still matches USER_DEFINED
        ones - and chat markup can be user-defined: Qwen's '<think>' and '</think>', Gemma 3's
        '<start_of_image>'. So content is cut right after the '<' of any such tag and the pieces are
        tokenized apart: the model reads the same characters as ordinary text tokens."""
        if parse_special or "<" not in text:
            return self._tokenize(text, add_special=add_special, parse_special=parse_special)
        cuts = [m.start() + 1 for m in _TAG_RE.finditer(text) if self._is_markup(m.group())]
        tokens: list[int] = []
        start = 0
        for cut in [*cuts, len(text)]:
            if cut > start:
                tokens += self._tokenize(text[start:cut], add_special=add_special and start == 0, parse_special=False)
            start = cut
        return tokens

    def _is_markup(self, tag: str) -> bool:
        known = self._markup.get(tag)
        if known is None:
            ids = self._tokenize(tag, add_special=False, parse_special=False)
            attr = int(lib().llama_vocab_get_attr(self.vocab, ids[0])) if len(ids) == 1 else 0
            known = self._markup[tag] = bool(attr & (_ATTR_CONTROL | _ATTR_USER_DEFINED))
        return known

    def token_attr(self, token: int) -> int:
        """llama.cpp's LLAMA_TOKEN_ATTR_* bits of a token."""
        return int(lib().llama_vocab_get_attr(self.vocab, token))

    def _tokenize(self, text: str, *, add_special: bool, parse_special: bool) -> list[int]:
        L = lib()
        data = text.encode("utf-8")
        capacity = len(data) + 8
        buf = (L.llama_token * capacity)()
        n = L.llama_tokenize(self.vocab, data, len(data), buf, capacity, add_special, parse_special)
        if n < 0:
            capacity = -n
            buf = (L.llama_token * capacity)()
            n = L.llama_tokenize(self.vocab, data, len(data), buf, capacity, add_special, parse_special)
        if n < 0:
            raise EngineError("the text could not be tokenized")
        return list(buf[:n])

    def piece(self, token: int) -> bytes:
        cached = self._pieces.get(token)
        if cached is not None:
            return cached
        L = lib()
        buf = ctypes.create_string_buffer(64)
        n = L.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = L.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        out = bytes(buf.raw[: max(n, 0)])
        self._pieces[token] = out
        return out

    def is_eog(self, token: int) -> bool:
        return bool(lib().llama_vocab_is_eog(self.vocab, token))

    def close(self) -> None:
        if self.ptr:
            lib().llama_model_free(self.ptr)
            self.ptr = None


@dataclass(frozen=True)
class ContextParams:
    n_ctx: int
    n_batch: int
    n_ubatch: int
    n_threads: int
    kv_type: str = "f16"
    flash_attn: bool = True
    swa_full: bool = True  # keep every sliding-window cell, so the cache can be trimmed back to a prefix
    n_outputs: int = 1  # logit rows one decode may return: 1, or 1 + the longest draft when verifying drafts
    n_rs_seq: int = 0  # recurrent-state snapshots kept per token of a batch, so drafts can be rolled back
    mtp: bool = False  # a context that runs the model's multi-token-prediction block (it drafts tokens)


class NativeContext:
    """One llama.cpp context (KV cache + recurrent state) holding a single sequence (id 0)."""

    def __init__(self, model: NativeModel, params: ContextParams, abort: Any = None) -> None:
        L = lib()
        kv = KV_TYPES.get(params.kv_type)
        if kv is None:
            raise EngineError(f"unknown KV cache type {params.kv_type!r}")
        if kv != KV_TYPES["f16"] and not params.flash_attn:
            raise EngineError("a quantized KV cache needs flash attention")
        cp = L.llama_context_default_params()
        cp.n_ctx = params.n_ctx
        cp.n_batch = params.n_batch
        cp.n_ubatch = params.n_ubatch
        cp.n_seq_max = 1
        # Folio needs the last token's logits, or one row per draft token: never n_ubatch x n_vocab.
        cp.n_outputs_max = params.n_outputs
        cp.n_rs_seq = params.n_rs_seq
        if params.mtp:
            cp.ctx_type = L.LLAMA_CONTEXT_TYPE_MTP
        cp.n_threads = params.n_threads
        cp.n_threads_batch = params.n_threads
        cp.type_k = kv
        cp.type_v = kv
        cp.flash_attn_type = 1 if params.flash_attn else 0
        cp.swa_full = params.swa_full
        cp.no_perf = True
        self._abort = abort  # keep the ctypes callback alive as long as the context
        if abort is not None:
            cp.abort_callback = abort
        LOG.take_buffers()
        LOG.errors.clear()
        self.model = model
        self.params = params
        self.ptr = L.llama_init_from_model(model.ptr, cp)
        if not self.ptr:
            detail = LOG.last_error() or "unknown error"
            what = "not enough memory for" if "alloc" in detail else "llama.cpp could not create"
            raise EngineError(f"{what} a {params.n_ctx:,}-token context ({detail})")
        self.buffers = LOG.take_buffers()
        self.memory = L.llama_get_memory(self.ptr)
        self.n_ctx = int(L.llama_n_ctx(self.ptr))
        # What llama.cpp granted: it keeps no rollback snapshots for architectures that cannot use them.
        self.n_rs_seq = int(L.llama_n_rs_seq(self.ptr))
        self._batch = L.llama_batch_init(params.n_batch, 0, 1)
        self._hidden_batch: Any = None  # tokens paired with hidden states (MTP contexts), made on first use

    def set_threads(self, n_threads: int) -> None:
        """Threads for the decodes from now on (the context keeps everything it holds)."""
        lib().llama_set_n_threads(self.ptr, n_threads, n_threads)

    @property
    def n_threads(self) -> int:
        return int(lib().llama_n_threads_batch(self.ptr))

    # -- evaluation --------------------------------------------------------------------------------
    def decode(self, tokens: list[int], pos0: int, *, want_logits: bool, all_logits: bool = False) -> int:
        """Evaluate tokens at positions pos0.. (at most n_batch). Returns llama_decode's code.

        want_logits: the last token's logits; all_logits: every token's (at most n_outputs)."""
        L = lib()
        b = self._batch
        n = len(tokens)
        for i, tok in enumerate(tokens):
            b.token[i] = tok
            b.pos[i] = pos0 + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = int(all_logits)
        if want_logits:
            b.logits[n - 1] = 1
        b.n_tokens = n
        return int(L.llama_decode(self.ptr, b))

    def logits(self, row: int = -1) -> Any:
        """A copy of one evaluated token's logits (numpy float32 array); row -1 is the last one."""
        import numpy as np

        ptr = lib().llama_get_logits_ith(self.ptr, row)
        return np.ctypeslib.as_array(ptr, shape=(self.model.n_vocab,)).copy()

    def output_hidden(self, on: bool, *, every_token: bool) -> None:
        """Make decodes also return the hidden state that feeds the output layer (what an MTP block
        reads): of every token of the batch, or only of those that return logits."""
        from llama_cpp import llama_cpp_ext

        llama_cpp_ext.llama_set_embeddings_nextn(self.ptr, on, not every_token)

    def hidden(self, row: int, n_rows: int = 1) -> Any:
        """A copy of hidden-state rows of the last decode (n_rows x n_embd, float32)."""
        import numpy as np
        from llama_cpp import llama_cpp_ext

        ptr = llama_cpp_ext.llama_get_embeddings_nextn_ith(self.ptr, row)
        if not ptr:
            raise EngineError("llama.cpp returned no hidden states")
        return np.ctypeslib.as_array(ptr, shape=(n_rows, self.model.n_embd)).copy()

    def decode_with_hidden(self, tokens: list[int], hidden: Any, pos0: int, *, logits_last: bool) -> int:
        """Evaluate tokens, each paired with a hidden-state row (an MTP block's input), at pos0.."""
        import numpy as np

        L = lib()
        n, n_embd = len(tokens), self.model.n_embd
        if self._hidden_batch is None:
            self._hidden_batch = L.llama_batch_init(self.params.n_batch, n_embd, 1)
            self._hidden_tokens = (L.llama_token * self.params.n_batch)()
            self._hidden_batch.token = self._hidden_tokens
        b = self._hidden_batch
        rows = np.ctypeslib.as_array(b.embd, shape=(self.params.n_batch, n_embd))
        rows[:n] = hidden
        for i, tok in enumerate(tokens):
            b.token[i] = tok
            b.pos[i] = pos0 + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = 0
        b.logits[n - 1] = int(logits_last)
        b.n_tokens = n
        return int(L.llama_decode(self.ptr, b))

    # -- memory --------------------------------------------------------------------------------------
    def pos_max(self) -> int:
        return int(lib().llama_memory_seq_pos_max(self.memory, 0))

    def clear(self) -> None:
        lib().llama_memory_clear(self.memory, True)

    def trim(self, n_keep: int) -> bool:
        """Drop every position >= n_keep. False when the memory cannot (recurrent state)."""
        return bool(lib().llama_memory_seq_rm(self.memory, 0, n_keep, -1))

    # -- state ---------------------------------------------------------------------------------------
    def get_state(self, *, partial: bool) -> Any:
        """Sequence state as a ctypes byte array; partial=True: only the recurrent/SWA part."""
        L = lib()
        flags = L.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY if partial else 0
        size = int(L.llama_state_seq_get_size_ext(self.ptr, 0, flags))
        buf = (ctypes.c_uint8 * size)()
        written = int(L.llama_state_seq_get_data_ext(self.ptr, buf, size, 0, flags))
        if written != size:
            raise EngineError("llama.cpp could not copy the model state")
        return buf

    def set_state(self, buf: Any, *, partial: bool) -> bool:
        L = lib()
        flags = L.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY if partial else 0
        return int(L.llama_state_seq_set_data_ext(self.ptr, buf, len(buf), 0, flags)) == len(buf)

    def save_file(self, path: str, tokens: list[int]) -> int:
        """llama.cpp writes the sequence state (tokens + KV + recurrent) to path. Returns bytes written."""
        L = lib()
        arr = (L.llama_token * len(tokens))(*tokens)
        return int(L.llama_state_seq_save_file(self.ptr, path.encode("utf-8"), 0, arr, len(tokens)))

    def load_file(self, path: str, capacity: int) -> list[int] | None:
        """Restore a state file written by save_file; None when llama.cpp refuses it."""
        L = lib()
        arr = (L.llama_token * max(capacity, 1))()
        count = ctypes.c_size_t(0)
        read = int(L.llama_state_seq_load_file(self.ptr, path.encode("utf-8"), 0, arr, capacity, ctypes.byref(count)))
        if read == 0:
            return None
        return list(arr[: count.value])

    def close(self) -> None:
        L = lib()
        if self.ptr:
            L.llama_batch_free(self._batch)
            if self._hidden_batch is not None:
                self._hidden_batch.token = ctypes.POINTER(L.llama_token)()  # ours: llama.cpp must not free it
                L.llama_batch_free(self._hidden_batch)
                self._hidden_batch = None
            L.llama_free(self.ptr)
            self.ptr = None


class NativeSampler:
    """llama.cpp's sampler chain: top-k, presence penalty, top-p, min-p, temperature, then a draw."""

    def __init__(
        self,
        n_vocab: int,
        *,
        temperature: float,
        top_p: float,
        top_k: int,
        min_p: float,
        presence_penalty: float,
        seed: int,
        penalty_window: int = 1024,
        vocab: Any = None,
        grammar: str | None = None,
    ) -> None:
        L = lib()
        self.ptr = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        self._grammar: Any = None  # owned by the chain
        add = L.llama_sampler_chain_add
        if grammar is not None:
            # First in the chain, over the whole vocabulary: a later stage could otherwise keep only
            # tokens the grammar forbids and leave nothing to draw.
            rule = L.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
            if not rule:
                L.llama_sampler_free(self.ptr)
                raise EngineError("llama.cpp refused the answer format's grammar")
            add(self.ptr, rule)
            self._grammar = rule
        self._greedy = temperature <= 0
        if self._greedy:
            add(self.ptr, L.llama_sampler_init_greedy())
            return
        # top-k first: the penalty then scans 20 candidates instead of a 248K vocabulary.
        if top_k > 0:
            add(self.ptr, L.llama_sampler_init_top_k(top_k))
        if presence_penalty:
            add(self.ptr, L.llama_sampler_init_penalties(n_vocab, penalty_window, 1.0, 0.0, presence_penalty))
        add(self.ptr, L.llama_sampler_init_top_p(top_p, 1))
        if min_p > 0:
            add(self.ptr, L.llama_sampler_init_min_p(min_p, 1))
        add(self.ptr, L.llama_sampler_init_temp(temperature))
        add(self.ptr, L.llama_sampler_init_dist(seed))

    def sample(self, ctx: NativeContext, row: int = -1) -> int:
        """Draw from one row of logits through the whole chain, and record the token (penalties, grammar)."""
        L = lib()
        if self._greedy and self._grammar is not None:
            # Greedy under a grammar: when the best token overall is allowed, it is also the best allowed
            # one (the first of equals, as llama.cpp's greedy sampler picks). Checking that one token
            # spares the grammar a pass over the whole vocabulary (~0.1 s per token at 150K tokens).
            import numpy as np

            logits = np.ctypeslib.as_array(L.llama_get_logits_ith(ctx.ptr, row), shape=(ctx.model.n_vocab,))
            best = int(np.argmax(logits))
            if self.grammar_allows([best]):
                L.llama_sampler_accept(self.ptr, best)
                return best
        return int(L.llama_sampler_sample(self.ptr, ctx.ptr, row))

    def grammar_allows(self, tokens: list[int]) -> int:
        """How many of `tokens`, in order from the current state, the answer format's grammar accepts."""
        if self._grammar is None or not tokens:
            return len(tokens)
        L = lib()
        if len(tokens) == 1:  # applying the grammar changes nothing in it: no copy needed
            return int(_grammar_takes(L, self._grammar, tokens[0]))
        probe = L.llama_sampler_clone(self._grammar)  # the chain's own grammar state stays untouched
        try:
            for n, token in enumerate(tokens):
                if not _grammar_takes(L, probe, token):
                    return n
                L.llama_sampler_accept(probe, token)
            return len(tokens)
        finally:
            L.llama_sampler_free(probe)

    def close(self) -> None:
        if self.ptr:
            lib().llama_sampler_free(self.ptr)
            self.ptr = None


def _grammar_takes(L: Any, grammar: Any, token: int) -> bool:
    """Whether the grammar sampler, in its current state, lets `token` through."""
    cell = L.llama_token_data(token, 0.0, 0.0)
    candidates = L.llama_token_data_array(ctypes.pointer(cell), 1, -1, False)
    L.llama_sampler_apply(grammar, ctypes.byref(candidates))
    return bool(cell.logit != float("-inf"))


def gpu_devices() -> list[tuple[str, int, int]]:
    """(name, free bytes, total bytes) of every GPU llama.cpp can use; empty on a CPU-only build."""
    lib()  # backends are registered by llama_backend_init
    from llama_cpp._ggml import libggml

    libggml.ggml_backend_dev_count.restype = ctypes.c_size_t
    libggml.ggml_backend_dev_get.restype = ctypes.c_void_p
    libggml.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
    libggml.ggml_backend_dev_type.restype = ctypes.c_int
    libggml.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
    libggml.ggml_backend_dev_name.restype = ctypes.c_char_p
    libggml.ggml_backend_dev_name.argtypes = [ctypes.c_void_p]
    libggml.ggml_backend_dev_memory.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_size_t),
        ctypes.POINTER(ctypes.c_size_t),
    ]
    out = []
    for i in range(int(libggml.ggml_backend_dev_count())):
        dev = libggml.ggml_backend_dev_get(i)
        if libggml.ggml_backend_dev_type(dev) != 1:  # GGML_BACKEND_DEVICE_TYPE_GPU: dedicated memory
            continue
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        libggml.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
        out.append((libggml.ggml_backend_dev_name(dev).decode("utf-8", "replace"), free.value, total.value))
    return out
