"""``ExecutorHost``: owns the executors and runs all model and disk work off the GUI thread.

One single-thread worker per executor plus one for I/O keeps each model's work in order and the
GUI thread free. Every async method raises ``FerrumError`` and also reports it on ``failure``
(except ``Cancelled``), so panels only reset their own state and never show errors themselves.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from executors.core.errors import (
    Cancelled,
    FerrumError,
    ModelError,
    NotFoundError,
    wrap_unexpected,
)
from executors.core.types import CancelToken, ExecutorState

from . import host_jobs as jobs
from .host_dictation import HostDictation
from .host_io import IO, HostServices
from .host_jobs import EMBEDDING, MODEL_NAMES, WHISPER, JobInfo
from .settings import HostSettings


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
        self._pools = {name: ThreadPoolExecutor(1, thread_name_prefix=f"ferrum-{name}")
                       for name in (*MODEL_NAMES, IO)}
        self._models: dict[str, jobs.LoadedModel | None] = dict.fromkeys(MODEL_NAMES)
        self._loads: dict[str, asyncio.Future | None] = dict.fromkeys(MODEL_NAMES)
        self._states: dict[str, tuple[str, str]] = {n: ("idle", "not loaded yet") for n in MODEL_NAMES}
        self._reloads = dict.fromkeys(MODEL_NAMES, 0)
        self._active = dict.fromkeys(self._pools, 0)  # calls queued or running per worker
        self._jobs: dict[str, tuple[JobInfo, CancelToken]] = {}
        self._history = None   # created in the I/O worker
        self._store = None     # created in the embedding worker (SQLite connections stay in one thread)
        self._closed = False
        self._gui_loop: asyncio.AbstractEventLoop | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self.poll)

    # ---- state ---------------------------------------------------------------------------
    @property
    def settings(self) -> HostSettings:
        return self._settings

    @property
    def whisper(self):
        model = self._models[WHISPER]
        return model.executor if model else None

    @property
    def embedding(self):
        model = self._models[EMBEDDING]
        return model.executor if model else None

    def model(self, name: str) -> jobs.LoadedModel | None:
        return self._models[name]

    def model_state(self, name: str) -> tuple[str, str]:
        return self._states[name]

    def reload_count(self, name: str) -> int:
        return self._reloads[name]

    def whisper_models(self) -> list[str]:
        """Model refs to offer in model pickers: the current one first, then the bundled ones."""
        from .settings import DEFAULT_WHISPER

        return list(dict.fromkeys([self._settings.whisper_model, DEFAULT_WHISPER, "whisper-base"]))

    def running_jobs(self) -> list[JobInfo]:
        return [info for info, _ in self._jobs.values()]

    # ---- running work --------------------------------------------------------------------
    async def _run(self, pool: str, fn, *args, **kwargs):
        if self._closed:
            raise Cancelled("The app is shutting down", "start the app again")
        self._active[pool] += 1
        if pool in MODEL_NAMES and self._models[pool] is not None:
            QTimer.singleShot(0, self, self.poll)  # show "Busy" now, not at the next tick
        try:
            return await _loop().run_in_executor(self._pools[pool], functools.partial(fn, *args, **kwargs))
        finally:
            self._active[pool] -= 1

    async def run_on(self, name: str, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` on worker ``name`` ("whisper" | "embedding" | "io"), in turn with the
        GUI's own jobs (the API server's ``ModelService`` goes through here); errors are not reported."""
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
        self._timer.start()
        for name in MODEL_NAMES:
            if self._loads[name] is None:
                self._loads[name] = asyncio.ensure_future(self._load(name, "loading"), loop=_loop())
        return asyncio.gather(*(self._loads[n] for n in MODEL_NAMES), return_exceptions=True)

    async def _load(self, name: str, state: str) -> jobs.LoadedModel:
        ref = self._settings.whisper_model if name == WHISPER else self._settings.embedding_model
        self._set_state(name, state, f"Loading {ref} (device: {self._settings.device})…")
        old, unloaded = self._models[name], False
        loader = jobs.load_whisper if name == WHISPER else jobs.load_embedding
        try:
            if old is not None:  # (issue 17) a model that cannot be found never replaces a working one
                await self._run(name, jobs.check_model, name, self._settings)
            self._models[name] = None
            if old is not None:
                await self._run(name, jobs.shutdown_executor, old.executor)
                unloaded = True
            model = await self._run(name, loader, self._settings)
        except Exception as exc:
            err = self._report(exc, f"loading the {name} model")
            if old is not None:
                return await self._keep_previous(name, old, unloaded, err)
            self._set_state(name, "error", err.message)
            raise err from exc
        self._models[name] = model
        self._set_state(name, "ready", f"{model.model_id} on {model.device} ({model.dtype}), "
                                       f"loaded in {model.load_seconds:.1f} s")
        self.poll()
        return model

    async def _keep_previous(self, name: str, old: jobs.LoadedModel, unloaded: bool, err) -> jobs.LoadedModel:
        """(issue 17) The new model failed: go back to the one that worked (loading it again when it was
        unloaded already) and to its setting, so the app keeps working and the bad choice is not kept."""
        field = "whisper_model" if name == WHISPER else "embedding_model"
        self._settings = self._settings.with_changes(**{field: old.ref or getattr(self._settings, field)})
        model = old
        if unloaded:
            try:
                model = await self._run(name, jobs.load_whisper if name == WHISPER else jobs.load_embedding,
                                        self._settings)
            except Exception as exc:
                again = self._report(exc, f"loading the {name} model again")
                self._set_state(name, "error", again.message)
                raise again from exc
        self._models[name] = model
        self._set_state(name, "ready", f"{model.model_id} kept: {err.message}")
        self.poll()
        return model

    def _set_state(self, name: str, state: str, message: str) -> None:
        self._states[name] = (state, message)
        self.modelStateChanged.emit(name, state, message)

    async def ready(self, name: str):
        """The loaded executor ``name``, waiting for a load in progress (starting one if needed)."""
        if self._loads[name] is None:
            self.start()
        try:
            return (await asyncio.shield(self._loads[name])).executor
        except FerrumError as exc:
            raise ModelError(f"The {name} model is not loaded", f"it failed to load ({exc.message}); "
                             "choose another model or device in Preferences and apply") from exc

    async def reload(self, settings: HostSettings) -> list[str]:
        """Apply new settings, reloading only the executors they affect; returns their names."""
        names = self._settings.models_to_reload(settings)
        self._settings = settings
        for name in names:
            self._reloads[name] += 1
            previous = self._loads[name]
            self._loads[name] = asyncio.ensure_future(self._reload_after(name, previous), loop=_loop())
        results = await asyncio.gather(*(self._loads[n] for n in names), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return names

    def apply_settings(self, settings: HostSettings) -> asyncio.Future:
        """``reload`` in the background (for dialogs); failures go to ``failure``."""
        return self._background(self.reload(settings), "applying the new settings")

    async def available_devices(self) -> list[str]:
        """``executors.core.device.available_devices()`` off the GUI thread (it imports torch)."""
        from executors.core.device import available_devices

        return await self._run(IO, available_devices)

    async def _reload_after(self, name: str, previous: asyncio.Future | None):
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        return await self._load(name, "reloading")

    # ---- status polling ------------------------------------------------------------------
    def poll(self) -> None:
        """Emit status and metrics of every loaded executor (status() is thread-safe and cheap)."""
        memory, caches = None, []
        for name in MODEL_NAMES:
            model = self._models[name]
            if model is None:
                continue
            ex = model.executor
            try:
                status = ex.status()
                if self._active[name] and status.state is ExecutorState.READY:
                    # between two operations of a running job the executor itself says Ready
                    status = dataclasses.replace(status, state=ExecutorState.BUSY)
                cache = ex.cache_metrics_snapshot()
                metrics = {"capabilities": ex.capabilities(), "cache": cache, "info": ex.info(), "model": model,
                           "reloads": self._reloads[name]}
            except Exception as exc:  # noqa: BLE001 - a broken executor must not stop the poll
                self._report(exc, f"reading the {name} status")
                continue
            self.statusUpdated.emit(name, status)
            self.metricsUpdated.emit(name, metrics)
            caches += list(cache.caches.values()) if cache else []
            memory = status.memory_usage
        rate = jobs.cache_hit_rate(caches)
        if rate is not None:
            self.sample.emit("cache_hit_rate", rate)
        if memory is not None:
            self.sample.emit("memory_mb", memory.used_bytes / 2**20)

    # ---- jobs ----------------------------------------------------------------------------
    def _begin_job(self, kind: str, title: str, source: str, job_id: str | None) -> tuple[JobInfo, CancelToken]:
        info = JobInfo(job_id or jobs.new_job_id(kind), kind, title, source)
        token = CancelToken()
        self._jobs[info.job_id] = (info, token)
        return info, token

    def cancel(self, job_id: str) -> bool:
        """Ask a queued or running job to stop; it then fails with ``Cancelled``."""
        entry = self._jobs.get(job_id)
        if entry:
            entry[1].cancel()
        return entry is not None

    def cancel_all(self) -> None:
        for _, token in self._jobs.values():
            token.cancel()

    async def transcribe(self, path, options=None, job_id: str | None = None):
        """Transcribe one file; each segment is saved to the history as it arrives."""
        from executors.whisper.options import TranscribeOptions

        path = Path(path)
        options = (options or TranscribeOptions()).validate()
        info, token = self._begin_job("transcribe", path.name, str(path), job_id)
        info.path = path
        try:
            if not path.is_file():
                raise NotFoundError(f"{path} does not exist", "check the path, or pick the file again")
            info.duration = await self._run(IO, jobs.probe_duration, path)
            whisper = await self.ready(WHISPER)
            token.raise_if_cancelled("transcription")
            info.record_id = await self._io(lambda h: h.begin(str(path), whisper.model_id, options,
                                                              audio_path=str(path)))
            self.historyChanged.emit()
            info.started = time.time()
            self.jobStarted.emit(info.job_id, info)
            on_segment = self._threadsafe(functools.partial(self._segment, info))
            on_progress = self._threadsafe(functools.partial(self.jobProgress.emit, info.job_id))
            transcript, wall_s = await self._run(
                WHISPER, jobs.transcribe_file, whisper, path, options, on_segment, on_progress, token)
            await self._io(lambda h: h.finish(info.record_id, transcript))
        except (Exception, asyncio.CancelledError) as exc:
            token.cancel()  # the awaiting task may be cancelled while the worker still runs
            err = self._report(exc, f"transcribing {path.name}")
            if info.record_id is not None:
                partial = getattr(err, "partial", None)
                if isinstance(err, Cancelled):
                    end = self._io(lambda h: h.cancel(info.record_id, partial))
                else:
                    end = self._io(lambda h: h.fail(info.record_id, err.message, partial))
                self._background(end, "saving the history")
            self._jobs.pop(info.job_id, None)
            self.jobFailed.emit(info.job_id, err)
            self.historyChanged.emit()
            raise err from exc
        self._jobs.pop(info.job_id, None)
        self.sample.emit("job_latency_s", wall_s)
        if transcript.duration > 0:
            self.sample.emit("rtf", wall_s / transcript.duration)
        self.jobFinished.emit(info.job_id, transcript)
        self.historyChanged.emit()
        if self._settings.auto_index_transcripts and transcript.segments:
            self._background(self.index_transcript(info.record_id), "indexing the transcript")
        return transcript

    def _segment(self, info: JobInfo, segment) -> None:
        self.segmentProduced.emit(info.job_id, segment)
        self._pools[IO].submit(self._append_segment, info.record_id, segment)

    def _append_segment(self, record_id, segment) -> None:
        try:
            self._history_store().append_segment(record_id, segment)
        except Exception as exc:  # noqa: BLE001 - reported on the GUI thread
            err = wrap_unexpected(exc, "saving a segment to the history")
            if self._gui_loop is not None and not self._closed:
                self._gui_loop.call_soon_threadsafe(self._report, err, "saving a segment")

    # ---- shutdown ------------------------------------------------------------------------
    def close(self, wait: bool = True) -> None:
        """Cancel every job, stop polling, join the workers and close the databases."""
        if self._closed:
            return
        self._closed = True
        self._timer.stop()
        self.cancel_all()
        self.stop_dictation(wait=wait)
        for pool in self._pools.values():
            pool.shutdown(wait=wait, cancel_futures=True)
        if wait:  # both connections allow other threads; the workers are gone by now
            for db in (self._history, self._store):
                if db is not None:
                    db.close()
