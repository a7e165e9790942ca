"""Choose the context for a model on this machine, and predict its memory before llama.cpp runs.

Everything is computed from GGUF metadata (inference.gguf_facts) and the hardware; nothing about a
model is hard-coded except the published geometry of the Qwen3.5 tiers used for advice.

The memory model follows what llama.cpp allocates (and logs) for one sequence:
- weights: the tensors it loads (multi-token-prediction layers only when they draft tokens);
- KV cache: n_ctx (padded to 256) x every attention layer's K and V rows in the cache type;
- recurrent state: conv + SSM/DeltaNet state of every recurrent layer, float32, independent of n_ctx
  (times 1 + the draft length when drafts must be taken back: one snapshot per checked token);
- output: one row of logits (one per checked token when drafting);
- drafting with MTP layers: a second context for them, with its own one-layer KV cache;
- compute: the attention masks (n_ctx x n_ubatch, f16, one per attention kind) plus the largest
  set of per-token activations live at once (FFN, DeltaNet or attention layer) times n_ubatch.
  Its per-token coefficients were measured on llama.cpp's own graph reservation across Qwen3.5
  shapes (0.8B to 9B) and Gemma 3; tests and benchmarks/bench_engine.py check the whole
  prediction against what llama.cpp reports (within 10%).
Not in llama.cpp's buffer report but resident too: the vocabulary tables and the engine runtime.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from inference.engine_api import EngineConfig
from inference.gguf_facts import ModelFacts

GiB = 1024**3
MiB = 1024**2
KV_BYTES_PER_ELEMENT = {"f16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32}
KV_PREFERENCE = ("f16", "q8_0", "q4_0")
CTX_PAD = 256
N_BATCH = 512
RUNTIME_OVERHEAD = 80 * MiB  # Python, llama.cpp libraries and thread stacks in the engine process
MIN_CONTEXT = 4096


@dataclass(frozen=True)
class GpuDevice:
    name: str
    free: int
    total: int


@dataclass(frozen=True)
class Hardware:
    ram_total: int
    ram_available: int
    physical_cores: int
    gpus: tuple[GpuDevice, ...] = ()

    @property
    def vram_free(self) -> int:
        return max((g.free for g in self.gpus), default=0)

    @property
    def ram_budget(self) -> int:
        """What Folio may plan to use: the machine's RAM minus a reserve for the OS, the window and
        the user's other programs (a quarter, at least 3 GiB)."""
        return self.ram_total - max(3 * GiB, self.ram_total // 4)

    @classmethod
    def detect(cls, gpus: tuple[GpuDevice, ...] = ()) -> Hardware:
        import os

        import psutil

        vm = psutil.virtual_memory()
        cores = psutil.cpu_count(logical=False) or os.cpu_count() or 1
        # A process held to fewer CPUs (taskset, a container's cpuset, a test worker) gets no more
        # threads than those: llama.cpp's threads wait on each other, and two sharing one CPU stall both.
        if hasattr(os, "sched_getaffinity"):
            cores = min(cores, len(os.sched_getaffinity(0)))
        return cls(int(vm.total), int(vm.available), int(cores), gpus)


@dataclass(frozen=True)
class MemoryEstimate:
    weights: int
    kv: int
    recurrent: int
    output: int
    compute: int
    vocab: int  # tokenizer tables: resident, though llama.cpp does not report them as buffers
    runtime: int
    gpu: int = 0  # part of the above that lives in VRAM

    @property
    def llama_buffers(self) -> int:
        """What llama.cpp itself reports as allocated buffers."""
        return self.weights + self.kv + self.recurrent + self.output + self.compute

    @property
    def total(self) -> int:
        return self.llama_buffers + self.vocab + self.runtime

    @property
    def ram(self) -> int:
        return self.total - self.gpu


@dataclass(frozen=True)
class PlanRequest:
    prompt_tokens: int  # instructions + documents + conversation, exact when known
    answer_tokens: int = 1024
    context_cap: int = 0  # user's ceiling on n_ctx (0 = none)
    kv_type: str = "auto"  # or a forced f16 | q8_0 | q4_0
    threads: int = 0  # 0 = physical cores
    draft_tokens: int = 0  # speculative decoding's longest draft (0 = off): more logits rows, snapshots, MTP
    headroom: bool = True  # room for follow-up questions without resizing the context


@dataclass(frozen=True)
class Plan:
    fits: bool
    n_ctx: int
    needed_tokens: int
    kv_type: str
    flash_attn: bool
    n_batch: int
    n_ubatch: int
    n_threads: int
    n_gpu_layers: int
    memory: MemoryEstimate
    budget: int
    reason: str = ""  # one plain line when it does not fit
    notes: tuple[str, ...] = field(default_factory=tuple)
    draft_tokens: int = 0

    def engine_config(self, model_path: str, **rest: Any) -> EngineConfig:
        """The engine settings this plan chose, for that model; `rest` sets the other fields (or overrides)."""
        chosen: dict[str, Any] = {
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "n_batch": self.n_batch,
            "n_ubatch": self.n_ubatch,
            "kv_type": self.kv_type,
            "flash_attn": self.flash_attn,
            "n_gpu_layers": self.n_gpu_layers,
            "draft_tokens": self.draft_tokens,
        }
        return EngineConfig(model_path, **{**chosen, **rest})


# -- memory model -------------------------------------------------------------------------------------
def kv_bytes_per_token(facts: ModelFacts, kv_type: str) -> float:
    per_element = KV_BYTES_PER_ELEMENT[kv_type]
    heads = facts.kv_heads_per_layer
    return sum(h * (facts.key_length + facts.value_length) * per_element for h in heads)


def kv_type_supported(facts: ModelFacts, kv_type: str) -> bool:
    """Quantized cache rows are stored in blocks of 32: the head size must be a multiple."""
    return kv_type == "f16" or (facts.key_length % 32 == 0 and facts.value_length % 32 == 0)


def recurrent_state_bytes(facts: ModelFacts) -> int:
    ssm = facts.ssm
    d_conv, d_inner, d_state, groups = ssm["conv_kernel"], ssm["inner_size"], ssm["state_size"], ssm["group_count"]
    conv = max(d_conv - 1, 0) * (d_inner + 2 * groups * d_state)
    state = d_state * d_inner
    return len(facts.recurrent_layers) * (conv + state) * 4


def _activations_per_token(facts: ModelFacts) -> int:
    """Floats per token of the largest activation set llama.cpp keeps live in one layer."""
    e = facts.embedding_length
    ff = facts.feed_forward_length
    q = facts.head_count * facts.key_length
    kvd = facts.head_count_kv * facts.key_length
    ffn = 3 * (ff + e)
    if facts.is_hybrid or facts.is_recurrent:
        ssm = facts.ssm
        keys = ssm["state_size"] * ssm["group_count"]
        deltanet = 6 * keys + 3 * ssm["inner_size"] + 3 * e
        attention = 4 * q + 3 * e + 2 * max(0, kvd - e)
        return max(ffn, deltanet, attention)
    return ffn + q


def compute_bytes(facts: ModelFacts, *, n_ctx: int, n_ubatch: int, flash_attn: bool) -> int:
    n_ctx = _pad(n_ctx, CTX_PAD)
    attention_kinds = (1 if facts.full_attention_layers else 0) + (1 if facts.sliding_window else 0)
    masks = attention_kinds * n_ctx * n_ubatch * 2
    scores = 0 if flash_attn else int(1.5 * n_ctx * n_ubatch * facts.head_count * 4)  # KQ + softmax, f32
    return masks + scores + n_ubatch * 4 * (_activations_per_token(facts) + 128) + 128 * 1024


def vocab_bytes(facts: ModelFacts) -> int:
    return facts.vocab_size * 160 + facts.vocab_merges * 128 + 2 * MiB


def estimate_memory(
    facts: ModelFacts,
    *,
    n_ctx: int,
    kv_type: str,
    n_ubatch: int = N_BATCH,
    flash_attn: bool = True,
    n_gpu_layers: int = 0,
    draft_tokens: int = 0,
) -> MemoryEstimate:
    weights = facts.tensor_bytes or facts.size_bytes
    kv = int(_pad(n_ctx, CTX_PAD) * kv_bytes_per_token(facts, kv_type))
    compute = compute_bytes(facts, n_ctx=n_ctx, n_ubatch=n_ubatch, flash_attn=flash_attn)
    recurrent = recurrent_state_bytes(facts)
    output = facts.vocab_size * 4 * (1 + draft_tokens)
    if draft_tokens and (facts.is_hybrid or facts.is_recurrent):
        recurrent *= 1 + min(draft_tokens, n_ubatch - 2)
    if draft_tokens and facts.has_mtp:
        mtp = mtp_memory(facts, n_ctx=n_ctx, kv_type=kv_type, n_ubatch=n_ubatch)
        weights += facts.mtp_tensor_bytes
        kv += mtp.kv
        compute += mtp.compute
        output += mtp.output
    gpu = 0
    if n_gpu_layers > 0:
        share = min(n_gpu_layers, facts.n_layer) / max(facts.n_layer, 1)
        gpu = int(weights * share) + int(kv * share) + compute
    return MemoryEstimate(
        weights=weights,
        kv=kv,
        recurrent=recurrent,
        output=output,
        compute=compute,
        vocab=vocab_bytes(facts),
        runtime=RUNTIME_OVERHEAD,
        gpu=gpu,
    )


@dataclass(frozen=True)
class _MtpMemory:
    kv: int
    compute: int
    output: int


def mtp_memory(facts: ModelFacts, *, n_ctx: int, kv_type: str, n_ubatch: int) -> _MtpMemory:
    """The MTP context: KV rows for the MTP layer(s) only, one logits row, and the hidden states the main
    context hands it (one row per token of a batch)."""
    layer_kv = facts.head_count_kv * (facts.key_length + facts.value_length) * KV_BYTES_PER_ELEMENT[kv_type]
    kv = int(_pad(n_ctx, CTX_PAD) * layer_kv * facts.nextn_predict_layers)
    masks = _pad(n_ctx, CTX_PAD) * n_ubatch * 2
    compute = masks + n_ubatch * 4 * (_activations_per_token(facts) + 128) + 128 * 1024
    output = facts.vocab_size * 4 + facts.embedding_length * 4 * N_BATCH
    return _MtpMemory(kv, compute, output)


# -- planning ------------------------------------------------------------------------------------------
def plan(facts: ModelFacts, hardware: Hardware, request: PlanRequest) -> Plan:
    """The largest sensible context and the cheapest KV type that fit, or a plain 'does not fit'."""
    needed = request.prompt_tokens + request.answer_tokens
    ceiling = facts.context_length or needed
    if request.context_cap:
        ceiling = min(ceiling, request.context_cap)
    threads = request.threads or hardware.physical_cores
    if request.kv_type == "auto":
        kv_types = [k for k in KV_PREFERENCE if kv_type_supported(facts, k)]
    else:
        kv_types = [request.kv_type]
    wanted = [needed + max(2048, request.answer_tokens * 2), needed] if request.headroom else [needed]
    sizes = [min(_pad(max(w, MIN_CONTEXT), 1024), ceiling) for w in wanted]
    budget = hardware.ram_budget
    notes: list[str] = []
    best: Plan | None = None
    if needed <= ceiling:
        for n_ctx in dict.fromkeys(sizes):  # with headroom first, then just enough
            for kv in kv_types:
                gpu_layers = _gpu_layers(facts, hardware, n_ctx, kv)
                memory = estimate_memory(
                    facts, n_ctx=n_ctx, kv_type=kv, n_gpu_layers=gpu_layers, draft_tokens=request.draft_tokens
                )
                candidate = Plan(
                    True, n_ctx, needed, kv, True, N_BATCH, N_BATCH, threads, gpu_layers, memory, budget,
                    draft_tokens=request.draft_tokens,
                )  # fmt: skip
                if memory.ram <= budget:
                    best = candidate
                    break
            if best:
                break
    if best is not None:
        if best.memory.ram > hardware.ram_available:
            notes.append(
                f"{_gib(best.memory.ram)} needed but only {_gib(hardware.ram_available)} free now: "
                "close other programs or the system will swap"
            )
        if best.kv_type != "f16":
            notes.append(f"KV cache {best.kv_type} (quantized) to fit the context in memory")
        return dataclasses.replace(best, notes=tuple(notes))
    kv = kv_types[-1]
    n_ctx = min(_pad(max(needed, MIN_CONTEXT), 1024), max(ceiling, 1))
    memory = estimate_memory(facts, n_ctx=n_ctx, kv_type=kv, draft_tokens=request.draft_tokens)
    if needed > ceiling:
        capped = request.context_cap and request.context_cap < facts.context_length
        what = "your context limit" if capped else "the model"
        reason = (
            f"the selection needs about {needed:,} tokens but {what} holds {ceiling:,}; select fewer pages or documents"
        )
    else:
        reason = (
            f"the selection needs {_gib(memory.ram)} of memory for {needed:,} tokens but this machine can give "
            f"{_gib(budget)}; select fewer pages, or use a smaller model"
        )
    return Plan(False, n_ctx, needed, kv, True, N_BATCH, N_BATCH, threads, 0, memory, budget, reason)


def max_context(facts: ModelFacts, hardware: Hardware, kv_type: str = "q4_0", draft_tokens: int = 0) -> int:
    """The longest context this machine can hold for the model (at the given KV type)."""
    fixed = estimate_memory(facts, n_ctx=0, kv_type=kv_type, draft_tokens=draft_tokens).ram
    per_token = kv_bytes_per_token(facts, kv_type) + _mask_bytes_per_token(facts)
    if draft_tokens and facts.has_mtp:  # the MTP context's cache and mask grow with the context too
        mtp_growth = mtp_memory(facts, n_ctx=CTX_PAD, kv_type=kv_type, n_ubatch=N_BATCH)
        empty = mtp_memory(facts, n_ctx=0, kv_type=kv_type, n_ubatch=N_BATCH)
        per_token += (mtp_growth.kv + mtp_growth.compute - empty.kv - empty.compute) / CTX_PAD
    if per_token <= 0:
        return facts.context_length
    room = (hardware.ram_budget - fixed) / per_token
    return max(0, min(facts.context_length, int(room) // CTX_PAD * CTX_PAD))


def _mask_bytes_per_token(facts: ModelFacts) -> float:
    kinds = (1 if facts.full_attention_layers else 0) + (1 if facts.sliding_window else 0)
    return kinds * N_BATCH * 2


def _gpu_layers(facts: ModelFacts, hardware: Hardware, n_ctx: int, kv_type: str) -> int:
    """Layers to offload when llama.cpp has a GPU backend: as many as fit in free VRAM."""
    vram = hardware.vram_free
    if vram <= 0:
        return 0
    full = estimate_memory(facts, n_ctx=n_ctx, kv_type=kv_type)
    usable = vram - full.compute - 512 * MiB  # driver/context reserve
    per_layer = (full.weights + full.kv + full.recurrent) / max(facts.n_layer, 1)
    if usable <= 0 or per_layer <= 0:
        return 0
    layers = int(usable // per_layer)
    return facts.n_layer + 1 if layers >= facts.n_layer else layers  # +1: the output layer too


# -- tiers ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tier:
    name: str
    n_layer: int
    n_embd: int
    n_ff: int
    n_head: int
    n_head_kv: int
    deltanet_value_heads: int
    tied_embeddings: bool

    @property
    def parameters(self) -> int:
        e, q, kvd = self.n_embd, self.n_head * 256, self.n_head_kv * 256
        keys, values = 16 * 128, self.deltanet_value_heads * 128
        attention = e * 2 * q + 2 * e * kvd + q * e
        deltanet = e * (2 * keys + values) + e * values + 2 * e * self.deltanet_value_heads + values * e
        ffn = 3 * e * self.n_ff
        n_attention = self.n_layer // 4
        layers = n_attention * attention + (self.n_layer - n_attention) * deltanet + self.n_layer * ffn
        return layers + 248_320 * e * (1 if self.tied_embeddings else 2)

    @property
    def q4_k_m_bytes(self) -> int:
        return int(self.parameters * Q4_K_M_BYTES_PER_PARAMETER)


# The published Qwen3.5-9B Q4_K_M file: 5.23 GB for 8.95 B parameters.
Q4_K_M_BYTES_PER_PARAMETER = 5.23e9 / 8.95e9
# Published Qwen3.5 small-series geometry: every 4th layer gated attention (head dim 256), the rest
# Gated DeltaNet (16 key heads, dim 128), vocabulary 248,320, 262,144-token native context.
QWEN35_TIERS = (
    Tier("Qwen3.5-0.8B", 24, 1024, 3584, 8, 2, 16, True),
    Tier("Qwen3.5-2B", 24, 2048, 6144, 8, 2, 16, True),
    Tier("Qwen3.5-4B", 32, 2560, 9216, 16, 4, 32, True),
    Tier("Qwen3.5-9B", 32, 4096, 12288, 16, 4, 32, False),
)


def tier_facts(tier: Tier) -> ModelFacts:
    params = {
        "ssm.conv_kernel": 4,
        "ssm.inner_size": 128 * tier.deltanet_value_heads,
        "ssm.state_size": 128,
        "ssm.group_count": 16,
        "ssm.time_step_rank": tier.deltanet_value_heads,
        "feed_forward_length": tier.n_ff,
    }
    return ModelFacts(
        path="",
        size_bytes=tier.q4_k_m_bytes,
        architecture="qwen35",
        name=tier.name,
        quantization="Q4_K_M",
        context_length=262_144,
        block_count=tier.n_layer,
        embedding_length=tier.n_embd,
        head_count=tier.n_head,
        head_count_kv=tier.n_head_kv,
        key_length=256,
        value_length=256,
        vocab_size=248_320,
        chat_template=None,
        full_attention_interval=4,
        params=params,
        tensor_bytes=tier.q4_k_m_bytes,
        vocab_merges=247_587,
    )


@dataclass(frozen=True)
class TierAdvice:
    tier: str
    fits: bool
    kv_type: str
    memory: int
    max_context: int


def qwen35_tier(n_layer: int, n_embd: int) -> str | None:
    """The published Qwen3.5 size with this geometry ('Qwen3.5-9B'...), or None (call it for qwen35 models only)."""
    for tier in QWEN35_TIERS:
        if (tier.n_layer, tier.n_embd) == (n_layer, n_embd):
            return tier.name
    return None


def advise_tiers(hardware: Hardware, context_tokens: int = 262_144) -> list[TierAdvice]:
    """For each Qwen3.5 tier: does `context_tokens` fit on this machine, and the longest context that does."""
    out = []
    for tier in QWEN35_TIERS:
        facts = tier_facts(tier)
        p = plan(facts, hardware, PlanRequest(prompt_tokens=max(context_tokens - 1024, 0), headroom=False))
        out.append(TierAdvice(tier.name, p.fits, p.kv_type, p.memory.ram, max_context(facts, hardware)))
    return out


def recommended_tier(hardware: Hardware, context_tokens: int = 262_144) -> str | None:
    fitting = [a.tier for a in advise_tiers(hardware, context_tokens) if a.fits]
    return fitting[-1] if fitting else None


def _pad(n: int, to: int) -> int:
    return -(-n // to) * to


def _gib(n: float) -> str:
    return f"{n / GiB:.1f} GiB"
