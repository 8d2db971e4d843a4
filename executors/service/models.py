"""Model loading: the one loader (``load_model``) and the service's two model slots.

Every front-end loads models here, with the same arguments and the same name for each model (the
store's ``model_id``: ``whisper-tiny.en``, never a cache folder). A slot loads on its model's worker,
so work queued behind a (re)load runs on the new model.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from ..core.errors import FerrumError, ModelError, wrap_unexpected
from ..loading import load_executor
from .events import EventHub, ModelStateChanged
from .settings import EMBEDDING, MODEL_KINDS, WHISPER, ServiceSettings
from .workers import Worker

# transformers resolves its lazy attributes non-atomically: two workers importing model classes at
# once can fail with "cannot import name ...". Loads therefore take turns (they share the cores anyway).
_LOAD_LOCK = threading.Lock()


@dataclass
class LoadedModel:
    kind: str
    executor: Any
    model_id: str
    source: str          # "bundled" | "imported" | "ct2-folder" | "hf-folder" | "hf-cache" | "given"
    device: str
    dtype: str
    load_seconds: float

    @property
    def multilingual(self) -> bool | None:
        """Whether a Whisper model knows other languages than English (None for embedding models)."""
        return getattr(self.executor, "is_multilingual", None) if self.kind == WHISPER else None


def check_model(kind: str, ref: str) -> None:
    """Fail (``FerrumError``) when model ``ref`` of ``kind`` cannot be found or read in the store,
    before a working model is unloaded for it."""
    try:
        with _LOAD_LOCK:
            _resolve(kind, ref)
    except Exception as exc:  # noqa: BLE001
        raise _load_error(exc, kind, ref) from exc


def _resolve(kind: str, ref: str):
    from ..models.store import resolve_model

    return resolve_model(ref, kind=kind)


def load_model(kind: str, settings: ServiceSettings) -> LoadedModel:
    """Resolve ``settings``' model of ``kind`` in the model store and load its executor."""
    ref = settings.model_ref(kind)
    start = time.perf_counter()
    try:
        with _LOAD_LOCK:
            executor, resolved = load_executor(
                kind, ref, device=settings.device, dtype=settings.dtype, threads=settings.threads or None,
                quantize=settings.whisper_quantize if kind == WHISPER else settings.embedding_int8)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a FerrumError for the front-ends
        raise _load_error(exc, kind, ref) from exc
    return describe(kind, executor, str(resolved.source), time.perf_counter() - start)


def describe(kind: str, executor, source: str = "given", load_seconds: float = 0.0) -> LoadedModel:
    info = executor.info()
    return LoadedModel(kind, executor, str(getattr(executor, "model_id", "") or info.model_id), source,
                       info.device, info.dtype, load_seconds)


def dtype_text(info) -> str:
    """"int8 (float32 activations)" for a quantised model, whose ``info.dtype`` only names the activations;
    for a model whose int8 kernel this torch lacks, the float dtype it runs and why."""
    metadata = info.metadata or {}
    quantized = metadata.get("quantized")
    if quantized:
        return f"{quantized if isinstance(quantized, str) else 'int8'} ({info.dtype} activations)"
    if metadata.get("int8_fallback"):
        return f"{info.dtype}, not int8: {metadata['int8_fallback']}"
    return info.dtype


def _load_error(exc: Exception, kind: str, ref: str) -> FerrumError:
    what = "Whisper" if kind == WHISPER else "embedding"
    if isinstance(exc, FerrumError):
        return exc
    if isinstance(exc, ImportError):
        return ModelError(f"The {what} executor is not available: {exc}",
                          "reinstall Ferrum Desktop with all its dependencies")
    return wrap_unexpected(exc, f"loading the {what} model '{ref}'")


def shutdown_executor(executor) -> None:
    """Let an executor free its memory before it is replaced (runs in its own worker)."""
    shutdown = getattr(executor, "shutdown", None)
    if shutdown is None:
        return
    result = shutdown()
    if asyncio.iscoroutine(result):
        asyncio.run(result)
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass


def _settle_like(future: Future, done: Future) -> None:
    if future.done():
        return
    if done.exception() is not None:
        future.set_exception(done.exception())
    else:
        future.set_result(done.result())


class _Slot:
    def __init__(self):
        self.loaded: LoadedModel | None = None
        self.settings: ServiceSettings | None = None  # what ``loaded`` was loaded with
        self.ready: Future | None = None   # settles when the current (re)load ends
        self.state, self.message = "idle", "not loaded yet"
        self.reloads = 0


def _loaded_text(model: LoadedModel) -> str:
    return f"{model.model_id} on {model.device}, {dtype_text(model.executor.info())}, loaded"


class ModelSlots:
    """The loaded Whisper and embedding models; each loads lazily on its own worker."""

    def __init__(self, settings: ServiceSettings, workers: dict[str, Worker], events: EventHub,
                 given: dict[str, Any] | None = None):
        self.settings = settings
        self._workers = workers
        self._events = events
        self._slots = {kind: _Slot() for kind in MODEL_KINDS}
        self._lock = threading.Lock()
        for kind, executor in (given or {}).items():
            slot = self._slots[kind]
            slot.loaded, slot.settings = describe(kind, executor), settings
            slot.ready = Future()
            slot.ready.set_result(slot.loaded)
            slot.state, slot.message = "ready", f"{slot.loaded.model_id} (given)"

    def loaded(self, kind: str) -> LoadedModel | None:
        return self._slots[kind].loaded

    def state(self, kind: str) -> tuple[str, str]:
        slot = self._slots[kind]
        return slot.state, slot.message

    def reloads(self, kind: str) -> int:
        return self._slots[kind].reloads

    def load(self, kind: str) -> Future:
        """The model of ``kind``: a future of its ``LoadedModel`` (the load in progress, the finished one,
        or a new one). A failed load stays failed until ``reload``."""
        if kind not in self._slots:
            raise ModelError(f"There is no '{kind}' model", f"use one of {', '.join(MODEL_KINDS)}")
        slot = self._slots[kind]
        with self._lock:
            if slot.ready is None:
                slot.ready = Future()
                self._workers[kind].submit(self._ensure, kind, "loading")
            return slot.ready

    def require(self, kind: str) -> LoadedModel:
        """The loaded model, from a job on its worker (loads it there and then when needed)."""
        future = self.load(kind)
        if not future.done() and self._workers[kind].on_thread():
            self._ensure(kind, "loading")
        try:
            return future.result()
        except FerrumError as exc:
            raise ModelError(f"The {kind} model is not loaded",
                             f"it failed to load ({exc.message}); choose another model or device") from exc

    def reload(self, settings: ServiceSettings) -> list[str]:
        """Apply ``settings``, reloading only the models they change; returns those kinds (their
        ``load(kind)`` futures settle when the new model is in)."""
        kinds = self.settings.models_to_reload(settings)
        self.settings = settings
        for kind in kinds:
            slot = self._slots[kind]
            with self._lock:
                slot.reloads += 1
                earlier, slot.ready = slot.ready, Future()
                if earlier is not None and not earlier.done():  # whoever waits for it gets the new model
                    slot.ready.add_done_callback(lambda done, earlier=earlier: _settle_like(earlier, done))
            self._workers[kind].submit(self._ensure, kind, "reloading")
        return kinds

    def _ensure(self, kind: str, state: str) -> None:
        """Load ``kind`` for the current settings unless its latest request is settled (on its worker)."""
        slot = self._slots[kind]
        with self._lock:
            future = slot.ready
        if future is None or future.done():
            return
        settings = self.settings
        self._set_state(kind, state, f"Loading {settings.model_ref(kind)} (device: {settings.device})…")
        old = slot.loaded
        try:
            if old is not None:  # a model that cannot be found never replaces a working one
                check_model(kind, settings.model_ref(kind))
                slot.loaded = None
                shutdown_executor(old.executor)
            model = load_model(kind, settings)
        except Exception as exc:  # noqa: BLE001 - kept in the future, shown as the slot's state
            err = wrap_unexpected(exc, f"loading the {kind} model")
            if old is not None:
                self._keep_previous(kind, old, err, future)
                return
            self._set_state(kind, "error", err.message, err)
            future.set_exception(err)
            return
        slot.loaded, slot.settings = model, settings
        self._set_state(kind, "ready", f"{_loaded_text(model)} in {model.load_seconds:.1f} s")
        future.set_result(model)

    def _keep_previous(self, kind: str, old: LoadedModel, err: FerrumError, future: Future) -> None:
        """The new model failed: go back to the one that worked (loading it again when it was unloaded
        already) and to its settings, so work goes on and the refused choice is not kept."""
        slot = self._slots[kind]
        before = slot.settings or self.settings
        self.settings = self.settings.with_model_of(kind, before)
        model = old
        if slot.loaded is None:
            try:
                model = load_model(kind, before)
            except Exception as exc:  # noqa: BLE001
                again = wrap_unexpected(exc, f"loading the {kind} model again")
                self._set_state(kind, "error", again.message, again)
                future.set_exception(again)
                return
        slot.loaded = model
        self._set_state(kind, "ready", f"{_loaded_text(model)} (kept: {err.message})", err)
        future.set_result(model)

    def _set_state(self, kind: str, state: str, message: str, error: FerrumError | None = None) -> None:
        slot = self._slots[kind]
        slot.state, slot.message = state, message
        self._events.emit(ModelStateChanged(kind, state, message, error))


__all__ = ["EMBEDDING", "MODEL_KINDS", "WHISPER", "LoadedModel", "ModelSlots", "dtype_text", "load_model",
           "shutdown_executor"]
