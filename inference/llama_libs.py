"""Where llama-cpp-python keeps llama.cpp's shared libraries, and loading one of them by name."""

from __future__ import annotations

import ctypes
from pathlib import Path


def package_dir() -> Path:
    import llama_cpp

    return Path(llama_cpp.__file__).resolve().parent


def lib_dir() -> Path:
    """llama_cpp/lib: where the wheel, a source build and the frozen app all put llama.cpp's libraries."""
    return package_dir() / "lib"


def load_library(name: str) -> ctypes.CDLL:
    """One of llama.cpp's libraries ('ggml-base', 'ggml', 'llama', ...), loaded the way llama_cpp loads
    its own (platform file names, the DLL search path on Windows), so it is the copy llama_cpp uses."""
    from llama_cpp._ctypes_extensions import load_shared_library

    return load_shared_library(name, lib_dir())
