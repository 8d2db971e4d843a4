"""The embedding model as an ONNX Runtime session, for a process that must not wait for torch.

``ferrum search`` embeds one short query; importing torch and transformers alone takes longer than
the whole search may. ``onnx_export.export_onnx`` writes, once per model content, a float32 ONNX copy
of the encoder with its pooling and normalisation (``model.onnx``), the tokenizer exactly as
``BertModelExecutor`` configures it (``tokenizer.json``) and the length limit (``embedder.json``) to
``cache_dir()/models/onnx/<model>-<key>/``, the key being the content hash of the model folder's
files. ``OnnxEmbedder`` loads that folder with onnxruntime and ``tokenizers`` alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.device import default_threads
from ..core.errors import ModelError, NotFoundError, RequestValidationError, wrap_unexpected
from ..models import cache as model_cache
from .pooling import PoolingConfig, read_pooling_config

RECIPE = "bert-onnx-1"  # bump when the exported files change, so old copies are made again
_WEIGHT_SUFFIXES = {".json", ".safetensors", ".txt", ".model"}


class OnnxModelMissing(NotFoundError):
    """The model has no ONNX copy yet (``onnx_export.export_onnx`` makes it)."""


@dataclass(frozen=True)
class OnnxFiles:
    folder: Path    # the copy in the cache (there once exported)
    model_id: str   # the model's name, as the engine service names it
    source: Path    # the model folder it is made from

    @property
    def model(self) -> Path:
        return self.folder / "model.onnx"

    @property
    def tokenizer(self) -> Path:
        return self.folder / "tokenizer.json"

    @property
    def settings(self) -> Path:
        return self.folder / "embedder.json"

    def ready(self) -> bool:
        return self.model.is_file()  # the folder appears whole (built aside, then renamed)


def onnx_files(model_ref: str) -> OnnxFiles:
    """Where the ONNX copy of the embedding model ``model_ref`` is (or will be) kept."""
    from ..models.store import resolve_model

    resolved = resolve_model(model_ref, kind="embedding")
    source = Path(resolved.path)
    inputs = sorted(p for p in source.rglob("*") if p.suffix in _WEIGHT_SUFFIXES and p.is_file()
                    and not any(part.startswith(".") for part in p.relative_to(source).parts))
    key = model_cache.content_key(inputs, salt=RECIPE)
    return OnnxFiles(model_cache.models_root() / "onnx" / f"{folder_prefix(resolved.model_id)}{key[:16]}",
                     resolved.model_id, source)


def folder_prefix(model_id: str) -> str:
    """The start every ONNX copy of ``model_id`` shares (older copies are found and removed by it)."""
    return re.sub(r"[^\w.]+", "_", model_id) + "-"


class OnnxEmbedder:
    """``embed`` as ``BertModelExecutor`` gives it, on the CPU, from the ONNX copy (for queries: it
    runs the texts as one batch)."""

    def __init__(self, files: OnnxFiles, threads: int | None = None):
        if not files.ready():
            raise OnnxModelMissing(f"The embedding model {files.model_id} has no ONNX copy at {files.folder}",
                                   "make it with executors.bert.onnx_export.export_onnx (ferrum index does, and "
                                   "ferrum search after a search through torch)")
        import onnxruntime
        from tokenizers import Tokenizer

        settings = json.loads(files.settings.read_text(encoding="utf-8"))
        self.model_id = files.model_id
        self.max_seq_length = int(settings["max_seq_length"])
        self.embedding_dim = int(settings["embedding_dim"])
        self.pooling: PoolingConfig = read_pooling_config(files.source)
        self._tokenizer = Tokenizer.from_file(str(files.tokenizer))  # truncates at max_seq_length
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or default_threads()
        options.inter_op_num_threads = 1
        try:
            self._session = onnxruntime.InferenceSession(str(files.model), options,
                                                         providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise ModelError(f"Cannot load the ONNX copy of {files.model_id} ({files.model}): {exc}",
                             f"delete {files.folder}; the next ferrum index or search makes it again") from exc

    def embed(self, texts: list[str]) -> np.ndarray:
        """Float32 ``[len(texts), embedding_dim]``, L2-normalised when the model's config says so."""
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise RequestValidationError(f"Text {i} is a {type(text).__name__}, not a string",
                                             "pass a list of strings")
        if not texts:
            return np.zeros((0, self.embedding_dim), dtype=np.float32)
        encodings = self._tokenizer.encode_batch([self.pooling.prepare(t) for t in texts])
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, :len(encoding.ids)] = encoding.ids
            mask[row, :len(encoding.ids)] = 1
        try:
            return self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0].astype(np.float32)
        except Exception as exc:
            raise wrap_unexpected(exc, f"embedding {len(texts)} texts") from exc
