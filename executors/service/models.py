"""``ModelService``: how code outside the GUI reaches the loaded executors.

The API server (and anything else that serves requests) only needs three things: the loaded
executor of a kind, a way to run a call on that executor's one worker thread (so requests queue
behind GUI jobs instead of racing them), and a place to report metric samples. The GUI host
provides them over its own workers; ``LocalModelService`` provides them headless.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from ..core.errors import Cancelled, FerrumError, wrap_unexpected

WHISPER = "whisper"
EMBEDDING = "embedding"
MODEL_KINDS = (WHISPER, EMBEDDING)


class ModelService(Protocol):
    async def executor(self, kind: str) -> Any:
        """The loaded executor of ``kind`` ("whisper" | "embedding"), waiting for its load."""

    async def run(self, kind: str, fn: Callable, *args, **kwargs) -> Any:
        """``fn(*args, **kwargs)`` on the worker thread of ``kind``; calls run one at a time, in order."""

    def record(self, series: str, value: float) -> None:
        """A metric sample (e.g. for the monitor's plots); must be callable from the event loop."""


@dataclass(frozen=True)
class ServiceSettings:
    whisper_model: str = "whisper-tiny.en"
    embedding_model: str = "all-MiniLM-L6-v2"
    device: str = "auto"
    dtype: str = "auto"
    threads: int | None = None


# transformers resolves lazy attributes non-atomically; loads take turns.
_LOAD_LOCK = threading.Lock()


def _load(kind: str, settings: ServiceSettings):
    from ..models.store import resolve_model

    with _LOAD_LOCK:
        if kind == WHISPER:
            from ..whisper.executor import WhisperModelExecutor

            resolved = resolve_model(settings.whisper_model, kind="whisper")
            return WhisperModelExecutor.from_path(resolved.path, device=settings.device, dtype=settings.dtype,
                                                  threads=settings.threads, model_id=resolved.model_id)
        from ..bert.executor import BertModelExecutor

        resolved = resolve_model(settings.embedding_model, kind="embedding")
        return BertModelExecutor.load(resolved.path, device=settings.device, dtype=settings.dtype,
                                      threads=settings.threads, model_id=resolved.model_id)


class LocalModelService:
    """Headless ``ModelService``: one single-thread worker per executor, models loaded lazily.

    ``executors`` may hand in already loaded executors (tests share their session models this way).
    """

    def __init__(self, settings: ServiceSettings | None = None, *, executors: dict[str, Any] | None = None,
                 on_sample: Callable[[str, float], None] | None = None):
        self.settings = settings or ServiceSettings()
        self._pools = {k: ThreadPoolExecutor(1, thread_name_prefix=f"ferrum-api-{k}") for k in MODEL_KINDS}
        self._ready = dict(executors or {})
        self._loads: dict[str, asyncio.Future] = {}
        self._on_sample = on_sample
        self._closed = False

    async def executor(self, kind: str):
        if kind in self._ready:
            return self._ready[kind]
        if kind not in MODEL_KINDS:
            raise wrap_unexpected(KeyError(kind), f"looking up the '{kind}' executor")
        if kind not in self._loads:
            loop = asyncio.get_running_loop()
            self._loads[kind] = loop.run_in_executor(self._pools[kind], _load, kind, self.settings)
        executor = await asyncio.shield(self._loads[kind])
        self._ready[kind] = executor
        return executor

    async def run(self, kind: str, fn: Callable, *args, **kwargs):
        if self._closed:
            raise Cancelled("The model service is shutting down", "start the server again")
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pools[kind], functools.partial(fn, *args, **kwargs))
        except FerrumError:
            raise
        except Exception as exc:
            raise wrap_unexpected(exc, f"running a {kind} request") from exc

    def record(self, series: str, value: float) -> None:
        if self._on_sample is not None:
            self._on_sample(series, value)

    def close(self, wait: bool = True) -> None:
        self._closed = True
        for pool in self._pools.values():
            pool.shutdown(wait=wait, cancel_futures=True)
