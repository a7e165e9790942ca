"""`folio read`: read a document before the first question, Ctrl+C keeps what was read, the next
read continues from there, `folio list` says where each document stands, and the first question
starts from what was read. The real command with the real starter model."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_folio

pytestmark = pytest.mark.e2e


# Clauses of the long contract: about 2,100 tokens, read in about 10 s by the starter on two quiet
# cores, long enough for a second command to find the reading under way and short enough to read whole.
LONG = 60


def _long_contract(path: Path, clauses: int) -> Path:
    lines = ["SUPPLY AGREEMENT", ""]
    for n in range(1, clauses + 1):
        lines.append(
            f"{n}. The supplier shall deliver the goods of order {n} to the buyer's warehouse within {n + 9} days, "
            f"and the buyer shall pay invoice {n} within {n + 29} days of receipt."
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _list_line(doc_id: int) -> str:
    code, out, err = run_folio("list")
    assert code == 0, err
    return next(line for line in out.splitlines() if line.split()[:1] == [str(doc_id)])


def _start_reading() -> subprocess.Popen[str]:
    """`folio read 1` in its own process, as a second terminal would run it."""
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "read", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=os.environ.copy(),
    )


def test_read_ctrl_c_keeps_what_was_read_and_the_next_read_continues(starter_home: Path, tmp_path: Path) -> None:
    contract = _long_contract(tmp_path / "supply.txt", LONG)
    code, _out, err = run_folio("add", str(contract))
    assert code == 0, err
    assert "(not read yet)" in _list_line(1)

    proc = _start_reading()
    assert proc.stderr is not None
    seen: list[str] = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("reading "):
            proc.send_signal(signal.SIGINT)  # as Ctrl+C in a terminal
            break
    out, rest = proc.communicate(timeout=300)
    err = "".join(seen) + rest
    assert proc.returncode == 130, err
    assert "keeping what was read" in err and "continues where it stopped" in err

    listed = _list_line(1)
    kept = re.search(r"\(read (\d+)% · continues where it stopped\)", listed)
    assert kept and 0 < int(kept.group(1)) < 100, listed

    code, out, err = run_folio("read", "1")
    assert code == 0, err
    assert "continuing an unfinished reading" in err
    done = re.search(r"ready — questions start at once \(([\d,]+) tokens read in [\d.]+ s, ([\d,]+) kept", out)
    assert done, out
    read_now, kept_tokens = (int(g.replace(",", "")) for g in done.groups())
    assert kept_tokens > 0 and read_now > 0  # only the rest was read
    assert "(ready — questions start at once)" in _list_line(1)
    snapshots = list((starter_home / "cache" / "states").glob("*.json"))
    assert len(snapshots) == 1  # the checkpoint gave way to the snapshot

    code, out, err = run_folio("ask", "1", "When is order 7 delivered?", "--timings")
    assert code == 0, err
    timings = dict(pair.split("=") for pair in err.split("timings: ", 1)[1].split())
    assert int(timings["cached_tokens"]) == kept_tokens + read_now  # the question starts from the read
    assert int(timings["prefill_tokens"]) < 60  # just the question was read


def test_ask_waits_for_the_read_another_folio_is_doing(starter_home: Path, tmp_path: Path) -> None:
    code, _out, err = run_folio("add", str(_long_contract(tmp_path / "supply.txt", LONG)))
    assert code == 0, err
    reader = _start_reading()
    assert reader.stderr is not None
    for line in reader.stderr:
        if line.startswith("reading "):
            break
    listed = _list_line(1)
    assert re.search(r"\(reading \d+% · about [\d]+ (s|min) left\)", listed), listed
    code, _out, err = run_folio("ask", "1", "When is order 7 delivered?", "--timings")
    assert code == 0, err
    assert "another Folio is reading this document: reading" in err
    out_reader, _ = reader.communicate(timeout=300)
    assert reader.returncode == 0 and "ready — questions start at once" in out_reader
    timings = dict(pair.split("=") for pair in err.split("timings: ", 1)[1].split())
    assert int(timings["prefill_tokens"]) < 60  # the document was not read a second time


def test_ask_about_several_documents_waits_for_the_read_of_one_of_them(starter_home: Path, tmp_path: Path) -> None:
    for contract in (_long_contract(tmp_path / "supply.txt", LONG), _long_contract(tmp_path / "short.txt", 5)):
        code, _out, err = run_folio("add", str(contract))
        assert code == 0, err
    reader = _start_reading()  # document 1
    assert reader.stderr is not None
    for line in reader.stderr:
        if line.startswith("reading "):
            break
    code, _out, err = run_folio("ask", "2", "1", "When is order 7 delivered?", "--timings")
    assert code == 0, err
    assert "another Folio is reading one of these documents: reading" in err
    out_reader, _ = reader.communicate(timeout=300)
    assert reader.returncode == 0, out_reader
    done = re.search(r"ready — questions start at once \(([\d,]+) tokens read in [\d.]+ s, ([\d,]+) kept", out_reader)
    assert done, out_reader
    read_tokens = sum(int(g.replace(",", "")) for g in done.groups())
    timings = dict(pair.split("=") for pair in err.split("timings: ", 1)[1].split())
    # Document 1 went first and was not read a second time: only document 2 and the question were.
    assert int(timings["cached_tokens"]) == read_tokens
    assert int(timings["prefill_tokens"]) < 400
