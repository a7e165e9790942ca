"""The network guard itself (tests/plugins/no_network.py) catches what it claims to, in this process
and in child processes; loopback stays allowed. A guard that cannot fail would prove nothing."""

from __future__ import annotations

import multiprocessing as mp
import socket
import subprocess
import sys
import threading

import pytest

from tests.plugins import no_network
from tests.plugins.no_network import expect_violations

UNROUTABLE = ("192.0.2.1", 9)  # TEST-NET-1 (RFC 5737): reserved for documentation, never routed


def _connect_out() -> None:
    socket.create_connection(UNROUTABLE, timeout=0.2)


def test_connect_and_name_lookup_outside_loopback_are_blocked_in_this_process() -> None:
    with expect_violations() as seen:
        with pytest.raises(PermissionError, match="folio test guard"):
            _connect_out()
        with pytest.raises(PermissionError, match="folio test guard"):
            socket.getaddrinfo("example.com", 443)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        with pytest.raises(PermissionError):
            udp.sendto(b"x", ("8.8.8.8", 53))
        udp.close()
    assert len(seen) == 3
    assert "192.0.2.1" in seen[0] and "example.com" in seen[1] and "8.8.8.8" in seen[2]


def test_loopback_is_allowed() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted: list[bytes] = []

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            accepted.append(conn.recv(5))

    thread = threading.Thread(target=serve)
    thread.start()
    with expect_violations() as seen:
        for host in ("127.0.0.1", "localhost"):
            socket.getaddrinfo(host, port)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            client.sendall(b"hello")
    thread.join(5)
    server.close()
    assert seen == [] and accepted == [b"hello"]


def test_a_python_subprocess_is_guarded() -> None:
    code = f"import socket; socket.create_connection({UNROUTABLE!r}, timeout=0.2)"
    with expect_violations() as seen:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "folio test guard" in proc.stderr
    assert len(seen) == 1 and "192.0.2.1" in seen[0] and "child pid" in seen[0]


def test_a_multiprocessing_spawn_child_is_guarded() -> None:
    """The engine runs as a 'spawn' child: the guard must be inside it too."""
    with expect_violations() as seen:
        proc = mp.get_context("spawn").Process(target=_connect_out)
        proc.start()
        proc.join(60)
    assert proc.exitcode != 0
    assert len(seen) == 1 and "192.0.2.1" in seen[0]


def test_sockets_of_unguarded_children_are_found_by_the_process_scan() -> None:
    """`python -I` ignores PYTHONPATH, so no audit hook runs there (nor in C code): the psutil scan
    of the process tree still sees a socket listening on every interface."""
    code = (
        "import socket, sys, time\n"
        "wide = socket.create_server(('0.0.0.0', 0)); local = socket.create_server(('127.0.0.1', 0))\n"
        "print(wide.getsockname()[1], local.getsockname()[1], flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-I", "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        wide_port, local_port = proc.stdout.readline().split()
        found = no_network.open_sockets()
    finally:
        proc.kill()
        proc.wait(10)
    assert any(f"pid {proc.pid}" in f and f"port={wide_port}" in f for f in found), found
    assert not any(f"port={local_port}" in f for f in found), found
    assert no_network.open_sockets() == []


def test_doctor_reports_the_sockets_a_folio_process_holds() -> None:
    """`folio doctor` reads sockets from the OS (psutil): a process listening on every interface shows up
    as leaving the machine, one on loopback does not, one with none shows none."""
    from app.cli.sockets import held_sockets

    code = (
        "import socket, sys, time\n"
        "wide = socket.create_server(('0.0.0.0', 0)); local = socket.create_server(('127.0.0.1', 0))\n"
        "print(wide.getsockname()[1], local.getsockname()[1], flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-I", "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        wide_port, local_port = proc.stdout.readline().split()
        held = {s.local.rsplit(":", 1)[1]: s for s in held_sockets(proc.pid)}
    finally:
        proc.kill()
        proc.wait(10)
    assert held[wide_port].leaves_machine and not held[local_port].leaves_machine
    assert "listen" in held[local_port].describe() and held[local_port].kind == "tcp"
    quiet = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert held_sockets(quiet.pid) == []
    finally:
        quiet.kill()
        quiet.wait(10)
