"""``Worker``: one thread for one shared resource (a model, the databases); calls run in order."""

from __future__ import annotations

import functools
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from ..core.errors import Cancelled

IO = "io"


class Worker:
    def __init__(self, name: str):
        self.name = name
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=f"ferrum-{name}", initializer=self._note_thread)
        self._thread: int | None = None
        self._active = 0
        self._lock = threading.Lock()
        self._closed = False

    def _note_thread(self) -> None:
        self._thread = threading.get_ident()

    @property
    def active(self) -> int:
        """Calls queued or running."""
        return self._active

    def on_thread(self) -> bool:
        return threading.get_ident() == self._thread

    def submit(self, fn, *args, **kwargs) -> Future:
        """``fn(*args, **kwargs)`` on this worker, after everything submitted before it."""
        if self._closed:
            raise Cancelled(f"The {self.name} worker has shut down", "start the engine again")
        with self._lock:
            self._active += 1
        try:
            future = self._pool.submit(functools.partial(fn, *args, **kwargs))
        except RuntimeError as exc:  # shut down between the check and the submit
            self._done(None)
            raise Cancelled(f"The {self.name} worker has shut down", "start the engine again") from exc
        future.add_done_callback(self._done)
        return future

    def call(self, fn, *args, **kwargs):
        """``fn`` on this worker, blocking; inline when already on it (no deadlock)."""
        if self.on_thread():
            return fn(*args, **kwargs)
        return self.submit(fn, *args, **kwargs).result()

    def _done(self, _future) -> None:
        with self._lock:
            self._active -= 1

    def shutdown(self, wait: bool = True, finish_queued: bool = False) -> None:
        self._closed = True
        self._pool.shutdown(wait=wait, cancel_futures=not finish_queued)
