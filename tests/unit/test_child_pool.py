"""The child-process pool when its child dies mid-answer (app/processes/pool.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from app.processes.pool import ChildDied, ChildProcess
from tests.fixtures.child_calls import answer, dies_halfway_through_its_result, stalls_halfway_through_its_result


def test_a_child_dead_halfway_through_its_result_fails_the_call_instead_of_hanging() -> None:
    child = ChildProcess()
    outcome: list[BaseException | int] = []

    def call() -> None:
        try:
            child.call(dies_halfway_through_its_result)
        except BaseException as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=call, daemon=True)
    waiter.start()
    waiter.join(60)  # the child's start takes a second or two; without the fix this never ends
    try:
        assert not waiter.is_alive(), "the call still waits on a dead child"
        assert len(outcome) == 1 and isinstance(outcome[0], ChildDied)
        assert child.call(answer) == 42  # the next call gets a fresh child
    finally:
        child.close()


def test_close_while_a_call_waits_on_a_stalled_child_ends_the_call(tmp_path: Path) -> None:
    """close() from another thread (a window closing while a page renders) kills the child and shuts the
    executor down, which forgets its children and its result pipe; the call waiting on it must still end
    (it waited for ever, and the window froze on close, its render thread never answering)."""
    child = ChildProcess()
    marker = tmp_path / "stalled"
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            child.call(stalls_halfway_through_its_result, str(marker))
        except BaseException as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=call, daemon=True)
    waiter.start()
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "the child did not start"
    child.close()
    waiter.join(30)
    assert not waiter.is_alive(), "the call still waits on a child closed under it"
    assert len(outcome) == 1 and isinstance(outcome[0], ChildDied)
