"""The child-process pool when its child dies mid-answer (app/processes/pool.py)."""

from __future__ import annotations

import threading

from app.processes.pool import ChildDied, ChildProcess
from tests.fixtures.child_calls import answer, dies_halfway_through_its_result


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
