"""Build llama-cpp-python once, portably, into a wheelhouse outside the checkout.

Why: a -march=native build crashed inside llama_decode on AVX-512/AMX build
machines, and a 5-7 minute source build on every fresh clone is too slow. The
wheelhouse directory is keyed by version and build flags, so a wheel built with
other flags can never be picked up by mistake (pip's global cache is bypassed).

Profiles (FOLIO_LLAMA_PROFILE or --profile):
  dev      what `make run` / `make test` use: one AVX2-baseline CPU library (Metal on macOS).
  release  what the installers ship: on Windows and Linux every x86-64 CPU variant as a
           loadable backend (GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS; ggml picks the best one
           for the CPU at run time, see inference/backends.py), plus Vulkan on Windows so any GPU
           vendor accelerates; Metal on macOS.
FOLIO_LLAMA_CMAKE_ARGS overrides both (the wheelhouse key follows the flags either way).

What keeps the build air-gapped (checked in the vendored llama.cpp CMake of 0.3.36):
  - LLAMA_CURL is deprecated and ignored there; the HTTP client (cpp-httplib + download.cpp) lives
    only in libllama-common, which llama-cpp-python builds but neither installs into llama_cpp/lib
    nor loads, and the bundle leaves out. LLAMA_OPENSSL=OFF keeps HTTPS out of it as well.
  - GGML_RPC=OFF: the RPC backend talks TCP. LLAMA_BUILD_BORINGSSL and GGML_OPENMP_FETCH stay off
    (both download sources at build time). Server, tools and examples are off in a sub-project build.
  tests/slow/test_bundle.py checks the shipped libraries import no socket functions.

Usage: python tools/llama_wheel.py [--print-dir] [--profile dev|release]   -> prints the wheel path
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import platformdirs

VERSION = "0.3.36"
# Portable CPU build: AVX2 baseline that every x86-64 machine from ~2013 runs. These strings key
# the wheelhouse of every existing checkout: change them only on purpose (it forces a rebuild).
CMAKE_ARGS_BY_PLATFORM = {
    "linux": "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON "
    "-DGGML_F16C=ON -DGGML_BMI2=ON -DLLAMA_CURL=OFF",
    "darwin": "-DGGML_NATIVE=OFF -DGGML_METAL=ON -DLLAMA_CURL=OFF",
    "win32": "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAMA_CURL=OFF",
}

_AIRGAP = "-DGGML_RPC=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_BORINGSSL=OFF -DGGML_OPENMP_FETCH=OFF"
RELEASE_CMAKE_ARGS_BY_PLATFORM = {
    # GGML_NATIVE must be OFF with GGML_BACKEND_DL (ggml-cpu's CMake refuses the combination).
    "linux": f"-DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON {_AIRGAP}",
    # Apple clang's default arm64 target is apple-m1, so NATIVE=OFF runs on every Apple Silicon Mac;
    # Metal is linked in (llama-cpp-python forces GGML_METAL and the embedded shader library on Apple).
    "darwin": "-DGGML_NATIVE=OFF -DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON "
    f"-DCMAKE_OSX_DEPLOYMENT_TARGET=13.3 {_AIRGAP}",
    # Vulkan beside the CPU variants: ggml loads ggml-vulkan.dll when the driver's vulkan-1.dll is
    # there and falls back to the best CPU variant otherwise. OpenMP off: MSVC's vcomp140.dll is not
    # on every machine and ggml's own thread pool does the job.
    "win32": f"-DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON -DGGML_VULKAN=ON "
    f"-DGGML_OPENMP=OFF {_AIRGAP}",
}
PROFILES = {"dev": CMAKE_ARGS_BY_PLATFORM, "release": RELEASE_CMAKE_ARGS_BY_PLATFORM}


def profile() -> str:
    if "--profile" in sys.argv:
        return sys.argv[sys.argv.index("--profile") + 1]
    return os.environ.get("FOLIO_LLAMA_PROFILE") or "dev"


def cmake_args() -> str:
    table = PROFILES.get(profile())
    if table is None:
        raise SystemExit(f"unknown llama.cpp build profile {profile()!r} (dev or release)")
    return os.environ.get("FOLIO_LLAMA_CMAKE_ARGS") or table.get(sys.platform, table["linux"])


def wheelhouse() -> Path:
    key = hashlib.sha256(f"{VERSION}|{cmake_args()}|{sys.version_info[:2]}".encode()).hexdigest()
    return Path(platformdirs.user_cache_dir("folio-build")) / "wheelhouse" / f"llama-cpp-python-{VERSION}-{key[:12]}"


def find_wheel(directory: Path) -> Path | None:
    wheels = sorted(directory.glob(f"llama_cpp_python-{VERSION}-*.whl"))
    return wheels[0] if wheels else None


def build() -> Path:
    target = wheelhouse()
    existing = find_wheel(target)
    if existing:
        return existing
    staging = target.with_name(target.name + ".partial")
    staging.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CMAKE_ARGS=cmake_args(), FORCE_CMAKE="1")
    print(f"building llama-cpp-python {VERSION} ({cmake_args()}) - takes 5-7 minutes once", file=sys.stderr)
    try:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                f"llama-cpp-python=={VERSION}",
                "--no-deps",
                "--no-binary",
                "llama-cpp-python",
                "--no-cache-dir",
                "-w",
                str(staging),
            ],
            env=env,
            check=True,
            # stdout is the wheel path for the Makefile's $(...); everything pip says goes to stderr.
            stdout=sys.stderr,
        )
    except subprocess.CalledProcessError as exc:
        raise SystemExit(
            f"pip could not build llama-cpp-python {VERSION} (exit {exc.returncode}, its output is above); "
            "it needs a C/C++ compiler, CMake and access to PyPI"
        ) from None
    built = find_wheel(staging)
    if built is None:
        raise SystemExit(f"pip produced no llama-cpp-python wheel in {staging}")
    # Rename the whole folder last so an interrupted build never looks finished.
    if target.exists():
        for old in target.iterdir():
            old.unlink()
        target.rmdir()
    staging.rename(target)
    return target / built.name


if __name__ == "__main__":
    if "--print-dir" in sys.argv:
        print(wheelhouse())
    else:
        print(build())
