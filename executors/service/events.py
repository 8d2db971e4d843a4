"""What the engine service tells its front-ends, as plain dataclasses.

Events are delivered on the thread that produced them (usually a model's worker); a front-end that
needs them elsewhere moves them there itself (the GUI host posts them to the Qt thread).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

log = logging.getLogger("executors.service")


@dataclass(frozen=True)
class ModelStateChanged:
    kind: str      # "whisper" | "embedding"
    state: str     # "idle" | "loading" | "ready" | "error" | "reloading"
    message: str
    error: Any = None  # the FerrumError of a failed load


@dataclass(frozen=True)
class JobStarted:
    job_id: str
    info: Any      # JobInfo


@dataclass(frozen=True)
class JobProgress:
    job_id: str
    progress: Any  # executors.core.types.Progress


@dataclass(frozen=True)
class SegmentProduced:
    job_id: str
    segment: Any   # Segment


@dataclass(frozen=True)
class JobFinished:
    job_id: str
    result: Any    # TranscriptionResult | IndexReport


@dataclass(frozen=True)
class JobNotice:
    """What the user should know about a job that still succeeds (e.g. its file is cut short)."""

    job_id: str
    message: str
    hint: str


@dataclass(frozen=True)
class JobFailed:
    job_id: str
    error: Any     # FerrumError (Cancelled included)


@dataclass(frozen=True)
class HistoryChanged:
    record_id: int | None = None


@dataclass(frozen=True)
class IndexChanged:
    collection: str


@dataclass(frozen=True)
class Sample:
    """A metric sample for the monitor's plots (job_latency_s, rtf, texts_per_s, dictation_*, api_*)."""

    series: str
    value: float


@dataclass(frozen=True)
class Failure:
    """Background work nobody awaits failed (e.g. indexing a finished transcript)."""

    error: Any     # FerrumError


ServiceEvent = Union[ModelStateChanged, JobStarted, JobProgress, SegmentProduced, JobNotice, JobFinished,
                     JobFailed, HistoryChanged, IndexChanged, Sample, Failure]
Listener = Callable[[ServiceEvent], None]


class EventHub:
    """Listeners of the service's events; a failing listener is logged and never stops the others."""

    def __init__(self):
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event from now on; returns the function that stops it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return unsubscribe

    def emit(self, event: ServiceEvent) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a broken front-end must not break the engine
                log.exception("a listener failed on %s", type(event).__name__)

    def sample(self, series: str, value: float) -> None:
        self.emit(Sample(series, float(value)))
