"""The one place an executor is loaded from a model reference: the engine service (app, CLI, API) and
``ferrum batch``'s Ray actors all come through here, so a model resolves and loads the same way everywhere."""

from __future__ import annotations

WHISPER = "whisper"
EMBEDDING = "embedding"


def load_executor(kind: str, ref: str, **options):
    """Resolve ``ref`` (a model name, an alias or a folder) in the model store and load its executor of
    ``kind`` ("whisper" or "embedding"); ``options`` (device, dtype, threads, quantize) go to the executor's
    loader, whose defaults hold for the rest. Returns the executor and the ``ResolvedModel``."""
    from .models.store import resolve_model

    resolved = resolve_model(ref, kind=kind)
    if kind == WHISPER:
        from .whisper.executor import WhisperModelExecutor

        return WhisperModelExecutor.from_path(resolved.path, model_id=resolved.model_id, **options), resolved
    from .bert.executor import BertModelExecutor

    return BertModelExecutor.load(resolved.path, model_id=resolved.model_id, **options), resolved
