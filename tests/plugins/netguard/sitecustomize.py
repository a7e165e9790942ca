"""Folio's test network guard, loaded into EVERY Python process the test suite starts.

tests/plugins/no_network.py puts this folder first on PYTHONPATH, so Python imports this file as
`sitecustomize` at interpreter start-up: the pytest process itself, `python -m app.cli ...`
subprocesses, multiprocessing 'spawn' children (the llama.cpp engine) and servers the tests start.

It installs a PEP 578 audit hook. Every socket.connect / sendto / sendmsg and every host name
lookup (getaddrinfo, gethostbyname, gethostbyaddr) is checked: loopback and Unix sockets pass,
anything else is recorded and blocked (the call raises PermissionError before a packet leaves).
A child process records what it blocked, with the test that was running, in a file under
$FOLIO_NETGUARD_DIR; the pytest plugin reads those files and fails that test.

Why an audit hook and not LD_PRELOAD or a network namespace: it needs no compiler, no privileges
and no platform-specific loader tricks, it sees the destination before any packet is sent, and it
covers every Python-level path to the network (socket, http.client, urllib, asyncio, ssl) in every
process. What it cannot see - a connect() made from C code, such as llama.cpp - is covered by the
plugin's second check: after each test it lists the sockets of the test process and all its
descendants with psutil and fails the test on any non-loopback connection or listening socket.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import os
import socket
import sys
import time
from typing import Any

DIR_ENV = "FOLIO_NETGUARD_DIR"
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
_NAME_EVENTS = {"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr"}
_ADDRESS_EVENTS = {"socket.connect", "socket.sendto", "socket.sendmsg"}

violations: list[str] = []  # in this process, newest last
_installed = False


def is_local_host(host: Any) -> bool:
    """True for loopback addresses, 'localhost' and an unspecified host (a lookup for binding)."""
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip().lower().rstrip(".")
    if name in ("", "0.0.0.0", "::") or name in _LOCAL_NAMES or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def is_local_address(family: int, address: Any) -> bool:
    if family == getattr(socket, "AF_UNIX", object()) or isinstance(address, str | bytes):
        return True  # a Unix socket path (or abstract name) never leaves the machine
    if family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple) and address:
        return is_local_host(address[0])
    # Netlink: kernel <-> process messages (e.g. interface lists), not a network peer.
    return bool(family == getattr(socket, "AF_NETLINK", object()))


def _record(what: str) -> None:
    violations.append(what)
    folder = os.environ.get(DIR_ENV)
    if not folder:
        return
    entry = {
        "pid": os.getpid(),
        "argv": sys.argv[:4],
        "test": os.environ.get("PYTEST_CURRENT_TEST", ""),
        "what": what,
        "at": time.time(),
    }
    try:
        with open(os.path.join(folder, f"violations-{os.getpid()}.jsonl"), "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")
    except OSError:
        pass


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event in _ADDRESS_EVENTS:
        sock, address = args[0], args[1]
        family = getattr(sock, "family", None)
        if address is None or is_local_address(int(family) if family is not None else -1, address):
            return
        what = f"{event} to {address!r}"
    elif event in _NAME_EVENTS:
        if is_local_host(args[0]):
            return
        what = f"{event} of {args[0]!r}"
    else:
        return
    _record(what)
    raise PermissionError(errno.EACCES, f"folio test guard: network access outside loopback blocked ({what})")


def _note_start() -> None:
    """One line per guarded process, so tests can prove the guard ran inside their children."""
    folder = os.environ.get(DIR_ENV)
    if not folder:
        return
    entry = {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "argv": getattr(sys, "orig_argv", sys.argv)[:6],
        "test": os.environ.get("PYTEST_CURRENT_TEST", ""),
    }
    try:
        with open(os.path.join(folder, "started.jsonl"), "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")
    except OSError:
        pass


def install() -> None:
    global _installed
    if _installed:
        return
    _installed = True
    sys.addaudithook(_hook)  # audit hooks cannot be removed: the guard lasts as long as the process


def _chain_to_the_next_sitecustomize() -> None:
    """Run the sitecustomize this file shadows (a distribution may ship one), if there is one."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if os.environ.get(DIR_ENV):
    install()
    _note_start()
if __name__ == "sitecustomize":
    _chain_to_the_next_sitecustomize()
