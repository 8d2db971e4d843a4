"""``ExecutorHost``: the engine service (``executors.service.EngineService``) seen from Qt.

The service owns the models, their worker threads, the jobs, the history, the search index and the
dictation sessions; the host turns the service's events into Qt signals on the GUI thread and its
futures into awaitables on the qasync loop. Every async method raises ``FerrumError`` and also
reports it on ``failure`` (except ``Cancelled``), so panels only reset their own state and never show
errors themselves.
"""

from __future__ import annotations

import asyncio
import dataclasses

from PySide6.QtCore import QObject, QTimer, Signal

from executors.core.errors import Cancelled, FerrumError, ModelError, wrap_unexpected
from executors.core.stats import process_rss
from executors.core.types import ExecutorState
from executors.service import EngineService, wait
from executors.service import events as ev
from executors.service.jobs import JobInfo  # noqa: F401 - re-exported for panels and tests
from executors.service.settings import EMBEDDING, MODEL_KINDS, WHISPER

from ..settings import HostSettings
from .dictation import HostDictation
from .io import IO, HostServices, cache_hit_rate

MODEL_NAMES = MODEL_KINDS


def _loop() -> asyncio.AbstractEventLoop:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # a slot called from plain Qt dispatch: the qasync loop is still the one set
        return asyncio.get_event_loop()


class ExecutorHost(QObject, HostServices, HostDictation):
    modelStateChanged = Signal(str, str, str)   # name, "loading"|"ready"|"error"|"reloading", message
    statusUpdated = Signal(str, object)         # name, ExecutorStatus
    metricsUpdated = Signal(str, object)        # name, {"capabilities", "cache", "info", "model"}
    jobStarted = Signal(str, object)            # job_id, JobInfo
    jobProgress = Signal(str, object)           # job_id, Progress
    segmentProduced = Signal(str, object)       # job_id, Segment
    jobNotice = Signal(str, str, str)           # job_id, message, hint: a warning about a job that still succeeds
    jobFinished = Signal(str, object)           # job_id, Transcript | IndexReport
    jobFailed = Signal(str, object)             # job_id, FerrumError (Cancelled included)
    failure = Signal(object)                    # FerrumError: the one notification path
    historyChanged = Signal()
    indexChanged = Signal()
    sample = Signal(str, float)                 # series name, value (monitor plots)

    def __init__(self, settings: HostSettings | None = None, parent: QObject | None = None,
                 poll_ms: int = 500):
        super().__init__(parent)
        self._settings = settings or HostSettings()
        self.service = EngineService(self._settings.service_settings())
        self._closed = False
        self._started = False
        self._gui_loop = _loop()
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self.poll)
        self._unsubscribe = self.service.subscribe(self._on_event)

    # ---- state ---------------------------------------------------------------------------
    @property
    def settings(self) -> HostSettings:
        """The settings in effect: a model the service refused leaves the working model's name here, as
        soon as it is refused (before ``reload`` returns), so nobody shows the refused one as current."""
        kept = self.service.settings
        return dataclasses.replace(self._settings, whisper_model=kept.whisper_model,
                                   embedding_model=kept.embedding_model)

    @property
    def whisper(self):
        model = self.service.models.loaded(WHISPER)
        return model.executor if model else None

    @property
    def embedding(self):
        model = self.service.models.loaded(EMBEDDING)
        return model.executor if model else None

    def model(self, name: str):
        """The ``LoadedModel`` (executor, model_id, source, device, dtype, load_seconds, multilingual)."""
        return self.service.models.loaded(name)

    def multilingual(self) -> bool | None:
        """Whether the loaded Whisper model knows other languages than English (None while none is loaded)."""
        model = self.model(WHISPER)
        return model.multilingual if model is not None else None

    def model_state(self, name: str) -> tuple[str, str]:
        return self.service.models.state(name)

    def reload_count(self, name: str) -> int:
        return self.service.models.reloads(name)

    def whisper_models(self) -> list[str]:
        """Model refs to offer in model pickers: the current one first, then the Whisper models the store
        has (bundled ones whose packages are installed, imported ones)."""
        from executors.models.store import model_names

        from ..settings import DEFAULT_WHISPER

        return list(dict.fromkeys([self.settings.whisper_model, DEFAULT_WHISPER, *model_names("whisper")]))

    def running_jobs(self) -> list[JobInfo]:
        return self.service.jobs.active()

    # ---- service events -> signals (GUI thread) --------------------------------------------
    def _on_event(self, event) -> None:
        """Any thread: move the event to the GUI thread (in order with the futures' results)."""
        if self._closed:
            return
        try:
            self._gui_loop.call_soon_threadsafe(self._dispatch, event)
        except RuntimeError:  # the loop closed while the app quits: nobody is listening
            pass

    def _dispatch(self, event) -> None:
        if self._closed:
            return
        if isinstance(event, ev.ModelStateChanged):
            self.modelStateChanged.emit(event.kind, event.state, event.message)
            if event.error is not None:
                self._report(event.error, f"loading the {event.kind} model")
            if event.state == "ready":
                self.poll()
        elif isinstance(event, ev.JobStarted):
            self.jobStarted.emit(event.job_id, event.info)
            self.poll(busy=WHISPER if event.info.kind == "transcribe" else EMBEDDING)  # not half a second late
        elif isinstance(event, ev.JobProgress):
            self.jobProgress.emit(event.job_id, event.progress)
        elif isinstance(event, ev.SegmentProduced):
            self.segmentProduced.emit(event.job_id, event.segment)
        elif isinstance(event, ev.JobNotice):
            self.jobNotice.emit(event.job_id, event.message, event.hint)
        elif isinstance(event, ev.JobFinished):
            self.jobFinished.emit(event.job_id, getattr(event.result, "transcript", event.result))
            self.poll()
        elif isinstance(event, ev.JobFailed):
            self.jobFailed.emit(event.job_id, event.error)
            self.poll()
        elif isinstance(event, ev.HistoryChanged):
            self.historyChanged.emit()
        elif isinstance(event, ev.IndexChanged):
            self.indexChanged.emit()
        elif isinstance(event, ev.Sample):
            self.sample.emit(event.series, event.value)
        elif isinstance(event, ev.Failure):
            self._report(event.error, "working in the background")

    # ---- running work --------------------------------------------------------------------
    async def _await(self, work, doing: str):
        """Await a service future or job; a failure is reported once and raised as a FerrumError."""
        self._gui_loop = _loop()
        try:
            return await wait(work)
        except (Exception, asyncio.CancelledError) as exc:
            raise self._report(exc, doing) from exc

    async def _run(self, pool: str, fn, *args, **kwargs):
        if self._closed:
            raise Cancelled("The app is shutting down", "start the app again")
        self._gui_loop = _loop()
        if pool in MODEL_NAMES and self.service.models.loaded(pool) is not None:
            QTimer.singleShot(0, self, self.poll)  # show "Busy" now, not at the next tick
        return await wait(self.service.workers[pool].submit(fn, *args, **kwargs))

    async def run_on(self, name: str, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` on worker ``name`` ("whisper" | "embedding" | "io"), in turn with the
        service's other work; errors are not reported."""
        return await self._run(name, fn, *args, **kwargs)

    def _report(self, exc: BaseException, doing: str) -> FerrumError:
        """Turn ``exc`` into a FerrumError and emit it on ``failure`` (once per error)."""
        if isinstance(exc, asyncio.CancelledError):
            exc = Cancelled(f"Stopped while {doing}", "start it again when you are ready")
        err = wrap_unexpected(exc, doing)
        if not isinstance(err, Cancelled) and not self._closed and not getattr(err, "_ferrum_reported", False):
            err._ferrum_reported = True
            self.failure.emit(err)
        return err

    def _threadsafe(self, fn):
        """Wrap a GUI-thread callback so workers can call it; drops calls after close()."""
        loop = self._gui_loop = _loop()

        def call(*args):
            if self._closed:
                return
            try:
                loop.call_soon_threadsafe(lambda: None if self._closed else fn(*args))
            except RuntimeError:  # the loop closed while the app quits: nobody is listening
                pass
        return call

    def _background(self, coro, doing: str) -> asyncio.Future:
        """Run a coroutine nobody awaits; its failure goes to ``failure``."""
        async def guarded():
            try:
                return await coro
            except Exception as exc:  # noqa: BLE001
                self._report(exc, doing)
        return asyncio.ensure_future(guarded(), loop=_loop())

    # ---- models --------------------------------------------------------------------------
    def start(self) -> asyncio.Future:
        """Start loading both models in the background and polling their status.

        Returns a future that resolves when both loads finished (successfully or not); awaiting
        it is optional.
        """
        self._started = True
        self._timer.start()
        loads = [asyncio.wrap_future(self.service.models.load(name), loop=_loop()) for name in MODEL_NAMES]
        return asyncio.gather(*loads, return_exceptions=True)

    async def ready(self, name: str):
        """The loaded executor ``name``, waiting for a load in progress (starting one if needed)."""
        if not self._started:
            self.start()
        try:
            return (await wait(self.service.models.load(name))).executor
        except FerrumError as exc:
            raise ModelError(f"The {name} model is not loaded", f"it failed to load ({exc.message}); "
                             "choose another model or device in Preferences and apply") from exc

    async def reload(self, settings: HostSettings) -> list[str]:
        """Apply new settings, reloading only the executors they affect; returns their names. A model that
        cannot be loaded is refused and the working one kept, and ``settings`` names the kept one."""
        self._settings = settings
        names = self.service.apply(settings.service_settings())
        results = await asyncio.gather(*(wait(self.service.models.load(n)) for n in names), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise self._report(result, "loading the new model")
        return names

    def apply_settings(self, settings: HostSettings) -> asyncio.Future:
        """``reload`` in the background (for dialogs); failures go to ``failure``."""
        return self._background(self.reload(settings), "applying the new settings")

    async def available_devices(self) -> list[str]:
        """``executors.core.device.available_devices()`` off the GUI thread (it imports torch)."""
        from executors.core.device import available_devices

        return await self._run(IO, available_devices)

    # ---- status polling ------------------------------------------------------------------
    def poll(self, busy: str | None = None) -> None:
        """Emit status and metrics of every loaded executor (status() is thread-safe and cheap);
        ``busy``: the executor a job just started on (Busy even if its worker has not picked it up yet)."""
        loaded, caches = False, []
        for name in MODEL_NAMES:
            model = self.service.models.loaded(name)
            if model is None:
                continue
            ex = model.executor
            try:
                status = ex.status()
                if (self.service.workers[name].active or name == busy) and status.state is ExecutorState.READY:
                    # between two operations of a running job the executor itself says Ready
                    status = dataclasses.replace(status, state=ExecutorState.BUSY)
                cache = ex.cache_metrics_snapshot()
                metrics = {"capabilities": ex.capabilities(), "cache": cache, "info": ex.info(), "model": model,
                           "reloads": self.reload_count(name)}
            except Exception as exc:  # noqa: BLE001 - a broken executor must not stop the poll
                self._report(exc, f"reading the {name} status")
                continue
            self.statusUpdated.emit(name, status)
            self.metricsUpdated.emit(name, metrics)
            caches += list(cache.caches.values()) if cache else []
            loaded = True
        rate = cache_hit_rate(caches)
        if rate is not None:
            self.sample.emit("cache_hit_rate", rate)
        if loaded:  # the whole process (each model's own share is in its status)
            self.sample.emit("memory_mb", process_rss() / 2**20)

    # ---- jobs ----------------------------------------------------------------------------
    def cancel(self, job_id: str) -> bool:
        """Ask a queued or running job to stop; it then fails with ``Cancelled``."""
        return self.service.cancel(job_id)

    def cancel_all(self) -> None:
        self.service.jobs.cancel_all()

    def transcribe(self, path, options=None, job_id: str | None = None) -> asyncio.Future:
        """Queue one file for transcription into the history now (jobs run in the order of these calls;
        each segment is saved as it arrives); await the returned future for the Transcript."""
        from pathlib import Path

        try:
            job = self.service.transcribe(path, options, job_id=job_id)
        except FerrumError as exc:  # e.g. invalid options: the returned future holds the error
            failed = _loop().create_future()
            failed.set_exception(self._report(exc, f"transcribing {Path(path).name}"))
            return failed

        async def transcript():
            return (await self._await(job, f"transcribing {Path(path).name}")).transcript
        return asyncio.ensure_future(transcript(), loop=_loop())

    # ---- shutdown ------------------------------------------------------------------------
    def close(self, wait: bool = True) -> None:
        """Cancel every job, stop polling, join the workers and close the databases."""
        if self._closed:
            return
        self._closed = True
        self._timer.stop()
        self._unsubscribe()
        self.service.close(wait=wait)
