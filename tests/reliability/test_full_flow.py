"""The whole command-line flow - add, ask, extract, export, audit, doctor - in a fresh FOLIO_HOME,
with the real starter model, run once for two proofs:
- no network: the guard (tests/plugins/no_network.py) was inside every process of the flow, the
  CLI commands and their llama.cpp engine processes, and recorded nothing; `folio doctor` shows
  that the command and its engine hold no socket;
- data at rest: every folder and file the flow created - the database with its WAL and shared-memory
  files, page images, snapshots, GGUF facts, settings, templates, the audit head, every export - is
  user-only (0700 / 0600).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomli_w

from tests.conftest import run_folio
from tests.fixtures.media import make_scan, make_scanned_pdf, render_text_page
from tests.fixtures.pdfs import make_contract_pdf
from tests.plugins import no_network

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")]


@dataclass
class Flow:
    home: Path
    exports: Path
    outputs: dict[str, str]
    started: list[dict[str, object]]


@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory, starter_gguf: Path) -> Iterator[Flow]:
    base = tmp_path_factory.mktemp("flow")
    home = base / "home"  # does not exist yet: Folio creates all of it
    exports = base / "shared-drive" / "client-x"  # nor does this: the export creates it
    env = {"FOLIO_HOME": str(home)}
    contract = make_contract_pdf(base / "contract.pdf")
    scanned = make_scanned_pdf(base / "scan.pdf", [make_scan(render_text_page(), degrees=1.0)])
    template = base / "tpl.json"
    template.write_text(json.dumps({"key": "short", "name": "Short", "fields": [{"name": "Governing Law"}]}))
    outputs: dict[str, str] = {}

    def folio(name: str, *args: str) -> str:
        code, out, err = run_folio(*args, env=env)
        assert code == 0, f"folio {' '.join(args)}: {err}"
        outputs[name] = out
        return out

    folio("models add", "models", "add", str(starter_gguf))
    settings = home / "config" / "settings.toml"
    values = tomllib.loads(settings.read_text())
    values["max_answer_tokens"] = 16
    values["extraction"].update(value_chars=12, quote_chars=40)
    settings.write_text(tomli_w.dumps(values))  # the file exists: its mode is kept
    folio("add", "add", str(contract), str(scanned))
    folio("templates import", "templates", "import", str(template))
    folio("ask", "ask", str(contract), "Which law governs this agreement?")
    folio("extract", "extract", "--template", "short", str(contract), "--out", str(exports / "table.xlsx"))
    for fmt in ("csv", "json"):
        folio(f"export table {fmt}", "export", "table", "1", "--out", str(exports / f"table.{fmt}"))
    for fmt in ("md", "pdf"):
        folio(f"export conversation {fmt}", "export", "conversation", "1", "--out", str(exports / f"chat.{fmt}"))
    folio("audit export", "audit", "export", "--out", str(exports / "audit.jsonl"))
    folio("doctor", "doctor")
    module = __name__.replace(".", "/") + ".py"
    started = [e for e in no_network.state().started() if str(e["test"]).startswith(module)]
    yield Flow(home, exports, outputs, started)


def test_add_ask_extract_export_run_guarded_and_touch_no_network(flow: Flow) -> None:
    """Any attempt to reach past loopback in these processes fails this test (the plugin checks)."""
    commands = [e for e in flow.started if "app.cli" in e["argv"]]  # type: ignore[operator]
    engines = [e for e in flow.started if any("spawn_main" in str(a) for a in e["argv"])]  # type: ignore[union-attr]
    assert len(commands) == len(flow.outputs) == 11
    command_pids = {e["pid"] for e in commands}
    # ask, extract and doctor each ran a llama.cpp engine process; the guard was inside each one.
    assert len([e for e in engines if e["ppid"] in command_pids]) >= 3
    doctor = flow.outputs["doctor"]
    lines = [line for line in doctor.splitlines() if "sockets" in line]
    this = [line for line in lines if "this command," in line or " its " in line]
    assert all(line.rstrip().endswith(": none") and line.startswith("ok") for line in this), doctor
    assert any("this command," in line for line in this) and any("its engine," in line for line in this), doctor


def _loose(path: Path) -> str | None:
    mode = stat.S_IMODE(path.lstat().st_mode)
    return f"{path} is {mode:o}" if mode & 0o077 else None


def test_everything_written_is_user_only(flow: Flow) -> None:
    db = sqlite3.connect(flow.home / "data" / "folio.sqlite3")  # while open, the -wal and -shm files exist
    try:
        db.execute("SELECT count(*) FROM documents").fetchone()
        written = [p for p in [flow.home, *flow.home.rglob("*"), flow.exports, *flow.exports.rglob("*")]
                   if not p.is_symlink()]  # fmt: skip
        names = {p.name for p in written}
        loose = [problem for p in written if (problem := _loose(p))]
    finally:
        db.close()
    expected = {"folio.sqlite3", "folio.sqlite3-wal", "folio.sqlite3-shm", "settings.toml", "audit-head.json",
                "short.json", "table.xlsx", "table.csv", "table.json", "chat.md", "chat.pdf", "audit.jsonl",
                "blobs", "states", "facts", "templates"}  # fmt: skip
    assert expected <= names, expected - names
    assert any(p.suffix == ".png" for p in written) and any(p.suffix == ".state" for p in written)
    assert loose == []
    assert _loose(flow.exports.parent) is None  # folders an export had to create are user-only too
