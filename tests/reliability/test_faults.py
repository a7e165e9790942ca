"""Faults a workstation really has, for every command that writes: `add`, `ask`, `read`, `extract`,
`compare --out`, `export`. Each runs as the real `folio` command against a library on a small file
system made for the test (a tmpfs mounted with size=, so the disk really fills; remounted read-only
for the read-only case), against:

- a disk that is full when the command writes;
- a read-only data folder;
- a library another process keeps locked past the busy timeout (10 s);
- the data folder removed while the command runs;
- a damaged settings file (SIGKILL at random moments is test_crash_safety.py's kill -9 trials).

Each must end with ONE plain line on stderr (`folio: error: ...`, no traceback) naming the cause and
what to do, and a non-zero exit status - or, where the fault does not touch what the command does
(a read-only command beside a locked library), succeed. Either way the library is intact afterwards:
PRAGMA integrity_check, no half-added document, every question with its answer row, every file in
blobs/ named by a row, no temp file left anywhere, every model-state snapshot whole.

Mounting needs root (or CAP_SYS_ADMIN); without it these tests skip and say so.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store.library import NAMED_BLOBS_SQL
from tests.conftest import REPO
from tests.reliability.crash_trials import _database_checks, _message_checks

COMMANDS = ("add", "ask", "read", "extract", "compare", "export")
QUESTION = "Which law governs this agreement?"
BUSY_TIMEOUT_S = 10  # app/store/db.py's busy_timeout: the lock is held past it


def _mount_reason() -> str | None:
    if sys.platform != "linux":
        return "a size-limited tmpfs is made with Linux's mount"
    if os.geteuid() != 0:
        return "mounting a size-limited tmpfs for the full-disk and read-only cases needs root"
    return None


pytestmark = pytest.mark.skipif(_mount_reason() is not None, reason=_mount_reason() or "")


class Volume:
    """A tmpfs of a fixed size, mounted for one test."""

    def __init__(self, path: Path, size: str) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)], check=True)

    def fill(self, room: int = 0) -> None:
        """Write until the disk is full to the last byte, then give `room` bytes back: a command then
        fails on its first write (room 0) or in the middle of its work."""
        fd = os.open(self.path / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            for size in (1 << 20, 1 << 12, 1):
                with contextlib.suppress(OSError):
                    while os.write(fd, b"\0" * size):
                        pass
            if room:
                os.ftruncate(fd, max(0, os.fstat(fd).st_size - room))
        finally:
            os.close(fd)

    def read_only(self, on: bool = True) -> None:
        subprocess.run(["mount", "-o", f"remount,{'ro' if on else 'rw'}", str(self.path)], check=True)

    def unmount(self) -> None:
        subprocess.run(["umount", "-l", str(self.path)], check=False)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory, shared_models_dir: Path) -> Path:
    """A library with two versions of a contract, one conversation about the first and a one-field
    template, made once and copied onto each test's volume."""
    from tests.fixtures.contract_versions import edited_contract
    from tests.fixtures.pdfs import make_contract_pdf

    root = tmp_path_factory.mktemp("fault-seed")
    home = root / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.toml").write_text(
        "schema_version = 1\nmax_answer_tokens = 12\nthreads = 1\nread_ahead = false\n"
        '[ocr]\nengine = "off"\n[extraction]\nvalue_chars = 12\nquote_chars = 40\n'
    )
    env = _env(home, shared_models_dir)
    old, new = edited_contract(root)
    spec = root / "template.json"
    spec.write_text(
        json.dumps({"key": "short", "name": "Short", "fields": [{"name": "Governing Law", "description": "The law."}]})
    )
    for args in (["add", str(old)], ["add", str(new)], ["templates", "import", str(spec)], ["ask", "1", QUESTION]):
        _ok(env, *args)
    make_contract_pdf(root / "incoming.pdf", extra_text="Schedule B lists the prices.")
    _with_scanned_page(root / "incoming.pdf")
    return root


def _with_scanned_page(path: Path) -> None:
    """Add a page that is a picture, so adding the file writes a page image to blobs/."""
    import numpy as np
    import pymupdf

    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 255, (900, 700), dtype=np.uint8)
    doc = pymupdf.open(path)
    page = doc.new_page(width=595, height=842)
    pix = pymupdf.Pixmap(pymupdf.csGRAY, 700, 900, pixels.tobytes(), False)
    page.insert_image(page.rect, pixmap=pix)
    out = path.with_name(path.stem + "-scan.pdf")
    doc.save(out)
    doc.close()
    out.replace(path)


def _env(home: Path, models: Path) -> dict[str, str]:
    (home / "cache").mkdir(parents=True, exist_ok=True)
    link = home / "cache" / "models"
    if not link.exists():
        link.symlink_to(models, target_is_directory=True)  # the model file itself lives off the volume
    return {**os.environ, "FOLIO_HOME": str(home)}


def _ok(env: dict[str, str], *args: str) -> str:
    proc = _run(env, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _run(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def _command(name: str, seed: Path, volume: Path) -> list[str]:
    return {
        "add": ["add", str(seed / "incoming.pdf")],
        "ask": ["ask", "1", "And when does it end?"],
        "read": ["read", "2"],
        "extract": ["extract", "1", "--template", "short", "--new"],
        "compare": ["compare", "1", "2", "--out", str(volume / "redline.md")],
        "export": ["export", "conversation", "1", "--out", str(volume / "conversation.pdf")],
    }[name]


@pytest.fixture
def lab(tmp_path: Path, seeded: Path, shared_models_dir: Path) -> Iterator[tuple[Volume, dict[str, str], Path]]:
    volume = Volume(tmp_path / f"volume-{uuid.uuid4().hex[:6]}", "48m")
    try:
        shutil.copytree(seeded / "home", volume.path / "home", symlinks=True)
        yield volume, _env(volume.path / "home", shared_models_dir), seeded
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            volume.read_only(False)
        volume.unmount()


# -- what must hold after every fault ---------------------------------------------------------------
def _library(home: Path) -> dict[str, object]:
    con = sqlite3.connect(home / "data" / "folio.sqlite3")
    try:
        return {
            "documents": con.execute("SELECT id, sha256, page_count FROM documents ORDER BY id").fetchall(),
            "messages": {r[0]: r[1:] for r in con.execute("SELECT * FROM messages")},
        }
    finally:
        con.close()


def _intact(home: Path, before: dict[str, object]) -> list[str]:
    """The library after the fault (read on a copy, so the check itself writes nothing on the volume)."""
    problems: list[str] = []
    data = home / "data"
    con = sqlite3.connect(data / "folio.sqlite3")
    try:
        problems += _database_checks(con)
        problems += _message_checks(con, {"messages": before["messages"]})
        documents = con.execute("SELECT id, sha256, page_count FROM documents ORDER BY id").fetchall()
        added = [d for d in documents if d not in before["documents"]]  # type: ignore[operator]
        if [d for d in before["documents"] if d not in documents]:  # type: ignore[attr-defined]
            problems.append("a document stored before the fault changed or vanished")
        for doc_id, _sha, page_count in added:
            pages = con.execute("SELECT count(*) FROM pages WHERE document_id = ?", [doc_id]).fetchone()[0]
            if pages != page_count:
                problems.append(f"document {doc_id} is half there: {pages} of {page_count} pages")
        named = {r[0] for r in con.execute(NAMED_BLOBS_SQL)}
    finally:
        con.close()
    blobs = data / "blobs"
    on_disk = {p.relative_to(blobs).as_posix() for p in blobs.rglob("*") if p.is_file()} if blobs.exists() else set()
    if on_disk - named:
        problems.append(f"{len(on_disk - named)} orphan file(s) in blobs/, e.g. {sorted(on_disk - named)[0]}")
    if named - on_disk:
        problems.append(f"{len(named - on_disk)} page image(s) named by the library are missing")
    temps = [p for p in home.rglob("*.tmp") if "models" not in p.parts]
    if temps:
        problems.append(f"temp files left behind: {[p.name for p in temps][:3]}")
    problems += _snapshots_whole(home / "cache" / "states")
    return problems


def _snapshots_whole(states: Path) -> list[str]:
    from inference.state_cache import StateStore

    if not states.exists():
        return []
    store = StateStore(states, 1 << 40)
    problems = [f"snapshot {r.stem} does not verify" for r in states.glob("*.json") if store.lookup(r.stem) is None]
    problems += [
        f"snapshot data without its record: {p.name}"
        for p in states.glob("*.state")
        if not p.with_suffix(".json").exists()
    ]
    return problems


def _one_line(proc: subprocess.CompletedProcess[str], *words: str) -> list[str]:
    """Non-zero, and one error line, the last: progress lines ('... reading', 'note:') may come before."""
    err = proc.stderr
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("folio: error: ")]
    problems = []
    if proc.returncode == 0:
        problems.append("exit status 0")
    if "Traceback" in err or len(errors) != 1 or lines[-1] != errors[0]:
        problems.append(f"not one plain line: {err[-600:]!r}")
    elif words and not any(w in errors[0] for w in words):
        problems.append(f"the line does not name the cause ({words}): {errors[0]!r}")
    return problems


# -- the faults --------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("room", [0, 256 * 1024], ids=["full", "fills-mid-write"])
def test_a_full_disk_ends_in_one_line_and_loses_nothing(
    lab: tuple[Volume, dict[str, str], Path], command: str, room: int, figures: dict[str, object]
) -> None:
    """With 256 KB left the command opens the library and starts; the disk fills under its page
    images, its answer's snapshot or its export. What fits may be saved, whole."""
    volume, env, seed = lab
    home = volume.path / "home"
    before = _library(home)
    volume.fill(room)
    proc = _run(env, *_command(command, seed, volume.path))
    full = ("disk is full", "disk holding the library is full", "could not be kept on disk")
    problems = _one_line(proc, *full) if room == 0 or proc.returncode != 0 else []
    figures["outcome"] = "saved whole" if proc.returncode == 0 else proc.stderr.strip().splitlines()[-1][:100]
    (volume.path / "filler").unlink()  # room again, so the check's own reads can take their locks
    problems += _intact(home, before)
    assert not problems, f"folio {command} on a full disk: {problems}"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_read_only_data_folder_ends_in_one_line(lab: tuple[Volume, dict[str, str], Path], command: str) -> None:
    volume, env, seed = lab
    home = volume.path / "home"
    before = _library(home)
    volume.read_only()
    proc = _run(env, *_command(command, seed, volume.path))
    volume.read_only(False)
    problems = _one_line(proc, "read-only") + _intact(home, before)
    assert not problems, f"folio {command} on a read-only disk: {problems}"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_library_locked_past_the_busy_timeout_ends_in_one_line(
    lab: tuple[Volume, dict[str, str], Path], command: str
) -> None:
    volume, env, seed = lab
    home = volume.path / "home"
    before = _library(home)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "con.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(float(sys.argv[2]))\n",
            str(home / "data" / "folio.sqlite3"),
            str(BUSY_TIMEOUT_S * 6),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        proc = _run(env, *_command(command, seed, volume.path))
    finally:
        holder.kill()
        holder.wait(10)
    if command == "read":
        # It only reads the library (a read's state goes to the cache): a lock held by a writer does
        # not stop it, and it must succeed. (A compare's redline is an export, recorded in the audit
        # log with it, so a compare writes: it ends in one line and leaves no file.)
        assert proc.returncode == 0, proc.stderr
        problems = []
    else:
        problems = _one_line(proc, "library is busy")
        if command == "compare" and (volume.path / "redline.md").exists():
            problems.append("the redline was written though its export could not be recorded")
    problems += _intact(home, before)
    assert not problems, f"folio {command} beside a locked library: {problems}"


def _wait_until_open(pid: int, db: Path, timeout: float = 120) -> None:
    """Until the command has the library open: removing the folder before would only give it a new one."""
    import psutil

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if any(Path(f.path) == db for f in psutil.Process(pid).open_files()):
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.05)
    raise TimeoutError("the command never opened the library")


@pytest.mark.parametrize("command", ["add", "ask"])
def test_a_data_folder_removed_while_the_command_runs_ends_in_one_line(
    lab: tuple[Volume, dict[str, str], Path], command: str
) -> None:
    from tests.fixtures.pdfs import make_text_pdf

    volume, env, seed = lab
    home = volume.path / "home"
    args = _command(command, seed, volume.path)
    if command == "add":  # long enough to read that the folder goes while it runs
        long = make_text_pdf(
            volume.path / "long.pdf", [f"Clause {n}. The Supplier delivers. " * 40 for n in range(400)]
        )
        args = ["add", str(long)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", *args],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    _wait_until_open(proc.pid, home / "data" / "folio.sqlite3")
    assert proc.poll() is None, "the command ended before the folder could be removed"
    shutil.rmtree(home / "data")
    out, err = proc.communicate(timeout=300)
    problems = _one_line(subprocess.CompletedProcess(args, proc.returncode, out, err), "removed", "gone")
    assert not (home / "data" / "blobs").exists() or not any((home / "data" / "blobs").rglob("*.png"))
    assert not problems, f"folio {command} with its data folder removed: {problems}"


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("settings", ["garbage", "wrong type"])
def test_a_damaged_settings_file_ends_in_one_line(
    lab: tuple[Volume, dict[str, str], Path], command: str, settings: str
) -> None:
    volume, env, seed = lab
    home = volume.path / "home"
    before = _library(home)
    file = home / "config" / "settings.toml"
    file.write_bytes(
        b"\x00\x9f schema_version = [" if settings == "garbage" else b"schema_version = 1\nthreads = 'many'\n"
    )
    proc = _run(env, *_command(command, seed, volume.path))
    problems = _one_line(proc, "settings") + _intact(home, before)
    assert not problems, f"folio {command} with a damaged settings file: {problems}"
