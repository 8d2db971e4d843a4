"""Sentence-transformers model folders: which pooling, which length limit, whether to normalise.

A sentence-transformers folder describes its pipeline in ``modules.json`` (Transformer →
Pooling → optional Normalize), the pooling modes in ``<pooling dir>/config.json`` and the
length limit in ``sentence_bert_config.json``. A plain Hugging Face folder has none of these;
it gets masked mean pooling and L2 normalisation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import InvalidFormatError, UnsupportedError
from ..core.model_json import read_model_json

# The order sentence-transformers concatenates enabled modes in.
_MODE_KEYS = (
    ("cls", "pooling_mode_cls_token"),
    ("max", "pooling_mode_max_tokens"),
    ("mean", "pooling_mode_mean_tokens"),
    ("mean_sqrt_len", "pooling_mode_mean_sqrt_len_tokens"),
)
_UNSUPPORTED_KEYS = ("pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken")


@dataclass(frozen=True)
class PoolingConfig:
    modes: tuple[str, ...] = ("mean",)
    normalize: bool = True
    max_seq_length: int | None = None  # None: the model's position limit
    do_lower_case: bool = False
    transformer_dir: str = ""  # sub-folder holding the transformer weights ("" = the folder itself)
    source: str = "default"    # "sentence-transformers" or "default"
    extra: dict = field(default_factory=dict, compare=False)

    def prepare(self, text: str) -> str:
        """A text as the model sees it: sentence-transformers strips each text (and lower-cases it when
        its config says so)."""
        text = text.strip()
        return text.lower() if self.do_lower_case else text


def _modes_from(config: dict, path: Path) -> tuple[str, ...]:
    for key in _UNSUPPORTED_KEYS:
        if config.get(key):
            raise UnsupportedError(f"{path} asks for {key}, which this executor does not implement",
                                   "use a model with cls, mean or max pooling")
    if "pooling_mode" in config and not any(k in config for _, k in _MODE_KEYS):
        mode = str(config["pooling_mode"]).lower()
        modes = ("mean_sqrt_len",) if mode == "mean_sqrt_len_tokens" else (mode,)
    else:
        modes = tuple(name for name, key in _MODE_KEYS if config.get(key))
    bad = [m for m in modes if m not in {name for name, _ in _MODE_KEYS}]
    if bad or not modes:
        raise UnsupportedError(f"{path} selects pooling {bad or 'none'}",
                               "use a model with cls, mean or max pooling")
    return modes


def read_pooling_config(model_dir: str | Path) -> PoolingConfig:
    """Read the sentence-transformers files of ``model_dir``; defaults for a plain HF folder."""
    model_dir = Path(model_dir)
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        return PoolingConfig(max_seq_length=_st_max_length(model_dir))
    modules = read_model_json(modules_file)
    if not isinstance(modules, list):
        raise InvalidFormatError(f"{modules_file} is not a list of modules", "re-download the model folder")
    transformer_dir, pooling_dir, normalize = "", None, False
    for entry in modules:
        kind = str(entry.get("type", "")).rsplit(".", 1)[-1]
        if kind == "Transformer":
            transformer_dir = entry.get("path", "") or ""
        elif kind == "Pooling":
            pooling_dir = entry.get("path", "")
        elif kind == "Normalize":
            normalize = True
        elif kind not in ("Dropout",):
            raise UnsupportedError(f"{modules_file} contains a {kind} module this executor does not run",
                                   "use a model made of Transformer, Pooling and Normalize modules")
    modes: tuple[str, ...] = ("mean",)
    if pooling_dir is not None:
        modes = _modes_from(read_model_json(model_dir / pooling_dir / "config.json"), model_dir / pooling_dir)
    st_config = _read_st_config(model_dir / transformer_dir)
    return PoolingConfig(
        modes=modes,
        normalize=normalize,
        max_seq_length=st_config.get("max_seq_length"),
        do_lower_case=bool(st_config.get("do_lower_case", False)),
        transformer_dir=transformer_dir,
        source="sentence-transformers",
    )


def _read_st_config(folder: Path) -> dict:
    path = folder / "sentence_bert_config.json"
    if not path.is_file():
        return {}
    data = read_model_json(path)
    return data if isinstance(data, dict) else {}


def _st_max_length(model_dir: Path) -> int | None:
    return _read_st_config(model_dir).get("max_seq_length")


def pool(hidden, attention_mask, config: PoolingConfig):
    """Pool token states ``[batch, seq, dim]`` into sentence vectors ``[batch, dim * modes]``."""
    import torch

    hidden = hidden.float()
    mask = attention_mask.to(hidden.dtype).unsqueeze(-1)
    parts = []
    for mode in config.modes:
        if mode == "cls":
            parts.append(hidden[:, 0])
        elif mode == "max":
            parts.append(hidden.masked_fill(mask == 0, -1e9).max(dim=1).values)
        else:
            summed = (hidden * mask).sum(dim=1)
            # clamp: an all-padding row (never produced by the tokenizer, but possible via
            # prefill) must give zeros, not NaN
            counts = mask.sum(dim=1).clamp(min=1e-9)
            parts.append(summed / (counts.sqrt() if mode == "mean_sqrt_len" else counts))
    out = parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)
    if config.normalize:
        out = torch.nn.functional.normalize(out, p=2, dim=-1)
    return out
