"""``ModelTurns``: who may run on a model next.

One model serves several kinds of work at once: a file job that runs for minutes, a live dictation
pass that someone is waiting for, a request from the API. Each takes a *turn* (a reentrant lock);
waiters are served by urgency, then by arrival; a long job hands the model over between two 30 s
windows (``yield_turn``), so an urgent pass waits for at most the window in progress, never for the
whole file.
"""

from __future__ import annotations

import collections
import enum
import heapq
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


class Urgency(enum.IntEnum):
    """Lower runs first."""

    LIVE = 0     # a dictation pass: a person is waiting for the words
    NORMAL = 1   # file jobs, API requests, contract calls


@dataclass(frozen=True)
class Wait:
    """One turn that had to wait: when it was asked for and when it was granted (monotonic s)."""

    urgency: Urgency
    requested: float
    granted: float

    @property
    def seconds(self) -> float:
        return self.granted - self.requested


class ModelTurns:
    """A reentrant lock whose waiters are served most urgent first, then first come."""

    def __init__(self, keep_waits: int = 512):
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._urgency = Urgency.NORMAL
        self._queue: list[tuple[int, int, int]] = []  # heap of (urgency, arrival, thread id)
        self._arrivals = itertools.count()
        self.waits: collections.deque[Wait] = collections.deque(maxlen=keep_waits)
        self.handovers = 0  # times a running job gave the model to a waiter between two windows

    # -- the lock protocol (``with turns:`` takes a NORMAL turn) ---------------------------------
    def acquire(self, urgency: Urgency = Urgency.NORMAL) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return
            self._wait_for_turn(me, urgency, depth=1)

    def release(self) -> None:
        with self._cond:
            if self._owner != threading.get_ident():
                raise RuntimeError("ModelTurns.release() by a thread that does not hold the turn")
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._cond.notify_all()

    def __enter__(self) -> ModelTurns:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    @contextmanager
    def turn(self, urgency: Urgency = Urgency.NORMAL) -> Iterator[None]:
        self.acquire(urgency)
        try:
            yield
        finally:
            self.release()

    # -- handing over ----------------------------------------------------------------------------
    def waiting(self) -> bool:
        """Whether work at least as urgent as the holder's waits for the model."""
        with self._cond:
            return bool(self._queue) and self._queue[0][0] <= self._urgency

    def yield_turn(self) -> bool:
        """Called by the holder between two pieces of work: when work at least as urgent waits, let it
        run first and come back after it (the holder's nesting depth is kept). Returns whether it did."""
        me = threading.get_ident()
        with self._cond:
            if self._owner != me or not self._queue or self._queue[0][0] > self._urgency:
                return False
            depth, urgency = self._depth, self._urgency
            self._owner, self._depth = None, 0
            self.handovers += 1
            self._cond.notify_all()
            self._wait_for_turn(me, urgency, depth, record=False)
            return True

    def _wait_for_turn(self, me: int, urgency: Urgency, depth: int, record: bool = True) -> None:
        """Queue ``me`` and block until it is first in line and the model is free (lock held)."""
        entry = (int(urgency), next(self._arrivals), me)
        heapq.heappush(self._queue, entry)
        requested = time.monotonic()
        waited = False
        while self._owner is not None or self._queue[0] is not entry:
            waited = True
            self._cond.wait()
        heapq.heappop(self._queue)
        self._owner, self._depth, self._urgency = me, depth, Urgency(urgency)
        if waited and record:
            self.waits.append(Wait(Urgency(urgency), requested, time.monotonic()))
