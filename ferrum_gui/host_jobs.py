"""What the host runs inside its worker threads: model loading and job bodies.

Everything here executes off the GUI thread, so it is the one place in ``ferrum_gui`` that imports
the heavy executor modules (torch, transformers), always lazily inside the functions.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from executors.core.errors import FerrumError, ModelError, wrap_unexpected

from .settings import HostSettings

WHISPER = "whisper"
EMBEDDING = "embedding"
MODEL_NAMES = (WHISPER, EMBEDDING)

_job_ids = itertools.count(1)
# transformers resolves its lazy attributes non-atomically: two workers importing model classes at
# once can fail with "cannot import name ...". Loads therefore take turns (they share the cores anyway).
_LOAD_LOCK = threading.Lock()


def new_job_id(kind: str) -> str:
    return f"{kind}-{next(_job_ids)}"


@dataclass
class JobInfo:
    """What a panel needs to show a job; carried by ``jobStarted``."""

    job_id: str
    kind: str                  # "transcribe" | "index"
    title: str                 # short text for lists (a file name, "3 files")
    source: str = ""           # the file (or files) the job works on
    path: Path | None = None   # the file of a transcription
    duration: float | None = None  # seconds of audio, once known
    created: float = field(default_factory=time.time)
    started: float | None = None
    record_id: Any = None      # history record of a transcription (set before jobStarted)


@dataclass
class LoadedModel:
    executor: Any
    model_id: str
    source: str
    device: str
    dtype: str
    load_seconds: float
    ref: str = ""              # what the settings named (bundled name or folder)


def load_whisper(settings: HostSettings) -> LoadedModel:
    """Resolve and load the Whisper executor (runs in the whisper worker)."""
    start = time.perf_counter()
    try:
        with _LOAD_LOCK:
            from executors.models.store import resolve_model
            from executors.whisper.executor import WhisperModelExecutor

            resolved = resolve_model(settings.whisper_model, kind="whisper")
            executor = WhisperModelExecutor.from_path(resolved.path, device=settings.device, dtype=settings.dtype,
                                                      threads=settings.threads or None,
                                                      model_id=resolved.model_id)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a FerrumError for the UI
        raise _load_error(exc, "Whisper", settings.whisper_model) from exc
    return _loaded(executor, resolved, start, settings.whisper_model)


def load_embedding(settings: HostSettings) -> LoadedModel:
    """Resolve and load the embedding executor (runs in the embedding worker)."""
    start = time.perf_counter()
    try:
        with _LOAD_LOCK:
            from executors.bert.executor import BertModelExecutor
            from executors.models.store import resolve_model

            resolved = resolve_model(settings.embedding_model, kind="embedding")
            executor = BertModelExecutor.load(resolved.path, device=settings.device, dtype=settings.dtype,
                                              threads=settings.threads or None, model_id=resolved.model_id)
    except Exception as exc:  # noqa: BLE001
        raise _load_error(exc, "embedding", settings.embedding_model) from exc
    return _loaded(executor, resolved, start, settings.embedding_model)


def _loaded(executor, resolved, start: float, ref: str) -> LoadedModel:
    info = executor.info()
    return LoadedModel(executor, getattr(executor, "model_id", resolved.model_id), str(resolved.source),
                       info.device, info.dtype, time.perf_counter() - start, ref)


def check_model(name: str, settings: HostSettings) -> None:
    """Fail (FerrumError) when the model ``settings`` names for executor ``name`` cannot be found or
    read, before the working model is unloaded for it."""
    ref = settings.whisper_model if name == WHISPER else settings.embedding_model
    try:
        with _LOAD_LOCK:
            from executors.models.store import resolve_model

            resolve_model(ref, kind="whisper" if name == WHISPER else "embedding")
    except Exception as exc:  # noqa: BLE001
        raise _load_error(exc, "Whisper" if name == WHISPER else "embedding", ref) from exc


def _load_error(exc: Exception, what: str, ref: str) -> FerrumError:
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


def probe_duration(path: Path) -> float:
    """Seconds of audio in ``path``; fails early with InvalidFormatError for a file we cannot read."""
    from executors.audio.decode import audio_duration

    return audio_duration(path)


def transcribe_file(executor, path: Path, options, on_segment: Callable, on_progress: Callable, cancel):
    """Transcribe ``path`` (the executor streams long files); returns (transcript, wall seconds)."""
    cancel.raise_if_cancelled("transcription")
    start = time.perf_counter()
    transcript = executor.transcribe(path, options, on_segment=on_segment, on_progress=on_progress,
                                     cancel=cancel)
    return transcript, time.perf_counter() - start


def cache_hit_rate(caches) -> float | None:
    """Hit rate over ``caches`` (CacheStats) together, or None when nothing was looked up."""
    hits = sum(c.hits for c in caches)
    total = hits + sum(c.misses for c in caches)
    return hits / total if total else None


def play_audio(audio_path: str, start: float, end: float | None) -> bool:
    """Play a slice of a file on the default output device (runs in the I/O worker); True once it plays."""
    from executors.audio.decode import SAMPLE_RATE, load_audio
    from executors.core.errors import DeviceError

    try:
        import sounddevice as sd
    except OSError as exc:  # PortAudio library missing
        raise DeviceError(f"Audio playback is unavailable: {exc}", "install PortAudio (libportaudio2)") from exc
    audio = load_audio(audio_path)
    first = max(0, int(start * SAMPLE_RATE))
    last = len(audio) if end is None else min(len(audio), int(end * SAMPLE_RATE))
    try:
        sd.default.device  # noqa: B018 - raises early when PortAudio cannot enumerate devices
        sd.play(audio[first:last], SAMPLE_RATE)
    except Exception as exc:  # noqa: BLE001 - PortAudioError and friends
        raise DeviceError(f"Could not play audio: {exc}",
                          "check that an audio output device is connected and not in use") from exc
    return True


def list_input_devices() -> list:
    """``executors.dictation.list_input_devices()`` (the module imports torch: call it in a worker)."""
    from executors.dictation import list_input_devices as list_devices

    return list_devices()


def stop_audio() -> None:
    try:
        import sounddevice as sd

        sd.stop()
    except Exception:  # noqa: BLE001 - nothing was playing, or no audio stack at all
        pass
