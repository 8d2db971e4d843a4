"""Jobs: long operations (transcribing a file, indexing) with an id, a cancel token and events.

A job is queued on its resource's worker; ``Job.future`` settles when it ends. Cancelling a job that
has not started ends it at once; a running one stops at its next check and keeps what it finished.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..core.errors import Cancelled, FerrumError, wrap_unexpected
from ..core.types import CancelToken
from .events import EventHub, JobFailed, JobFinished, JobStarted
from .workers import Worker

T = TypeVar("T")
_job_numbers = itertools.count(1)


@dataclass
class JobInfo:
    """What a front-end needs to show a job; carried by ``JobStarted``."""

    job_id: str
    kind: str                  # "transcribe" | "index"
    title: str                 # short text for lists (a file name, "3 files")
    source: str = ""           # the file (or files) the job works on
    path: Path | None = None   # the file of a transcription
    duration: float | None = None  # seconds of audio, once known
    created: float = field(default_factory=time.time)
    started: float | None = None
    record_id: Any = None      # history record of a transcription (set before JobStarted)


class Job(Generic[T]):
    """A queued or running job; ``result()`` blocks, ``future`` suits ``asyncio.wrap_future``."""

    def __init__(self, info: JobInfo, board: JobBoard):
        self.info = info
        self.token = CancelToken()
        self.future: Future[T] = Future()
        self._board = board
        self._state = "queued"   # queued | running | over
        self._lock = threading.Lock()

    @property
    def job_id(self) -> str:
        return self.info.job_id

    def cancel(self) -> bool:
        return self._board.cancel(self.job_id)

    def result(self, timeout: float | None = None) -> T:
        return self.future.result(timeout)

    def done(self) -> bool:
        return self.future.done()

    def _claim(self, state: str) -> bool:
        """Move from queued to ``state``; False when the job already left the queue."""
        with self._lock:
            if self._state != "queued":
                return False
            self._state = state
            return True


class JobBoard:
    """The one list of jobs in flight (the app's queue, the CLI's files, the API's requests)."""

    def __init__(self, events: EventHub):
        self.events = events
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def create(self, kind: str, title: str, source: str = "", job_id: str | None = None) -> Job:
        job = Job(JobInfo(job_id or f"{kind}-{next(_job_numbers)}", kind, title, source), self)
        with self._lock:
            self._jobs[job.job_id] = job
        return job

    def run(self, job: Job[T], worker: Worker, body: Callable[[Job[T]], T], doing: str) -> Job[T]:
        """Queue ``body(job)`` on ``worker``; it raises ``Cancelled`` to stop (``job.token`` is set)."""
        try:
            worker.submit(self._execute, job, body, doing)
        except FerrumError as exc:
            if job._claim("over"):
                self._fail(job, exc, doing)
        return job

    def started(self, job: Job) -> None:
        """The body calls this once the job really runs (its record and duration known)."""
        job.info.started = time.time()
        self.events.emit(JobStarted(job.job_id, job.info))

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def active(self) -> list[JobInfo]:
        with self._lock:
            return [job.info for job in self._jobs.values()]

    def cancel(self, job_id: str) -> bool:
        """Ask a job to stop; False when no such job is in flight."""
        job = self.get(job_id)
        if job is None:
            return False
        job.token.cancel()
        if job._claim("over"):
            self._fail(job, Cancelled(f"{job.info.title} was cancelled before it started",
                                      "add it again when you want it"), "")
        return True

    def cancel_all(self) -> None:
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            self.cancel(job.job_id)

    # -- on the worker ---------------------------------------------------------------------------
    def _execute(self, job: Job, body: Callable, doing: str) -> None:
        if not job._claim("running"):
            return  # cancelled while it waited
        try:
            job.token.raise_if_cancelled(doing)
            result = body(job)
        except Exception as exc:  # noqa: BLE001 - every failure settles the job's future
            self._fail(job, exc, doing)
            return
        self._forget(job)
        self.events.emit(JobFinished(job.job_id, result))
        job.future.set_result(result)

    def _fail(self, job: Job, exc: BaseException, doing: str) -> None:
        err = wrap_unexpected(exc, doing)
        if err is not exc:
            err.__cause__ = exc
        job.token.cancel()  # nothing of it may keep running
        self._forget(job)
        self.events.emit(JobFailed(job.job_id, err))
        job.future.set_exception(err)

    def _forget(self, job: Job) -> None:
        with self._lock:
            self._jobs.pop(job.job_id, None)
        with job._lock:
            job._state = "over"
