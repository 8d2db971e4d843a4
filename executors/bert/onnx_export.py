"""Export an embedding model to the ONNX copy ``onnx_model.OnnxEmbedder`` runs (needs torch, once per model).

The encoder is traced with eager attention: traced through SDPA, MiniLM's ONNX graph gave vectors at
cosine 0.93 to torch's. The graph ends in the model's own pooling and normalisation, so the session's
output is the sentence vector. Before the copy is put in place, it must agree with torch on padded
probe texts (cosine >= ``MIN_COSINE``); a model whose export differs is refused, not used.

torch's TorchScript exporter is used (it needs the ``onnx`` package only); the newer torch.export one
also needs onnxscript.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import ModelError, wrap_unexpected
from ..models import cache as model_cache
from .onnx_model import RECIPE, OnnxEmbedder, OnnxFiles, folder_prefix, onnx_files

MIN_COSINE = 0.9999
OPSET = 17
_PROBES = ["How do rockets reach orbit?", "memory",
           "Sourdough needs flour, water, salt and a night to rise before it is baked in a hot oven."]


@dataclass
class ExportReport:
    files: OnnxFiles
    seconds: float
    min_cosine: float  # of the ONNX copy's probe vectors to torch's


def export_onnx(model_ref: str, threads: int | None = None) -> ExportReport:
    """Make the ONNX copy of the embedding model ``model_ref`` unless it exists (then nothing is done and
    ``seconds`` is 0); older copies of the same model are removed."""
    files = onnx_files(model_ref)
    if files.ready():
        return ExportReport(files, 0.0, 1.0)
    start = time.perf_counter()
    agreement: list[float] = []
    try:
        model_cache.build_atomically(files.folder, lambda tmp: agreement.append(_build(files, tmp, threads)),
                                     {"source": str(files.source), "recipe": RECIPE})
    except Exception as exc:
        raise wrap_unexpected(exc, f"exporting the embedding model {files.model_id} to ONNX") from exc
    model_cache.prune_siblings(files.folder, folder_prefix(files.model_id))
    return ExportReport(files, time.perf_counter() - start, agreement[0] if agreement else 1.0)


def _build(files: OnnxFiles, tmp: Path, threads: int | None) -> float:
    import torch
    from tokenizers import Tokenizer

    from ..core.device import resolve_device
    from .batching import pad
    from .loading import load_components
    from .pooling import pool

    parts = load_components(files.source, None, resolve_device("cpu", "float32", threads), model_id=files.model_id)
    parts.model.set_attn_implementation("eager")

    class Pooled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = parts.model

        def forward(self, input_ids, attention_mask):
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            return pool(hidden, attention_mask, parts.pooling)

    tokenizer = Tokenizer.from_str(parts.tokenizer.backend_tokenizer.to_str())
    tokenizer.no_padding()
    tokenizer.enable_truncation(parts.info.max_sequence_length)
    tokenizer.save(str(tmp / "tokenizer.json"))
    (tmp / "embedder.json").write_text(json.dumps({
        "max_seq_length": parts.info.max_sequence_length, "embedding_dim": parts.info.metadata["embedding_dim"],
        "opset": OPSET}), encoding="utf-8")
    # a padded batch, so that the trace keeps the attention mask's path
    ids, mask = pad([e.ids for e in tokenizer.encode_batch([parts.pooling.prepare(p) for p in _PROBES])],
                    parts.tokenizer.pad_token_id or 0)
    model = Pooled().eval()
    with torch.inference_mode():
        expected = model(ids, mask).numpy()
    with warnings.catch_warnings():  # the tracer's notes on Python branches it fixes for this trace
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (ids, mask), str(tmp / "model.onnx"), input_names=["input_ids", "attention_mask"],
                          output_names=["embedding"], opset_version=OPSET, dynamo=False,
                          dynamic_axes={"input_ids": {0: "batch", 1: "tokens"},
                                        "attention_mask": {0: "batch", 1: "tokens"}, "embedding": {0: "batch"}})
    embedder = OnnxEmbedder(OnnxFiles(tmp, files.model_id, files.source), threads)
    got = np.concatenate([embedder.embed([probe]) for probe in _PROBES])  # each alone, unpadded, as a query runs
    cosines = np.sum(got * expected, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(expected, axis=1))
    if float(cosines.min()) < MIN_COSINE:
        raise ModelError(f"The ONNX export of {files.model_id} disagrees with torch (cosine {cosines.min():.4f})",
                         "searches go on through torch; please report the model")
    return float(cosines.min())
