"""No orphans: every child process of the window (the llama.cpp engine, the file reader, page drawing)
ends when the window's process ends, however it ends - closed by the user, SIGTERM (what a session
manager sends at logout), SIGKILL (the out-of-memory killer) - and none keeps the document open.
The window runs in a process of its own (tests/fixtures/window_children.py) with all three children
busy: a PDF added, its page shown, a long answer being written."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.gui, pytest.mark.e2e]
GRACE_S = 10.0


def _holders(path: Path) -> list[int]:
    """Processes with `path` open."""
    held = []
    for proc in psutil.process_iter():
        try:
            if any(Path(f.path) == path for f in proc.open_files()):
                held.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, OSError):
            continue
    return held


@pytest.mark.parametrize("how", ["quit", "SIGTERM", "SIGKILL"])
def test_no_child_outlives_the_window(
    starter_home: Path, contract_pdf: Path, how: str, figures: dict[str, object]
) -> None:
    (starter_home / "config" / "settings.toml").write_text(
        "schema_version = 1\nmax_answer_tokens = 4000\nthreads = 1\nread_ahead = false\n"
    )
    window = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fixtures.window_children",
            str(contract_pdf),
            *(["quit"] if how == "quit" else []),
        ],
        cwd=REPO,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # so whatever is left can be cleaned up as a group after the checks
    )
    try:
        assert window.stdout is not None
        line = window.stdout.readline()
        assert line.strip() == "READY", window.stderr.read() if window.stderr else ""
        children = psutil.Process(window.pid).children(recursive=True)
        assert len(children) >= 3
        if how != "quit":
            window.send_signal(getattr(signal, how))
        window.wait(120)
        _gone, alive = psutil.wait_procs(children, timeout=GRACE_S)
        figures[how] = {"children": len(children), "survivors": len(alive)}
        survivors = [f"{p.pid} {' '.join(p.cmdline())[:80]}" for p in alive if p.is_running()]
        assert not survivors, f"children outlived the window ({how}): {survivors}"
        assert _holders(contract_pdf.resolve()) == [], "a process still has the document open"
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(window.pid, signal.SIGKILL)
        window.wait(30)


def test_sigterm_closes_the_window_as_a_user_would(starter_home: Path) -> None:
    """At logout a session manager sends SIGTERM: the window closes itself (its close handler stops the
    workers and children) and exits 0, instead of being cut off mid-write (exit by signal 15)."""
    db = starter_home / "data" / "folio.sqlite3"
    window = subprocess.Popen(
        [sys.executable, "-m", "ui"],
        cwd=REPO,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not any(Path(f.path) == db for f in psutil.Process(window.pid).open_files()):
            assert window.poll() is None and time.monotonic() < deadline, "the window did not start"
            time.sleep(0.1)
        time.sleep(1.0)  # the event loop is running
        window.send_signal(signal.SIGTERM)
        assert window.wait(60) == 0
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(window.pid, signal.SIGKILL)
        window.wait(30)
