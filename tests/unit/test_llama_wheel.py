"""tools/llama_wheel.py on a fresh machine: the Makefile installs whatever it prints, so stdout must be
exactly one line, the wheel path, whether the wheelhouse is cold (pip builds) or warm.

The cold path runs for real: an empty user cache, `pip wheel` from source with the build flags in
CMAKE_ARGS. Only the source is small: a local llama-cpp-python 0.3.36 sdist whose in-tree build
backend writes a wheel in a blink instead of compiling llama.cpp for minutes, served to pip from a
folder (no index, no network)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import uuid
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "tools" / "llama_wheel.py"
VERSION = "0.3.36"
DIST = "llama_cpp_python"

# A PEP 517 backend with no requirements (so pip's isolated build env installs nothing). It talks on
# stdout like a real build does and records the build flags it was given inside the wheel.
_BACKEND = """
import base64, hashlib, json, os, zipfile

NAME, VERSION = "llama_cpp_python", "0.3.36"
INFO = f"{NAME}-{VERSION}.dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    print("-- fake llama.cpp build: configuring with", os.environ.get("CMAKE_ARGS"))
    files = {
        "folio_fake_build.json": json.dumps(
            {"CMAKE_ARGS": os.environ.get("CMAKE_ARGS"), "FORCE_CMAKE": os.environ.get("FORCE_CMAKE")}
        ),
        f"{INFO}/METADATA": f"Metadata-Version: 2.1\\nName: llama-cpp-python\\nVersion: {VERSION}\\n",
        f"{INFO}/WHEEL": "Wheel-Version: 1.0\\nGenerator: folio-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append(f"{INFO}/RECORD,,")
    files[f"{INFO}/RECORD"] = "\\n".join(record) + "\\n"
    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel
"""


def _fake_sdist(folder: Path) -> Path:
    folder.mkdir(parents=True)
    root = f"{DIST}-{VERSION}"
    members = {
        "PKG-INFO": f"Metadata-Version: 2.1\nName: llama-cpp-python\nVersion: {VERSION}\n",
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "folio_fake_backend"\nbackend-path = ["."]\n',
        "folio_fake_backend.py": _BACKEND,
    }
    sdist = folder / f"{root}.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{root}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return sdist


def _offline_env(cache: Path, links: Path, flags: str) -> dict[str, str]:
    """An empty user cache, these build flags, and pip fed from `links` only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        XDG_CACHE_HOME=str(cache),  # platformdirs on Linux and macOS
        WIN_PD_OVERRIDE_LOCAL_APPDATA=str(cache),  # platformdirs on Windows
        FOLIO_LLAMA_CMAKE_ARGS=flags,
        PIP_CONFIG_FILE=os.devnull,  # this machine's pip.conf (indexes, find-links) plays no part
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(links),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300, cwd=REPO
    )


def test_prints_only_the_wheel_path_on_a_cold_and_a_warm_wheelhouse(tmp_path: Path) -> None:
    links = tmp_path / "links"
    _fake_sdist(links)
    cache = tmp_path / "cache"
    # Flags no real build uses, unique per run: the wheelhouse key is new, so the first run is cold.
    flags = f"-DGGML_NATIVE=OFF -DFOLIO_TEST_RUN={uuid.uuid4().hex}"
    env = _offline_env(cache, links, flags)
    where = Path(_run(env, "--print-dir").stdout.strip())
    if not where.is_relative_to(cache):
        pytest.skip(f"platformdirs here ignores the cache override (wheelhouse would be {where})")
    assert not where.exists()

    cold = _run(env)
    assert cold.returncode == 0, cold.stderr
    lines = cold.stdout.splitlines()
    assert len(lines) == 1, f"stdout must be only the wheel path, got:\n{cold.stdout}"
    wheel = Path(lines[0])
    assert wheel.parent == where and wheel.is_file() and wheel.name == f"{DIST}-{VERSION}-py3-none-any.whl"
    assert "building llama-cpp-python" in cold.stderr
    assert "Successfully built llama-cpp-python" in cold.stderr  # pip's own chatter went to stderr
    with zipfile.ZipFile(wheel) as archive:
        built_with = json.loads(archive.read("folio_fake_build.json"))
    assert built_with == {"CMAKE_ARGS": flags, "FORCE_CMAKE": "1"}
    assert not where.with_name(where.name + ".partial").exists()

    warm = _run(env)
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout == cold.stdout
    assert "building" not in warm.stderr  # served from the wheelhouse, pip not run


def test_a_failed_build_prints_nothing_on_stdout_and_leaves_no_wheel(tmp_path: Path) -> None:
    """No source to build from: pip fails; the Makefile must get an empty stdout and a non-zero exit."""
    empty = tmp_path / "links"
    empty.mkdir()
    env = _offline_env(tmp_path / "cache", empty, f"-DFOLIO_TEST_RUN={uuid.uuid4().hex}")
    where = Path(_run(env, "--print-dir").stdout.strip())
    if not where.is_relative_to(tmp_path):
        pytest.skip(f"platformdirs here ignores the cache override (wheelhouse would be {where})")
    failed = _run(env)
    assert failed.returncode != 0
    assert failed.stdout == ""
    assert failed.stderr.strip().splitlines()[-1].startswith("pip could not build llama-cpp-python")
    assert not where.exists()
