"""``ModelTurns``: who runs on a model next (threads only, no model)."""

from __future__ import annotations

import threading
import time

import pytest

from executors.core.turns import ModelTurns, Urgency

GUARD_S = 30  # hang guard, not a timing assertion


def _start(fn) -> threading.Thread:
    thread = threading.Thread(target=fn, daemon=True)
    thread.start()
    return thread


def _wait_queued(turns: ModelTurns, n: int) -> None:
    deadline = time.monotonic() + GUARD_S
    while len(turns._queue) < n:
        assert time.monotonic() < deadline, "waiters never queued"
        time.sleep(0.001)


def test_live_waiter_goes_before_earlier_normal_waiters():
    turns, order = ModelTurns(), []
    turns.acquire()
    waiters = []
    for name, urgency in (("file-1", Urgency.NORMAL), ("file-2", Urgency.NORMAL), ("live", Urgency.LIVE)):
        waiters.append(_start(lambda n=name, u=urgency: (turns.acquire(u), order.append(n), turns.release())))
        _wait_queued(turns, len(waiters))
    turns.release()
    for thread in waiters:
        thread.join(GUARD_S)
    assert order == ["live", "file-1", "file-2"]
    assert [w.urgency for w in turns.waits] == [Urgency.LIVE, Urgency.NORMAL, Urgency.NORMAL]


def test_reentrant_and_only_the_holder_releases():
    turns = ModelTurns()
    with turns, turns.turn(Urgency.LIVE):  # nested: no deadlock
        assert turns._depth == 2
    assert turns._owner is None
    with pytest.raises(RuntimeError):
        turns.release()


def test_yield_turn_hands_over_between_windows_and_resumes_with_its_depth():
    turns, log = ModelTurns(), []
    passes_done = threading.Event()

    def file_job():
        with turns, turns:  # as transcribe() inside a caller's own turn
            for window in range(4):
                if turns.yield_turn():
                    log.append(f"handed over before window {window}")
                log.append(f"window {window}")
                if window == 1:
                    _start(live_pass)
                    _wait_queued(turns, 1)
            assert turns._depth == 2

    def live_pass():
        with turns.turn(Urgency.LIVE):
            log.append("live pass")
        passes_done.set()

    _start(file_job).join(GUARD_S)
    assert passes_done.is_set()
    assert log == ["window 0", "window 1", "live pass", "handed over before window 2", "window 2", "window 3"]
    assert turns.handovers == 1
    assert len(turns.waits) == 1 and turns.waits[0].urgency is Urgency.LIVE


def test_yield_turn_keeps_the_model_when_only_less_urgent_work_waits():
    turns, log = ModelTurns(), []
    turns.acquire(Urgency.LIVE)
    waiter = _start(lambda: (turns.acquire(), log.append("file"), turns.release()))
    _wait_queued(turns, 1)
    assert not turns.waiting() and not turns.yield_turn()
    assert log == []
    turns.release()
    waiter.join(GUARD_S)
    assert log == ["file"]
    assert not turns.yield_turn()  # not the holder: nothing to hand over
