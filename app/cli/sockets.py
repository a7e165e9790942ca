"""Which network sockets Folio's processes hold, read from the OS with psutil (for `folio doctor`).

Folio talks to its engine over OS pipes, not sockets; with no model server configured every list
here should be empty. Loopback sockets are shown too, but only others count as leaving the machine.
"""

from __future__ import annotations

import ipaddress
import itertools
from dataclasses import dataclass
from pathlib import Path

# How Folio's own processes are started: the launchers, the module entry points, the frozen app.
_ENTRY_NAMES = {"folio", "folio-gui", "folio.exe", "folio-gui.exe", "Folio"}
_ENTRY_MODULES = {"app.cli", "ui", "ui.main", "ui.entry"}


@dataclass(frozen=True)
class HeldSocket:
    pid: int
    kind: str  # 'tcp' | 'udp'
    local: str
    remote: str  # '' when not connected
    status: str
    leaves_machine: bool

    def describe(self) -> str:
        where = f"{self.local} -> {self.remote}" if self.remote else f"{self.local} ({self.status.lower()})"
        return f"{self.kind} {where}"


def _is_loopback(ip: str) -> bool:
    try:
        address = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def held_sockets(pid: int) -> list[HeldSocket]:
    """The internet sockets (TCP, UDP; IPv4 and IPv6) one process holds; [] if it is gone."""
    import psutil

    try:
        proc = psutil.Process(pid)
        read = proc.net_connections if hasattr(proc, "net_connections") else proc.connections
        # Asked per kind, so the socket module (a network library) is never imported here.
        connections = [(kind, c) for kind in ("tcp", "udp") for c in read(kind=kind)]
    except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):  # gone, or not ours to read
        return []
    out: list[HeldSocket] = []
    for kind, c in connections:
        local = f"{c.laddr.ip}:{c.laddr.port}" if c.laddr else ""
        remote = f"{c.raddr.ip}:{c.raddr.port}" if c.raddr else ""
        # Not connected, it matters only if it listens on (or sends from) more than loopback.
        address = c.raddr or c.laddr
        leaves = bool(address) and not _is_loopback(address.ip)
        out.append(HeldSocket(pid, kind, local, remote, str(c.status), leaves))
    return out


def _is_folio(cmdline: list[str]) -> bool:
    if not cmdline:
        return False
    if Path(cmdline[0]).name in _ENTRY_NAMES:
        return True
    script = cmdline[1] if len(cmdline) > 1 else ""
    if Path(script).name in _ENTRY_NAMES:
        return True
    return any(a == "-m" and b in _ENTRY_MODULES for a, b in itertools.pairwise(cmdline))


@dataclass(frozen=True)
class FolioProcess:
    pid: int
    role: str  # 'this command', 'its engine', 'Folio pid N', 'engine of Folio pid N', ...
    sockets: list[HeldSocket]


def folio_processes() -> list[FolioProcess]:
    """This process, its children (the engine), other running Folio processes of this user (a window
    left open) and their children, each with the sockets it holds."""
    import psutil

    me = psutil.Process()
    roles: dict[int, str] = {me.pid: "this command"}
    for child in me.children(recursive=True):
        roles[child.pid] = _child_role(child, "")
    user = _username(me)
    for proc in psutil.process_iter(["pid", "cmdline", "username"]):
        try:
            if proc.pid in roles or proc.info["username"] != user or not _is_folio(proc.info["cmdline"] or []):
                continue
            roles[proc.pid] = f"Folio pid {proc.pid}"
            for child in proc.children(recursive=True):
                roles.setdefault(child.pid, _child_role(child, f"Folio pid {proc.pid}"))
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return [FolioProcess(pid, role, held_sockets(pid)) for pid, role in roles.items()]


def _child_role(child: object, of: str) -> str:
    try:
        cmdline = " ".join(child.cmdline())  # type: ignore[attr-defined]
    except Exception:
        cmdline = ""
    kind = "helper" if "resource_tracker" in cmdline else "engine" if "spawn_main" in cmdline else "child process"
    return f"{kind} of {of}" if of else f"its {kind}"


def _username(proc: object) -> str | None:
    try:
        return str(proc.username())  # type: ignore[attr-defined]
    except Exception:
        return None
