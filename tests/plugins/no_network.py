"""pytest plugin, on for the whole suite: a test fails if its process or any child process reaches
past loopback.

Two checks, because each sees what the other cannot:
1. An audit hook (tests/plugins/netguard/sitecustomize.py) in the pytest process and, through
   PYTHONPATH, in every Python child (CLI subprocesses, the multiprocessing 'spawn' engine, test
   servers). It blocks and records any connect/sendto/sendmsg or host name lookup that is not
   loopback, at the moment it is attempted, however short-lived the socket.
2. After each test, psutil lists the inet sockets of the pytest process and all its descendants
   (Python or not: this is what sees a socket opened from C code) and fails the test on a
   non-loopback peer or a socket listening on a non-loopback address.

Loopback stays allowed: tests/e2e/test_remote.py runs a real model server on 127.0.0.1.
A test that means to provoke a violation (the guard's own tests) wraps it in `expect_violations()`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SITE_DIR = Path(__file__).resolve().parent / "netguard"


def _load_guard() -> ModuleType:
    existing = sys.modules.get("sitecustomize")
    if existing is not None and Path(getattr(existing, "__file__", "") or "").resolve().parent == SITE_DIR:
        return existing  # pytest itself was started with the guard on PYTHONPATH
    spec = importlib.util.spec_from_file_location("folio_netguard", SITE_DIR / "sitecustomize.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


guard = _load_guard()


def _sweep_dead_runs() -> None:
    """Remove the folders of runs that were killed before their sessionfinish (named by their pid)."""
    import shutil

    import psutil

    for folder in Path(tempfile.gettempdir()).glob("folio-netguard-*-*"):
        pid = folder.name.split("-")[2]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


class _State:
    def __init__(self) -> None:
        _sweep_dead_runs()
        self.folder = Path(tempfile.mkdtemp(prefix=f"folio-netguard-{os.getpid()}-"))
        self.offsets: dict[Path, int] = {}
        self.parent_seen = 0
        self.pending: list[str] = []  # found, not yet reported against a test
        self.reported = 0  # violations reported against tests in this run
        self.tests = 0

    def new_child_violations(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for path in sorted(self.folder.glob("violations-*.jsonl")):
            start = self.offsets.get(path, 0)
            with path.open("rb") as handle:
                handle.seek(start)
                data = handle.read()
            complete = data[: data.rfind(b"\n") + 1]
            self.offsets[path] = start + len(complete)
            found += [json.loads(line) for line in complete.splitlines() if line.strip()]
        return [v for v in found if v["pid"] != os.getpid()]  # this process's own are in guard.violations

    def new_parent_violations(self) -> list[str]:
        fresh = guard.violations[self.parent_seen :]
        self.parent_seen = len(guard.violations)
        return list(fresh)

    def started(self) -> list[dict[str, Any]]:
        """Every guarded process so far (pid, ppid, argv, test)."""
        path = self.folder / "started.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


_state: _State | None = None


def state() -> _State:
    assert _state is not None, "the no_network plugin is not active"
    return _state


def pytest_configure(config: pytest.Config) -> None:
    global _state
    _state = _State()
    os.environ[guard.DIR_ENV] = str(_state.folder)
    paths = [str(SITE_DIR), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    guard.install()


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests.plugins.figures import record

    if _state is not None:
        started = _state.started()
        record(
            "(whole run) network guard",
            {
                "tests": _state.tests,
                "guarded_processes": len(started) + 1,  # + this pytest process
                "engine_processes": sum(any("spawn_main" in str(a) for a in e["argv"]) for e in started),
                "violations": _state.reported,
            },
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    if _state is not None:
        shutil.rmtree(_state.folder, ignore_errors=True)


def _is_loopback(address: Any) -> bool:
    if not address:
        return True
    if address.ip in ("0.0.0.0", "::"):
        return False  # bound to every interface: reachable from the network
    return bool(guard.is_local_host(address.ip))


def open_sockets() -> list[str]:
    """Non-loopback inet sockets held by this process and its descendants right now."""
    import psutil

    me = psutil.Process()
    found: list[str] = []
    for proc in [me, *me.children(recursive=True)]:
        try:
            connections = proc.net_connections(kind="inet")
            name = " ".join(proc.cmdline()[:4])
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        for conn in connections:
            listening_wide = conn.status == psutil.CONN_LISTEN and not _is_loopback(conn.laddr)
            if listening_wide or not _is_loopback(conn.raddr):
                found.append(f"pid {proc.pid} ({name}) holds {conn.laddr} -> {conn.raddr or '-'} [{conn.status}]")
    return found


def _attempts() -> list[str]:
    s = state()
    found = [f"in the test process: {v}" for v in s.new_parent_violations()]
    found += [f"in child pid {v['pid']} ({' '.join(v['argv'])}): {v['what']}" for v in s.new_child_violations()]
    return found


@contextmanager
def expect_violations() -> Iterator[list[str]]:
    """For the guard's own tests: collect (and so excuse) the attempts made inside the block."""
    state().pending += _attempts()  # anything earlier still counts against the test
    seen: list[str] = []
    try:
        yield seen
    finally:
        seen += _attempts()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    if call.when not in ("call", "teardown"):
        return
    report = outcome.get_result()
    s = state()
    found = [*s.pending, *_attempts(), *(f"socket left open: {v}" for v in open_sockets())]
    s.pending = []
    s.tests += call.when == "call"
    s.reported += len(found)
    if not found:
        return
    text = "network access outside loopback:\n  " + "\n  ".join(found)
    if report.failed:
        report.sections.append(("no_network", text))
    else:
        report.outcome = "failed"
        report.longrepr = text
