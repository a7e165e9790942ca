"""Facts about a model, read from its GGUF metadata (by llama.cpp's own reader) — never hard-coded."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inference.errors import ModelFileError

GGUF_MAGIC = b"GGUF"
FACTS_VERSION = 2  # bump when ModelFacts gains fields, so cached facts are read again
# Architectures whose layers keep a recurrent state that cannot be rolled back.
HYBRID_ARCHITECTURES = {"qwen35", "qwen3next", "jamba", "falcon-h1", "granitehybrid", "lfm2", "nemotron_h"}
RECURRENT_ARCHITECTURES = {"mamba", "mamba2", "rwkv6", "rwkv7", "rwkv6qwen2", "arwkv7"}
# Architectures llama.cpp knows but that cannot chat: encoders, embedders, audio decoders.
NOT_CHAT_ARCHITECTURES = {
    "bert", "modern-bert", "nomic-bert", "nomic-bert-moe", "neo-bert", "jina-bert-v2", "jina-bert-v3",
    "t5encoder", "wavtokenizer-dec", "eurobert",
}  # fmt: skip


@dataclass(frozen=True)
class ModelFacts:
    path: str
    size_bytes: int
    architecture: str
    name: str
    quantization: str
    context_length: int
    block_count: int
    embedding_length: int
    head_count: int
    head_count_kv: int
    key_length: int
    value_length: int
    vocab_size: int
    chat_template: str | None
    full_attention_interval: int | None = None
    nextn_predict_layers: int = 0
    sliding_window: int | None = None
    is_mmproj: bool = False
    projector_type: str | None = None
    params: dict[str, Any] = field(default_factory=dict)  # every '<arch>.*' scalar, for the planner
    tensor_bytes: int = 0  # weights llama.cpp loads (MTP layers excluded: llama.cpp skips them by default)
    mtp_tensor_bytes: int = 0
    vocab_merges: int = 0
    version: int = FACTS_VERSION

    @property
    def is_hybrid(self) -> bool:
        return self.architecture in HYBRID_ARCHITECTURES

    @property
    def is_recurrent(self) -> bool:
        return self.architecture in RECURRENT_ARCHITECTURES

    @property
    def n_layer(self) -> int:
        """Layers of the main model: block_count minus the multi-token-prediction (MTP) layers."""
        return self.block_count - self.nextn_predict_layers

    @property
    def has_mtp(self) -> bool:
        return self.nextn_predict_layers > 0

    @property
    def mtp_summary(self) -> str:
        """Whether the file carries multi-token-prediction layers, which draft tokens for faster answers."""
        if not self.has_mtp:
            return "no MTP layers (drafts come from the documents only)"
        n = self.nextn_predict_layers
        return f"{n} MTP layer{'s' if n != 1 else ''} (they draft tokens: faster answers)"

    def _per_layer(self, key: str, default: int) -> list[int]:
        value = self.params.get(key, default)
        if isinstance(value, list):
            return [int(v) for v in value[: self.n_layer]] + [0] * max(0, self.n_layer - len(value))
        return [int(value)] * self.n_layer

    @property
    def full_attention_layers(self) -> list[int]:
        flags = self.params.get("attention.recurrent_layers")
        if isinstance(flags, list) and flags:
            return [i for i in range(self.n_layer) if i >= len(flags) or not flags[i]]
        if self.full_attention_interval:
            k = self.full_attention_interval
            return [i for i in range(self.n_layer) if (i + 1) % k == 0]
        if self.is_recurrent:
            return []
        return list(range(self.n_layer))

    @property
    def recurrent_layers(self) -> list[int]:
        full = set(self.full_attention_layers)
        return [i for i in range(self.n_layer) if i not in full]

    @property
    def kv_heads_per_layer(self) -> list[int]:
        heads = self._per_layer("attention.head_count_kv", self.head_count_kv)
        full = set(self.full_attention_layers)
        return [h if i in full else 0 for i, h in enumerate(heads)]

    @property
    def ssm(self) -> dict[str, int]:
        """Recurrent-layer sizes (Mamba/Gated DeltaNet): conv kernel, inner size, state size, groups, heads."""
        keys = ("conv_kernel", "inner_size", "state_size", "group_count", "time_step_rank")
        return {k: int(self.params.get(f"ssm.{k}", 0)) for k in keys}

    @property
    def feed_forward_length(self) -> int:
        return max(self._per_layer("feed_forward_length", 0), default=0)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ModelFacts:
        raw = json.loads(text)
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})

    @property
    def is_current(self) -> bool:
        """False for facts stored by an older Folio that did not record every field yet."""
        return self.version == FACTS_VERSION


def _check_header(path: Path) -> int:
    if not path.exists():
        raise ModelFileError(f"{path}: no such file")
    if path.is_dir():
        raise ModelFileError(f"{path}: is a folder, not a GGUF file")
    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(8)
    if head[:4] != GGUF_MAGIC:
        raise ModelFileError(f"{path.name}: not a GGUF model file")
    if len(head) < 8 or int.from_bytes(head[4:8], "little") not in (2, 3):
        raise ModelFileError(f"{path.name}: unsupported GGUF version")
    return size


def read_facts(path: str | Path) -> ModelFacts:
    """Read the GGUF header. Raises ModelFileError for anything that is not a usable GGUF.

    The header is parsed by llama.cpp's own reader (inference.gguf_native): the `gguf` package walks
    every vocabulary entry in Python, 10-40 s for a 248K-token vocabulary on a laptop."""
    from inference.gguf_native import read_contents

    path = Path(path).expanduser().resolve()
    size = _check_header(path)
    contents = read_contents(path)  # refuses a damaged header or weights cut short, in one line
    fields: dict[str, Any] = contents.values
    arch = fields.get("general.architecture")
    if not arch:
        raise ModelFileError(f"{path.name}: GGUF has no general.architecture")
    arch = str(arch)
    _refuse_unsupported(path, arch, fields)
    params: dict[str, Any] = {}
    for key, value in fields.items():
        if key.startswith(arch + ".") and (
            isinstance(value, (int, float, str, bool))
            or (isinstance(value, list) and all(isinstance(v, (int, float)) for v in value))
        ):
            params[key[len(arch) + 1 :]] = value
    if arch == "clip":
        return _mmproj_facts(path, size, fields, params)
    from gguf import LlamaFileType

    file_type = fields.get("general.file_type")
    try:
        quant = LlamaFileType(int(file_type)).name.removeprefix("MOSTLY_") if file_type is not None else "unknown"
    except ValueError:
        quant = f"type {file_type}"
    vocab_size = contents.array_lengths.get("tokenizer.ggml.tokens")
    if vocab_size is None:
        raise ModelFileError(f"{path.name}: the GGUF has no vocabulary (tokenizer); it cannot be used to chat")
    block_count = int(params.get("block_count", 0))
    embedding_length = int(params.get("embedding_length", 0))
    if block_count <= 0 or embedding_length <= 0 or not contents.tensors:
        raise ModelFileError(f"{path.name}: the GGUF lacks the model's layers or sizes; it cannot be loaded")
    nextn = int(params.get("nextn_predict_layers", 0))
    mtp_prefixes = tuple(f"blk.{i}." for i in range(block_count - nextn, block_count))
    mtp_bytes = sum(n for name, n in contents.tensors if nextn and name.startswith(mtp_prefixes))
    total_bytes = sum(n for _name, n in contents.tensors)
    head_count_kv = params.get("attention.head_count_kv", params.get("attention.head_count", 0))
    if isinstance(head_count_kv, list):  # per-layer list: recurrent layers carry 0
        head_count_kv = max(head_count_kv, default=0)
    head_count = params.get("attention.head_count", 0)
    if isinstance(head_count, list):
        head_count = max(head_count, default=0)
    head_dim = embedding_length // head_count if head_count else 0
    return ModelFacts(
        path=str(path),
        size_bytes=size,
        architecture=arch,
        name=str(fields.get("general.name", path.stem)),
        quantization=quant,
        context_length=int(params.get("context_length", 0)),
        block_count=block_count,
        embedding_length=embedding_length,
        head_count=int(head_count),
        head_count_kv=int(head_count_kv),
        key_length=int(params.get("attention.key_length", head_dim)),
        value_length=int(params.get("attention.value_length", head_dim)),
        vocab_size=vocab_size,
        chat_template=fields.get("tokenizer.chat_template"),
        full_attention_interval=params.get("full_attention_interval"),
        nextn_predict_layers=nextn,
        sliding_window=params.get("attention.sliding_window"),
        params=params,
        tensor_bytes=total_bytes - mtp_bytes,
        mtp_tensor_bytes=mtp_bytes,
        vocab_merges=contents.array_lengths.get("tokenizer.ggml.merges", 0),
    )


def _refuse_unsupported(path: Path, arch: str, fields: dict[str, Any]) -> None:
    from gguf.constants import MODEL_ARCH_NAMES

    if fields.get("general.type") == "adapter":
        raise ModelFileError(f"{path.name}: is a LoRA adapter, not a model")
    if arch == "clip":
        return
    if arch not in set(MODEL_ARCH_NAMES.values()):
        raise ModelFileError(f"{path.name}: architecture {arch!r} is not supported by this version of Folio")
    if arch in NOT_CHAT_ARCHITECTURES:
        raise ModelFileError(f"{path.name}: is a {arch} encoder/embedding model, not a chat model")


def _mmproj_facts(path: Path, size: int, fields: dict[str, Any], params: dict[str, Any]) -> ModelFacts:
    projector = fields.get("clip.projector_type") or fields.get("clip.vision.projector_type")
    return ModelFacts(
        path=str(path),
        size_bytes=size,
        architecture="clip",
        name=str(fields.get("general.name", path.stem)),
        quantization=str(fields.get("general.file_type", "unknown")),
        context_length=0,
        block_count=int(params.get("vision.block_count", 0)),
        embedding_length=int(params.get("vision.embedding_length", 0)),
        head_count=0,
        head_count_kv=0,
        key_length=0,
        value_length=0,
        vocab_size=0,
        chat_template=None,
        is_mmproj=True,
        projector_type=str(projector) if projector else None,
        params=params,
    )
