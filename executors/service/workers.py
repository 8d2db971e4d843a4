"""``Worker``: one thread for one shared resource (a model, the databases); calls run in order.

Interactive calls (a query, an API embedding request) take the urgent lane: they run before any queued
call that has not started, and a long job running on the worker lets them go first at its next yield
point (``serve_urgent``, called between two batches), so they wait for one batch, never a whole job.
"""

from __future__ import annotations

import collections
import functools
import threading
from collections.abc import Callable
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
        self._urgent: collections.deque[tuple[Future, Callable]] = collections.deque()
        self._closed = False
        self.served_early = 0  # urgent calls a running job let go first at a yield point

    def _note_thread(self) -> None:
        self._thread = threading.get_ident()

    @property
    def active(self) -> int:
        """Calls queued or running."""
        return self._active

    def on_thread(self) -> bool:
        return threading.get_ident() == self._thread

    def submit(self, fn, *args, **kwargs) -> Future:
        """``fn(*args, **kwargs)`` on this worker, after everything submitted before it (urgent calls
        submitted before it starts go first)."""
        return self._enqueue(functools.partial(self._after_urgent, functools.partial(fn, *args, **kwargs)))

    def submit_urgent(self, fn, *args, **kwargs) -> Future:
        """``fn(*args, **kwargs)`` on this worker as soon as the running call reaches a yield point or
        ends, before every ordinary call still queued."""
        self._check_open()
        future: Future = Future()
        with self._lock:
            self._active += 1
            self._urgent.append((future, functools.partial(fn, *args, **kwargs)))
        future.add_done_callback(self._done)
        try:
            self._enqueue(self.serve_urgent, counted=False)
        except Cancelled:
            future.cancel()
            raise
        return future

    def serve_urgent(self) -> int:
        """Run the urgent calls waiting, on this worker's thread; a long job calls it between two pieces
        of work. Returns how many ran (none when called from another thread)."""
        if not self.on_thread():
            return 0
        served = 0
        while True:
            with self._lock:
                if not self._urgent:
                    return served
                future, call = self._urgent.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = call()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
                future.set_exception(exc)
            else:
                future.set_result(result)
            served += 1

    def call(self, fn, *args, **kwargs):
        """``fn`` on this worker, blocking; inline when already on it (no deadlock)."""
        if self.on_thread():
            return fn(*args, **kwargs)
        return self.submit(fn, *args, **kwargs).result()

    def _after_urgent(self, call: Callable):
        self.serve_urgent()
        return call()

    def yield_point(self) -> None:
        """Where a long job may pause: urgent calls waiting run now, on its thread."""
        self.served_early += self.serve_urgent()

    def _check_open(self) -> None:
        if self._closed:
            raise Cancelled(f"The {self.name} worker has shut down", "start the engine again")

    def _enqueue(self, call: Callable, counted: bool = True) -> Future:
        self._check_open()
        if counted:
            with self._lock:
                self._active += 1
        try:
            future = self._pool.submit(call)
        except RuntimeError as exc:  # shut down between the check and the submit
            if counted:
                self._done(None)
            raise Cancelled(f"The {self.name} worker has shut down", "start the engine again") from exc
        if counted:
            future.add_done_callback(self._done)
        return future

    def _done(self, _future) -> None:
        with self._lock:
            self._active -= 1

    def shutdown(self, wait: bool = True, finish_queued: bool = False) -> None:
        self._closed = True
        if not finish_queued:
            with self._lock:
                waiting, self._urgent = list(self._urgent), collections.deque()
            for future, _ in waiting:
                future.cancel()
        self._pool.shutdown(wait=wait, cancel_futures=not finish_queued)


class YieldingEmbedder:
    """An embedder as a long job on ``worker`` sees it: before each batch it embeds, interactive calls
    waiting on the worker run first. Everything else is the wrapped embedder's."""

    def __init__(self, embedder, worker: Worker):
        self._embedder = embedder
        self._worker = worker

    def embed(self, texts):
        self._worker.yield_point()
        return self._embedder.embed(texts)

    def __getattr__(self, name: str):
        return getattr(self._embedder, name)
