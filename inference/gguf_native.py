"""A model file's GGUF header, read by llama.cpp's own GGUF reader (ggml's gguf_* C API, in the
libggml-base that llama-cpp-python ships).

Why this reader and not the `gguf` package: listing the models on a machine must be quick, and the
`gguf` package's GGUFReader takes ~10 s on a 248K-token vocabulary (benchmarks/RESULTS.md, 'Model
discovery'); llama.cpp's reader parses the same header in a small fraction of that. And it is the
very parser that will load the model, so a file discovery accepts is a file llama.cpp can open.
The full facts (inference.gguf_facts) are made from `read_contents`, once, when a model is chosen.

No tensor data is read (no ggml context is asked for), only the header: every key-value pair and the
tensor table. A file that is not a GGUF, or is damaged or cut short, gives a one-line ModelFileError.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inference.errors import ModelFileError

Scalar = int | float | bool | str

# enum gguf_type (ggml/include/gguf.h)
_STRING, _ARRAY = 8, 9
_GETTERS: dict[int, tuple[str, Any]] = {
    0: ("gguf_get_val_u8", ctypes.c_uint8),
    1: ("gguf_get_val_i8", ctypes.c_int8),
    2: ("gguf_get_val_u16", ctypes.c_uint16),
    3: ("gguf_get_val_i16", ctypes.c_int16),
    4: ("gguf_get_val_u32", ctypes.c_uint32),
    5: ("gguf_get_val_i32", ctypes.c_int32),
    6: ("gguf_get_val_f32", ctypes.c_float),
    7: ("gguf_get_val_bool", ctypes.c_bool),
    10: ("gguf_get_val_u64", ctypes.c_uint64),
    11: ("gguf_get_val_i64", ctypes.c_int64),
    12: ("gguf_get_val_f64", ctypes.c_double),
}
_LOG_ERROR = 4  # GGML_LOG_LEVEL_ERROR
_LogCallback = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
_NOT_GGUF = re.compile(r"magic")
_FUNCTION_PREFIX = re.compile(r"^\w+:\s*")


class _InitParams(ctypes.Structure):
    # struct gguf_init_params { bool no_alloc; struct ggml_context ** ctx; }
    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.c_void_p)]


@dataclass(frozen=True)
class GGUFHeader:
    """What discovery needs to know about a model file."""

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
    tensor_names: tuple[str, ...]
    nextn_layers: int = 0  # multi-token-prediction (MTP) blocks after the trunk, counted in block_count

    @property
    def n_layer(self) -> int:
        return self.block_count - self.nextn_layers

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


def read_header(path: str | Path) -> GGUFHeader:
    """The header of a GGUF model file. Raises ModelFileError for a file llama.cpp cannot read."""
    path = Path(path)
    with _opened(path) as (lib, ctx, size):
        values = _scalars(lib, ctx)
        names = tuple(_tensor_names(lib, ctx))
    arch = values.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise ModelFileError(f"{path.name}: GGUF has no general.architecture")

    def number(key: str) -> int:
        value = values.get(f"{arch}.{key}", 0)
        return int(value) if isinstance(value, (int, float)) else 0

    file_type = values.get("general.file_type")
    return GGUFHeader(
        path=str(path),
        size_bytes=size,
        architecture=arch,
        name=str(values.get("general.name") or path.stem),
        file_type=file_type if isinstance(file_type, int) and not isinstance(file_type, bool) else None,
        size_label=str(values.get("general.size_label", "")),
        general_type=str(values.get("general.type", "")),
        context_length=number("context_length"),
        block_count=number("block_count"),
        embedding_length=number("embedding_length"),
        tensor_names=names,
        nextn_layers=number("nextn_predict_layers"),
    )


@dataclass(frozen=True)
class GGUFContents:
    """A model file's whole header: what `inference.gguf_facts` makes its facts from."""

    values: dict[str, Scalar | list[Scalar]]  # scalars, and numeric arrays of up to `max_array` items
    array_lengths: dict[str, int]  # every array's length (the vocabulary's, the merges' ...)
    tensors: tuple[tuple[str, int], ...]  # name and bytes of data, in file order


def read_contents(path: str | Path, *, max_array: int = 512) -> GGUFContents:
    """Every key-value pair and the tensor table (numeric arrays read whole up to `max_array` items)."""
    with _opened(Path(path)) as (lib, ctx, _size):
        values: dict[str, Scalar | list[Scalar]] = dict(_scalars(lib, ctx))
        lengths: dict[str, int] = {}
        for i in range(int(lib.gguf_get_n_kv(ctx))):
            if int(lib.gguf_get_kv_type(ctx, i)) != _ARRAY:
                continue
            key, n = _text(lib.gguf_get_key(ctx, i)), int(lib.gguf_get_arr_n(ctx, i))
            lengths[key] = n
            kind = int(lib.gguf_get_arr_type(ctx, i))
            if n <= max_array and kind in _GETTERS:  # numbers (per-layer sizes); strings and nested arrays skipped
                items = ctypes.cast(lib.gguf_get_arr_data(ctx, i), ctypes.POINTER(_GETTERS[kind][1] * n)).contents
                values[key] = list(items)
        tensors = tuple(
            (_text(lib.gguf_get_tensor_name(ctx, i)), int(lib.gguf_get_tensor_size(ctx, i)))
            for i in range(int(lib.gguf_get_n_tensors(ctx)))
        )
        return GGUFContents(values, lengths, tensors)


def read_metadata(path: str | Path) -> dict[str, Scalar]:
    """Every key-value pair: scalars as values, arrays as their length."""
    with _opened(Path(path)) as (lib, ctx, _size):
        return _scalars(lib, ctx, array_lengths=True)


# -- the binding ---------------------------------------------------------------------------------------
@functools.cache
def _lib() -> Any:
    from inference.llama_libs import load_library

    lib = load_library("ggml-base")
    c_ctx, i64 = ctypes.c_void_p, ctypes.c_int64
    signatures: dict[str, tuple[Any, list[Any]]] = {
        "gguf_init_from_file": (c_ctx, [ctypes.c_char_p, _InitParams]),
        "gguf_free": (None, [c_ctx]),
        "gguf_get_n_kv": (i64, [c_ctx]),
        "gguf_get_key": (ctypes.c_char_p, [c_ctx, i64]),
        "gguf_find_key": (i64, [c_ctx, ctypes.c_char_p]),
        "gguf_get_kv_type": (ctypes.c_int, [c_ctx, i64]),
        "gguf_get_arr_type": (ctypes.c_int, [c_ctx, i64]),
        "gguf_get_arr_n": (ctypes.c_size_t, [c_ctx, i64]),
        "gguf_get_arr_data": (ctypes.c_void_p, [c_ctx, i64]),
        "gguf_get_val_str": (ctypes.c_char_p, [c_ctx, i64]),
        "gguf_get_n_tensors": (i64, [c_ctx]),
        "gguf_get_tensor_name": (ctypes.c_char_p, [c_ctx, i64]),
        "gguf_get_tensor_type": (ctypes.c_int, [c_ctx, i64]),
        "gguf_get_tensor_offset": (ctypes.c_size_t, [c_ctx, i64]),
        "gguf_get_tensor_size": (ctypes.c_size_t, [c_ctx, i64]),
        "gguf_get_data_offset": (ctypes.c_size_t, [c_ctx]),
        "ggml_log_get": (None, [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]),
        "ggml_log_set": (None, [ctypes.c_void_p, ctypes.c_void_p]),
    }
    signatures.update({name: (restype, [c_ctx, i64]) for name, restype in _GETTERS.values()})
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return lib


@contextmanager
def _opened(path: Path) -> Iterator[tuple[Any, int, int]]:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ModelFileError(f"{path.name}: cannot be read ({exc.strerror or exc})") from exc
    lib = _lib()
    # no_alloc and no ggml context: llama.cpp reads the header and the tensor table, never the weights.
    params = _InitParams(no_alloc=True, ctx=None)
    with _ggml_errors() as errors:
        # fsencode: the bytes of the name on POSIX, UTF-8 on Windows, which is what ggml_fopen expects there.
        ctx = lib.gguf_init_from_file(os.fsencode(path), params)
    if not ctx:
        raise ModelFileError(_why(path, errors))
    try:
        end = _data_end(lib, ctx)
        if end > size:
            # llama.cpp's loader refuses this too ('tensor data is not within the file bounds').
            raise ModelFileError(
                f"{path.name}: the file is incomplete (truncated at {size:,} of {end:,} bytes: "
                "its weights are cut short)"
            )
        yield lib, ctx, size
    finally:
        lib.gguf_free(ctx)


def _why(path: Path, errors: list[str]) -> str:
    if not errors:
        return f"{path.name}: cannot be read (llama.cpp gave no reason)"
    first = errors[0]
    if "failed to open" in first:
        return f"{path.name}: cannot be read"
    if _NOT_GGUF.search(first):
        return f"{path.name}: not a GGUF model file"
    reason = " ".join(_FUNCTION_PREFIX.sub("", first).split())  # one line, without the C function name
    if "only supports up to version" in first:  # written by a newer llama.cpp
        return f"{path.name}: a GGUF version this llama.cpp cannot read ({reason})"
    return f"{path.name}: the GGUF header is damaged or cut short ({reason})"


def _data_end(lib: Any, ctx: int) -> int:
    """Where the last tensor's data ends, from the start of the file."""
    n = int(lib.gguf_get_n_tensors(ctx))
    if n == 0:
        return 0
    ends = (int(lib.gguf_get_tensor_offset(ctx, i)) + int(lib.gguf_get_tensor_size(ctx, i)) for i in range(n))
    return int(lib.gguf_get_data_offset(ctx)) + max(ends)


def _scalars(lib: Any, ctx: int, *, array_lengths: bool = False) -> dict[str, Scalar]:
    # Every getter GGML_ASSERTs on a type mismatch (an abort, not an error), so each key is read
    # with the getter of its own type.
    values: dict[str, Scalar] = {}
    for i in range(int(lib.gguf_get_n_kv(ctx))):
        key = _text(lib.gguf_get_key(ctx, i))
        kind = int(lib.gguf_get_kv_type(ctx, i))
        if kind == _STRING:
            values[key] = _text(lib.gguf_get_val_str(ctx, i))
        elif kind == _ARRAY:
            if array_lengths:
                values[key] = int(lib.gguf_get_arr_n(ctx, i))
        elif kind in _GETTERS:
            values[key] = getattr(lib, _GETTERS[kind][0])(ctx, i)
    return values


def _tensor_names(lib: Any, ctx: int) -> Iterator[str]:
    for i in range(int(lib.gguf_get_n_tensors(ctx))):
        yield _text(lib.gguf_get_tensor_name(ctx, i))


def _text(raw: bytes | None) -> str:
    return (raw or b"").decode("utf-8", "replace")


# -- ggml's log --------------------------------------------------------------------------------------------
# gguf_init_from_file says why it failed only through ggml's log (stderr by default). While it runs,
# this thread's error lines are kept for the message; any other thread's lines go where they went before.
_log_lock = threading.Lock()
_capture: dict[str, Any] = {}


def _on_log(level: int, text: bytes | None, _user: Any) -> None:
    if threading.get_ident() == _capture.get("thread"):
        if level == _LOG_ERROR and text and text.strip():
            _capture["errors"].append(_text(text).strip())
        return
    previous, user = _capture.get("previous"), _capture.get("user")
    if previous:
        _LogCallback(previous)(level, text, user)


_log_callback = _LogCallback(_on_log)


@contextmanager
def _ggml_errors() -> Iterator[list[str]]:
    lib = _lib()
    errors: list[str] = []
    with _log_lock:
        previous, user = ctypes.c_void_p(), ctypes.c_void_p()
        lib.ggml_log_get(ctypes.byref(previous), ctypes.byref(user))
        _capture.update(thread=threading.get_ident(), errors=errors, previous=previous.value, user=user.value)
        lib.ggml_log_set(ctypes.cast(_log_callback, ctypes.c_void_p), None)
        try:
            yield errors
        finally:
            lib.ggml_log_set(previous, user)
            _capture.clear()
