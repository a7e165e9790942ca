"""common/lifeline.py: a child ends when its parent is killed, by either mechanism - Linux's
parent-death signal, and the pipe watched by a thread that macOS and Windows use (run here too)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

import psutil
import pytest

from tests.conftest import REPO


@pytest.mark.parametrize(
    "use_pipe",
    [pytest.param(False, marks=pytest.mark.skipif(sys.platform != "linux", reason="prctl is Linux's")), True],
    ids=["death-signal", "pipe"],
)
def test_a_child_dies_with_its_killed_parent(use_pipe: bool) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", f"from tests.fixtures.child_calls import start_sleeper; start_sleeper({use_pipe})"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert parent.stdout is not None
        child = psutil.Process(int(parent.stdout.readline()))
        assert child.is_running()
        parent.send_signal(signal.SIGKILL)
        parent.wait(30)
        child.wait(timeout=15)  # raises TimeoutExpired if the child outlives its parent
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(parent.pid, signal.SIGKILL)
