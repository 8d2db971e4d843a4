"""Bounded single-producer / single-consumer ring of audio frames.

The producer is the PortAudio callback: ``put`` never waits and never allocates beyond the copy
into preallocated storage; when the ring is full the frames that do not fit are counted as dropped
(the engine reports them as an ``Overrun``).  Positions are monotonically increasing ints owned by
one side each, so no lock is needed (the GIL makes each int store atomic).
"""

from __future__ import annotations

import collections
import threading
import time

import numpy as np


class AudioRing:
    def __init__(self, capacity_frames: int, channels: int = 1):
        if capacity_frames <= 0 or channels <= 0:
            raise ValueError("capacity_frames and channels must be positive")
        self.capacity = int(capacity_frames)
        self.channels = int(channels)
        self._data = np.zeros((self.capacity, self.channels), np.float32)
        self._write = 0      # frames ever written (producer only)
        self._read = 0       # frames ever read (consumer only)
        self._dropped = 0    # frames that did not fit (producer only)
        self._dropped_seen = 0
        # (frames written so far, wall clock) after each put: lets the consumer know when a frame arrived
        self._marks: collections.deque[tuple[int, float]] = collections.deque(maxlen=4096)
        self._wake = threading.Event()
        self.closed = False

    # -- producer ---------------------------------------------------------------------------
    def put(self, frames: np.ndarray, wall: float | None = None) -> int:
        """Copy ``frames`` [n, channels] (or [n] for mono) in; returns how many were dropped."""
        frames = frames.reshape(len(frames), -1)
        n = len(frames)
        free = self.capacity - (self._write - self._read)
        take = min(n, free)
        if take:
            start = self._write % self.capacity
            first = min(take, self.capacity - start)
            self._data[start:start + first] = frames[:first]
            if take > first:
                self._data[:take - first] = frames[first:take]
            self._write += take
            self._marks.append((self._write, time.monotonic() if wall is None else wall))
        if take < n:
            self._dropped += n - take
        self._wake.set()
        return n - take

    def wait_for_space(self, frames: int, timeout: float = 0.05) -> bool:
        """For sources that may block (files): wait until ``frames`` fit; False if still full."""
        deadline = time.monotonic() + timeout
        while self.capacity - (self._write - self._read) < frames:
            if self.closed or time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True

    def close(self) -> None:
        self.closed = True
        self._wake.set()

    # -- consumer ---------------------------------------------------------------------------
    @property
    def available(self) -> int:
        return self._write - self._read

    @property
    def frames_read(self) -> int:
        return self._read

    def wait(self, timeout: float) -> bool:
        """Sleep until something was put (or the ring was closed); True if frames are waiting."""
        if not self.available and not self.closed:
            self._wake.wait(timeout)
        self._wake.clear()
        return self.available > 0

    def get(self, max_frames: int | None = None) -> tuple[np.ndarray, list[tuple[int, float]]]:
        """Up to ``max_frames`` frames (a copy) and the arrival marks that fall inside them."""
        n = self.available if max_frames is None else min(self.available, max_frames)
        start = self._read % self.capacity
        first = min(n, self.capacity - start)
        out = np.empty((n, self.channels), np.float32)
        out[:first] = self._data[start:start + first]
        if n > first:
            out[first:] = self._data[:n - first]
        self._read += n
        marks = []
        while self._marks and self._marks[0][0] <= self._read:
            marks.append(self._marks.popleft())
        return out, marks

    def take_dropped(self) -> int:
        """Frames dropped since the last call."""
        dropped = self._dropped - self._dropped_seen
        self._dropped_seen += dropped
        return dropped
