"""Load llama.cpp's compute backends when they are built as loadable modules (GGML_BACKEND_DL).

The installers' llama.cpp ships every x86-64 CPU variant (and Vulkan on Windows) as separate
libraries; ggml scores each against the running machine and keeps the best. By default ggml looks
for them only beside the executable and in the current directory - neither is where a wheel or the
frozen app keeps them - and llama-cpp-python 0.3.36 never calls the loader itself. In the default
build (backends linked in) the registry is already populated and this does nothing.
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path
from typing import Any

BACKEND_SUFFIX = ".dll" if sys.platform == "win32" else ".so"


def backend_dirs() -> list[Path]:
    """Where loadable backends live: llama_cpp/lib in the frozen app (the spec puts them there),
    <site-packages>/bin in a wheel install (scikit-build installs MODULE libraries there)."""
    from inference.llama_libs import lib_dir, package_dir

    return [lib_dir(), package_dir().parent / "bin"]


def _ggml() -> Any:
    from llama_cpp._ggml import libggml

    return declare(libggml)


def declare(libggml: Any) -> Any:
    """Signatures of the few ggml registry functions used here, on a loaded libggml."""
    libggml.ggml_backend_reg_count.restype = ctypes.c_size_t
    libggml.ggml_backend_reg_count.argtypes = []
    libggml.ggml_backend_reg_get.restype = ctypes.c_void_p
    libggml.ggml_backend_reg_get.argtypes = [ctypes.c_size_t]
    libggml.ggml_backend_reg_name.restype = ctypes.c_char_p
    libggml.ggml_backend_reg_name.argtypes = [ctypes.c_void_p]
    libggml.ggml_backend_load_all_from_path.restype = None
    libggml.ggml_backend_load_all_from_path.argtypes = [ctypes.c_char_p]
    return libggml


def _has_backend_modules(directory: Path) -> bool:
    if not directory.is_dir():
        return False
    return any(
        p.name.endswith(BACKEND_SUFFIX) and "ggml-" in p.name and "ggml-base" not in p.name for p in directory.iterdir()
    )


def load_backends(ggml: Any = None, directories: list[Path] | None = None) -> list[str]:
    """Make sure llama.cpp has its backends; return their names (e.g. ['CPU'] or ['Vulkan', 'CPU'])."""
    ggml = ggml if ggml is not None else _ggml()
    for directory in backend_dirs() if directories is None else directories:
        if ggml.ggml_backend_reg_count() > 0:
            break
        if _has_backend_modules(directory):
            ggml.ggml_backend_load_all_from_path(str(directory).encode("utf-8"))
    return [
        ggml.ggml_backend_reg_name(ggml.ggml_backend_reg_get(i)).decode("utf-8", "replace")
        for i in range(ggml.ggml_backend_reg_count())
    ]
