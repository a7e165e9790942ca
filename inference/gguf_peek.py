"""A quick look at a GGUF's leading metadata (architecture, name, size, quantization) in milliseconds.

inference.gguf_facts reads the whole header with the `gguf` package, which takes ~10 s on a
248K-token vocabulary. Listing the models already on a machine only needs the first keys, which
writers put before the tokenizer arrays; this reader stops there.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from inference.errors import ModelFileError

_MAGIC = b"GGUF"
# GGUF value types: fixed sizes (struct codes, little-endian) of the scalar types.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
_MAX_KEY = 1 << 16
_MAX_STRING = 1 << 24  # a chat template can be long; anything larger means a damaged file


@dataclass(frozen=True)
class GGUFPeek:
    path: str
    size_bytes: int
    architecture: str
    name: str
    file_type: int | None
    size_label: str
    general_type: str
    context_length: int
    block_count: int
    embedding_length: int

    @property
    def is_projector(self) -> bool:
        """A vision projector (mmproj), not a chat model."""
        return self.architecture == "clip" or self.general_type in ("mmproj", "projector")

    @property
    def quantization(self) -> str:
        if self.file_type is None:
            return "unknown"
        from gguf import LlamaFileType

        try:
            return LlamaFileType(self.file_type).name.removeprefix("MOSTLY_")
        except ValueError:
            return f"type {self.file_type}"


def peek_gguf(path: str | Path) -> GGUFPeek:
    """The leading metadata of a GGUF. Raises ModelFileError for a file that is not one."""
    path = Path(path)
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            values = _leading_values(handle, path.name)
    except OSError as exc:
        raise ModelFileError(f"{path.name}: cannot be read ({exc.strerror or exc})") from exc
    arch = str(values.get("general.architecture", ""))
    if not arch:
        raise ModelFileError(f"{path.name}: GGUF has no general.architecture")

    def number(key: str) -> int:
        value = values.get(f"{arch}.{key}", 0)
        return int(value) if isinstance(value, (int, float)) else 0

    file_type = values.get("general.file_type")
    return GGUFPeek(
        path=str(path),
        size_bytes=size,
        architecture=arch,
        name=str(values.get("general.name") or path.stem),
        file_type=int(file_type) if isinstance(file_type, int) else None,
        size_label=str(values.get("general.size_label", "")),
        general_type=str(values.get("general.type", "")),
        context_length=number("context_length"),
        block_count=number("block_count"),
        embedding_length=number("embedding_length"),
    )


def tensor_names(path: str | Path) -> list[str]:
    """Every tensor name in the file. Skips the vocabulary without decoding it (well under a second)."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            n_tensors, n_kv = _header(handle, path.name)
            for _ in range(n_kv):
                _read_string(handle, path.name, _MAX_KEY)
                (kind,) = _unpack(handle, "<I", path.name)
                _skip_value(handle, kind, path.name)
            names = []
            for _ in range(n_tensors):
                names.append(_read_string(handle, path.name, _MAX_KEY))
                (n_dims,) = _unpack(handle, "<I", path.name)
                handle.seek(8 * n_dims + 4 + 8, 1)  # dims, type, offset
            return names
    except OSError as exc:
        raise ModelFileError(f"{path.name}: cannot be read ({exc.strerror or exc})") from exc


def _header(handle: IO[bytes], name: str) -> tuple[int, int]:
    head = handle.read(24)
    if len(head) < 24 or head[:4] != _MAGIC:
        raise ModelFileError(f"{name}: not a GGUF model file")
    version = struct.unpack_from("<I", head, 4)[0]
    if version not in (2, 3):
        raise ModelFileError(f"{name}: unsupported GGUF version")
    n_tensors, n_kv = struct.unpack_from("<QQ", head, 8)
    return int(n_tensors), int(n_kv)


def _leading_values(handle: IO[bytes], name: str) -> dict[str, Any]:
    _, n_kv = _header(handle, name)
    values: dict[str, Any] = {}
    for _ in range(n_kv):
        key = _read_string(handle, name, _MAX_KEY)
        (kind,) = _unpack(handle, "<I", name)
        if key.startswith("tokenizer.") and "general.architecture" in values:
            break  # the vocabulary follows: everything needed came before it
        values[key] = _read_value(handle, kind, name)
    return values


def _unpack(handle: IO[bytes], fmt: str, name: str) -> tuple[Any, ...]:
    size = struct.calcsize(fmt)
    data = handle.read(size)
    if len(data) < size:
        raise ModelFileError(f"{name}: the GGUF header is truncated")
    return struct.unpack(fmt, data)


def _read_string(handle: IO[bytes], name: str, limit: int = _MAX_STRING) -> str:
    (length,) = _unpack(handle, "<Q", name)
    if length > limit:
        raise ModelFileError(f"{name}: the GGUF header is damaged")
    data = handle.read(length)
    if len(data) < length:
        raise ModelFileError(f"{name}: the GGUF header is truncated")
    return data.decode("utf-8", errors="replace")


def _read_value(handle: IO[bytes], kind: int, name: str) -> Any:
    if kind in _SCALARS:
        return _unpack(handle, "<" + _SCALARS[kind], name)[0]
    if kind == _STRING:
        return _read_string(handle, name)
    if kind == _ARRAY:
        (item_kind, count) = _unpack(handle, "<IQ", name)
        if item_kind in _SCALARS:
            width = struct.calcsize(_SCALARS[item_kind])
            if count * width > _MAX_STRING:
                handle.seek(count * width, 1)
                return None
            data = handle.read(count * width)
            if len(data) < count * width:
                raise ModelFileError(f"{name}: the GGUF header is truncated")
            return list(struct.unpack(f"<{count}{_SCALARS[item_kind]}", data))
        return [_read_value(handle, item_kind, name) for _ in range(count)]
    raise ModelFileError(f"{name}: the GGUF header is damaged (value type {kind})")


def _skip_value(handle: IO[bytes], kind: int, name: str) -> None:
    if kind in _SCALARS:
        handle.seek(struct.calcsize(_SCALARS[kind]), 1)
    elif kind == _STRING:
        (length,) = _unpack(handle, "<Q", name)
        handle.seek(length, 1)
    elif kind == _ARRAY:
        (item_kind, count) = _unpack(handle, "<IQ", name)
        if item_kind in _SCALARS:
            handle.seek(count * struct.calcsize(_SCALARS[item_kind]), 1)
        else:
            for _ in range(count):
                _skip_value(handle, item_kind, name)
    else:
        raise ModelFileError(f"{name}: the GGUF header is damaged (value type {kind})")
