"""``EngineService``: the one engine behind the app, the ``ferrum`` CLI and the API server.

    with EngineService(ServiceSettings(whisper_model="whisper-base")) as engine:
        result = engine.transcribe("talk.mp3").result()         # TranscriptionResult, in the history
        engine.history.export(result.record_id, "talk.srt")
        hits = engine.search.search("budget", hybrid=True).result()

It owns one worker thread per model (Whisper, embedding) plus one for the databases, the two model
slots, the job board, the transcript history, the search index and dictation sessions. Operations
take options dataclasses and return ``Job``s (long work: id, cancel, events) or futures; what happens
is also told as events (``subscribe``), which the GUI host turns into Qt signals.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from typing import Any

from ..core.errors import FerrumError, wrap_unexpected
from . import dictation_store, transcription, transcription_many
from .dictation import DictationService
from .events import EventHub
from .history import HistoryService
from .jobs import Job, JobBoard
from .models import ModelSlots
from .scratch import ScratchFolder
from .search import SearchService
from .settings import EMBEDDING, MODEL_KINDS, WHISPER, ServiceSettings
from .workers import IO, Worker


class EngineService:
    def __init__(self, settings: ServiceSettings | None = None, *, executors: dict[str, Any] | None = None):
        """``executors`` hands in models already loaded (tests and benchmarks share theirs this way)."""
        from ..core.paths import data_dir

        settings = settings or ServiceSettings()
        self.events = EventHub()
        self.workers = {name: Worker(name) for name in (*MODEL_KINDS, IO)}
        self.models = ModelSlots(settings, self.workers, self.events, executors)
        self.jobs = JobBoard(self.events)
        self.history = HistoryService(settings.history_db, self.workers[IO], self.events)
        self.search = SearchService(settings.search_db, self.models, self.workers[EMBEDDING], self.jobs,
                                    self.events, self.history)
        self.history.on_record_changed = self._record_changed
        self._scratch = ScratchFolder(data_dir() / "dictation" / "unsaved", keep=dictation_store.MARKER)
        self.dictation = DictationService(self.models, self.history, self.events, self._scratch,
                                          lambda: data_dir() / "dictation")
        self._closed = False

    # -- settings and models ----------------------------------------------------------------------
    def apply(self, settings: ServiceSettings) -> list[str]:
        """Use ``settings`` from now on; reloads the models they change (returns those kinds; each one's
        ``models.load(kind)`` future settles when it is in). Queued work runs on the new models."""
        return self.models.reload(settings)

    @property
    def settings(self) -> ServiceSettings:
        """The settings in effect (a model that failed to load leaves its predecessor's choice here)."""
        return self.models.settings

    def subscribe(self, listener) -> Any:
        """``listener(event)`` for every ``executors.service.events`` event; returns the unsubscribe call."""
        return self.events.subscribe(listener)

    # -- operations -------------------------------------------------------------------------------
    def transcribe(self, source, options=None, **kwargs) -> Job:
        """Transcribe a file path, audio bytes or 16 kHz samples as a job on the Whisper worker (after the
        jobs queued before it); its result is a ``TranscriptionResult``. Keyword arguments: ``title``,
        ``save`` (into the history; default ``settings.save_history``), ``job_id``, ``on_segment``,
        ``on_progress``, ``on_start`` (callbacks run on the worker)."""
        return transcription.submit(self, source, options, **kwargs)

    def transcribe_many(self, paths, options=None, **kwargs) -> Job:
        """Transcribe many files as one job whose windows share batches; its result is one
        ``FileOutcome`` per path. Keyword arguments: ``save``, ``speakers``, ``job_id``, ``on_file``,
        ``on_segment``, ``on_progress`` (see ``transcription_many.submit_many``)."""
        return transcription_many.submit_many(self, paths, options, **kwargs)

    def cancel(self, job_id: str) -> bool:
        return self.jobs.cancel(job_id)

    def _record_changed(self, record_id: int, deleted: bool) -> None:
        self.search.follow_record(record_id, deleted, reindex=self.settings.auto_index_transcripts)

    # -- for asyncio front-ends (the API server) -------------------------------------------------
    async def executor(self, kind: str):
        """The loaded executor of ``kind``, waiting for its load."""
        model = await wait(self.models.load(kind))
        return model.executor

    async def run(self, kind: str, fn, *args, urgent: bool = False, **kwargs):
        """``fn(*args, **kwargs)`` on the worker of ``kind`` ("whisper" | "embedding" | "io"), in turn with
        everything else queued there; ``urgent`` (someone waits for the answer): before queued work, and
        between two batches of a running job."""
        worker = self.workers[kind]
        try:
            return await wait((worker.submit_urgent if urgent else worker.submit)(fn, *args, **kwargs))
        except FerrumError:
            raise
        except Exception as exc:
            raise wrap_unexpected(exc, f"running a {kind} request") from exc

    def record(self, series: str, value: float) -> None:
        """A metric sample for the monitor (``Sample`` event)."""
        self.events.sample(series, value)

    # -- lifetime -------------------------------------------------------------------------------
    def close(self, wait: bool = True, finish_queued: bool = False) -> None:
        """Cancel every job, stop dictation, join the workers and close the databases (with ``wait``).
        Other queued work (e.g. dropping a deleted record from the index) is dropped too, unless
        ``finish_queued``."""
        if self._closed:
            return
        self._closed = True
        self.jobs.cancel_all()
        self.dictation.stop(wait=wait)
        for worker in self.workers.values():
            worker.shutdown(wait=wait, finish_queued=finish_queued)
        if wait:  # the workers are gone: nobody else uses the connections
            self.dictation.discard()
            self.history.close()
            self.search.close()
            self._scratch.close()

    def __enter__(self) -> EngineService:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


async def wait(future: Future | Job, cancel: Any = None):
    """Await a service future (or a job) on the running loop; if the awaiting task is cancelled the job
    (or ``cancel``, a CancelToken) is cancelled too, and the work is left to stop at its next check."""
    if isinstance(future, Job):
        job, future = future, future.future
    else:
        job = None
    inner = asyncio.wrap_future(future)
    try:
        return await asyncio.shield(inner)
    except asyncio.CancelledError:
        inner.add_done_callback(lambda done: done.cancelled() or done.exception())  # nobody awaits it now
        if job is not None:
            job.cancel()
        if cancel is not None:
            cancel.cancel()
        raise


__all__ = ["EngineService", "wait"]
