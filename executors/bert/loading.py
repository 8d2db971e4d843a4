"""Load a BERT-family encoder folder: weights, fast tokenizer, pooling config, ModelInfo."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import torch

from ..core.allocator import held_by, release_free_pages
from ..core.device import DeviceChoice
from ..core.errors import FerrumError, InvalidParameterError, NotFoundError, TokenizerError
from ..core.stats import parameter_bytes
from ..core.types import ModelInfo, ModelType
from .pooling import PoolingConfig, read_pooling_config
from .quantize import int8_problem, quantize_linears

_GENERIC_NAMES = {"model", "models", "snapshot", "main"}


@dataclass
class LoadedParts:
    model: object
    tokenizer: object
    pooling: PoolingConfig
    info: ModelInfo


def _bundled_folder() -> Path | None:
    from ..models.store import DEFAULT_EMBEDDING, resolve_model

    try:
        return Path(resolve_model(DEFAULT_EMBEDDING, kind="embedding").path)
    except FerrumError:  # bundled package not installed
        return None


def resolve_folder(model_path: str | Path) -> tuple[Path, str]:
    """A folder as given, or a model-store reference ("all-MiniLM-L6-v2", a hub id) → (folder, model id)."""
    from ..models.store import DEFAULT_EMBEDDING, resolve_model

    path = Path(model_path).expanduser()
    if not path.is_dir():
        resolved = resolve_model(str(model_path), kind="embedding")
        return Path(resolved.path), resolved.model_id
    bundled = _bundled_folder()
    if bundled is not None and bundled.resolve() == path.resolve():  # keeps its catalogue name
        return path, DEFAULT_EMBEDDING
    # bundled packages keep the weights in <package>/model; the package name says more
    name = path.name if path.name.lower() not in _GENERIC_NAMES else path.parent.name
    return path, name


def _read_config(folder: Path, model_def: dict | None):
    from transformers import AutoConfig

    if model_def is not None:
        data = dict(model_def)
        model_type = data.pop("model_type", "bert")
        return AutoConfig.for_model(model_type, **data)
    if not (folder / "config.json").is_file():
        raise NotFoundError(f"{folder} has no config.json", "point at a Hugging Face or sentence-transformers model folder")
    return AutoConfig.from_pretrained(str(folder))


@contextlib.contextmanager
def _quiet_progress():
    """No "Loading weights" bar on stderr: loading a 90 MB encoder takes a second."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def load_components(model_path: str | Path, model_def: dict | None, device: DeviceChoice, *,
                    quantize: bool = False, model_id: str | None = None) -> LoadedParts:
    from transformers import AutoModel, AutoTokenizer

    if quantize and device.kind != "cpu":
        raise InvalidParameterError(f"int8 quantisation runs on the CPU only, not on {device.name}",
                                    "drop --int8/quantize, or choose device 'cpu'")
    if quantize and device.dtype_name != "float32":
        raise InvalidParameterError(f"int8 quantisation starts from float32 weights, not {device.dtype_name}",
                                    "leave dtype on auto (or float32) with quantize")
    unavailable = int8_problem() if quantize else None
    if unavailable is not None:
        quantize = False
    folder, store_id = resolve_folder(model_path)
    pooling = read_pooling_config(folder)
    weights = folder / pooling.transformer_dir
    config = _read_config(weights, model_def)
    with _quiet_progress():
        model = AutoModel.from_pretrained(str(weights), config=config, dtype=device.torch_dtype, use_safetensors=True,
                                          attn_implementation="sdpa")
    model.eval()
    num_parameters = sum(p.numel() for p in model.parameters())
    if quantize:
        model = quantize_linears(model)
    else:
        model.to(device.torch_device)
    if device.kind == "cpu":
        own_tensors(model)
        release_free_pages()  # what loading and quantising freed
    try:
        tokenizer, tokenizer_bytes = held_by(lambda: AutoTokenizer.from_pretrained(str(weights), use_fast=True))
    except Exception as exc:
        raise TokenizerError(f"Cannot load the tokenizer of {weights}: {exc}",
                             "the folder needs tokenizer.json (or vocab.txt) next to the weights") from exc
    if not getattr(tokenizer, "is_fast", False):
        raise TokenizerError(f"{weights} has only a slow tokenizer", "add a tokenizer.json to the folder")
    limits = [n for n in (getattr(config, "max_position_embeddings", None), pooling.max_seq_length
                          or getattr(tokenizer, "model_max_length", None)) if n]
    max_len = int(min(limits)) if limits else 512
    dim = int(config.hidden_size) * len(pooling.modes)
    info = ModelInfo(
        model_id=model_id or store_id,
        model_type=ModelType.EMBEDDING,
        num_parameters=num_parameters,
        hidden_size=int(config.hidden_size),
        num_layers=int(config.num_hidden_layers),
        num_heads=int(config.num_attention_heads),
        num_kv_heads=int(config.num_attention_heads),
        vocab_size=int(config.vocab_size),
        max_sequence_length=max_len,
        dtype="int8" if quantize else device.dtype_name,
        device=device.name,
        metadata={
            "path": str(folder),
            "architecture": (config.architectures or [type(model).__name__])[0],
            "embedding_dim": dim,
            "pooling": "+".join(pooling.modes),
            "normalize": pooling.normalize,
            "quantized": quantize,
            "int8_fallback": unavailable.message if unavailable is not None else None,
            "tokenizer_bytes": tokenizer_bytes,
            "parameter_bytes": parameter_bytes(model),
            "intermediate_size": int(getattr(config, "intermediate_size", 4 * config.hidden_size)),
            "max_position_embeddings": int(getattr(config, "max_position_embeddings", max_len)),
            "attn_implementation": getattr(config, "_attn_implementation", None) or "sdpa",
            "config_source": pooling.source,
        },
    )
    return LoadedParts(model, tokenizer, pooling, info)


@torch.no_grad()
def own_tensors(model) -> None:
    """Give every tensor of ``model`` its own memory, off the weight file's memory map.

    transformers leaves the weights on a private map of the safetensors file: their pages are read in
    (and counted resident) only when first used, and one tensor left on the map keeps the pages of all
    the others, so after int8 quantisation the float weights it replaced stayed resident (all-MiniLM:
    87 MiB where the int8 model counts 56)."""
    for param in model.parameters():  # each shared parameter once
        param.data = param.detach().clone()
    for module in model.modules():
        for name, buffer in module._buffers.items():
            if buffer is not None:
                module._buffers[name] = buffer.clone()
