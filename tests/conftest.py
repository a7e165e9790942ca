"""Shared fixtures. Every test gets its own FOLIO_HOME; the starter model is assembled once per run."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

# The suite must give the same verdict on every run (CI lands on green): property tests use a
# fixed sequence of examples and no time limit on a loaded machine. FOLIO_HYPOTHESIS=explore draws
# new examples, to hunt for bugs on purpose.
settings.register_profile("folio", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, max_examples=1000, print_blob=True)
settings.load_profile(os.environ.get("FOLIO_HYPOTHESIS", "folio"))

# On for the whole suite: a test fails if it (or any child process) reaches past loopback.
pytest_plugins = ["tests.plugins.no_network", "tests.plugins.figures"]

REPO = Path(__file__).resolve().parent.parent
CORPUS = (REPO.parent / "shared" / "corpus").resolve()
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (`make test` runs two workers), each worker and every process it starts keep
    to one CPU of their own: llama.cpp then plans one thread per engine (inference/planner.py reads
    the affinity), so two workers' models never fight over the same cores."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw") and hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[int(worker[2:]) % len(cpus)]})


@pytest.fixture(autouse=True)
def folio_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "folio-home"
    monkeypatch.setenv("FOLIO_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def shared_models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One assembled starter model (and its cached GGUF facts) for the whole run."""
    from app.models.registry import assemble_starter, read_facts_cached

    models = tmp_path_factory.mktemp("models")
    path = assemble_starter(models)
    read_facts_cached(path, models / "facts")
    return models


@pytest.fixture(scope="session")
def starter_gguf(shared_models_dir: Path) -> Path:
    return next((shared_models_dir / "starter").glob("*.gguf"))


@pytest.fixture(scope="session")
def tiny_qwen35(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-layer random-weight qwen35 GGUF (3 Gated DeltaNet + 1 gated attention layer, byte-level BPE
    vocabulary with Qwen's special tokens, a Qwen3.5-style chat template) that llama.cpp loads and runs."""
    from tests.fixtures.tiny_qwen35 import write_qwen35_gguf

    return write_qwen35_gguf(tmp_path_factory.mktemp("qwen35") / "tiny-qwen35.gguf")


@pytest.fixture
def qwen35_home(folio_home: Path, tiny_qwen35: Path) -> Path:
    """A FOLIO_HOME whose active model is the tiny qwen35, with short answers."""
    from app.context import open_app

    (folio_home / "config").mkdir(parents=True)
    (folio_home / "config" / "settings.toml").write_text("schema_version = 1\nmax_answer_tokens = 24\n")
    ctx = open_app()
    try:
        record, _ = ctx.models.add(tiny_qwen35)
        ctx.settings.active_model = record.sha256
        ctx.save_settings()
    finally:
        ctx.close()
    return folio_home


@pytest.fixture
def starter_home(folio_home: Path, shared_models_dir: Path) -> Path:
    """A FOLIO_HOME whose model cache points at the shared starter, with short answers for speed."""
    (folio_home / "cache").mkdir(parents=True)
    (folio_home / "cache" / "models").symlink_to(shared_models_dir, target_is_directory=True)
    (folio_home / "config").mkdir(parents=True)
    # Read-ahead off: a window test that adds documents must not have them read behind its back (the
    # read-ahead tests switch it on).
    (folio_home / "config" / "settings.toml").write_text(
        "schema_version = 1\nmax_answer_tokens = 48\nread_ahead = false\n"
    )
    return folio_home


@pytest.fixture
def ctx(folio_home: Path) -> Iterator[object]:
    from app.context import open_app

    context = open_app()
    yield context
    context.close()


@pytest.fixture
def contract_pdf(tmp_path: Path) -> Path:
    from tests.fixtures.pdfs import make_contract_pdf

    return make_contract_pdf(tmp_path / "contract.pdf")


@dataclass(frozen=True)
class CorpusAdd:
    """One `folio add` of every file in ../shared/corpus into a fresh home (the CLI's own process)."""

    home: Path
    files: list[Path]
    code: int
    out: str
    err: str

    @property
    def rejections(self) -> dict[str, str]:
        """File name -> the one line the CLI printed for it."""
        lines = [line.removeprefix("folio: error: ") for line in self.err.splitlines()]
        return {line.split(": ", 1)[0]: line for line in lines if ": " in line}


@pytest.fixture(scope="session")
def corpus_add(tmp_path_factory: pytest.TempPathFactory) -> CorpusAdd:
    """Shared by tests/unit/test_corpus.py (each file's document as stored) and
    tests/reliability/test_corpus_cli.py (the run as a whole): the corpus's scans take a minute of OCR,
    and reading them once keeps both checks on the same real run. Under pytest-xdist the workers share
    one run too: the first to ask makes it in the run's common temp folder, under a lock, and the
    others wait for it and read its outcome from there."""
    import json

    if not CORPUS.is_dir():
        pytest.skip(f"real-world corpus not found at {CORPUS}")
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # this run's folder, above each worker's own
    folder = base / "corpus-add"
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file())
    with _only_one_worker(base / "corpus-add.lock"):
        outcome = folder / "outcome.json"
        if not outcome.is_file():
            folder.mkdir(exist_ok=True)
            code, out, err = run_folio("add", *map(str, files), env={"FOLIO_HOME": str(folder / "home")}, timeout=3600)
            outcome.write_text(json.dumps({"code": code, "out": out, "err": err}), encoding="utf-8")
        done = json.loads(outcome.read_text(encoding="utf-8"))
    return CorpusAdd(folder / "home", files, done["code"], done["out"], done["err"])


@contextmanager
def _only_one_worker(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` across processes (POSIX); elsewhere each worker makes its own."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_folio(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> tuple[int, str, str]:
    """Run the real `folio` command in a child process."""
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=REPO,
    )
    return proc.returncode, proc.stdout, proc.stderr
