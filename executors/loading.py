"""The one place an executor is loaded from a model reference: the engine service (app, CLI, API) and
``ferrum batch``'s Ray actors all come through here, so a model resolves and loads the same way everywhere;
so does ``ferrum search``'s torch-free query embedder."""

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


def load_query_embedder(ref: str, threads: int | None = None):
    """The ONNX copy of embedding model ``ref`` (``executors.bert.onnx_model.OnnxEmbedder``: no torch, for a
    query whose search is quicker than loading torch); ``OnnxModelMissing`` until ``export_onnx`` made it."""
    from .bert.onnx_model import OnnxEmbedder, onnx_files

    return OnnxEmbedder(onnx_files(ref), threads)
