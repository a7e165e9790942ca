"""kill -9 at random moments of ingest, prefill, generation and export; nothing is lost or half-written.
See tests/reliability/crash_trials.py for what is checked after each kill and how to replay a trial.

`make test` runs one trial per phase; `make test-slow` runs the full set (40 by default,
FOLIO_CRASH_TRIALS to change it).
"""

from __future__ import annotations

import collections
import os
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.crash_trials import PHASES, CrashLab, Trial, only, seed

pytestmark = pytest.mark.e2e


def _run(home: Path, work: Path, indexes: list[int], figures: dict[str, Any]) -> None:
    lab = CrashLab(home, work, seed())
    lab.setup()
    results: list[Trial] = []
    for index in indexes:
        results.append(lab.trial(index))
    # Afterwards Folio works as before: a follow-up in the first conversation, a clean audit check.
    lab.run("ask", "--conversation", str(lab.conversation), "One more question?")
    lab.run("audit", "verify")
    failed = [t for t in results if t.problems]
    assert lab.windows is not None
    figures.update(
        seed=lab.seed,
        trials=len(results),
        per_phase=dict(collections.Counter(t.phase for t in results)),
        killed_mid_command=sum(t.landed == "running" for t in results),
        failures=len(failed),
        phase_seconds={p: round(lab.windows.of(p), 2) for p in PHASES},
        runs=[
            {"trial": t.index, "phase": t.phase, "kill_after_s": t.delay_s, "landed": t.landed, "problems": t.problems}
            for t in results
        ],
    )
    assert not failed, "\n".join(
        f"trial {t.index} ({t.phase}, kill {t.delay_s:.2f} s in, {t.landed}; replay with {t.replay(lab.seed)}): "
        + "; ".join(t.problems)
        for t in failed
    )


def test_kill_9_once_in_each_phase(starter_home: Path, tmp_path: Path, figures: dict[str, Any]) -> None:
    """A folio command SIGKILLed once in each phase (ingest, prefill, generation, export) leaves an intact
    database: no half-added document, every finished message kept, a cut answer absent or marked."""
    _run(starter_home, tmp_path / "work", only() or list(range(len(PHASES))), figures)


@pytest.mark.slow
def test_kill_9_trials(starter_home: Path, tmp_path: Path, figures: dict[str, Any]) -> None:
    """The same checks after at least 30 seeded SIGKILLs at random moments of every phase (replay one with
    the seed and trial number it prints)."""
    count = int(os.environ.get("FOLIO_CRASH_TRIALS", "40"))
    assert count >= 30 or only(), "the trials are meant to be at least 30"
    _run(starter_home, tmp_path / "work", only() or list(range(count)), figures)
