"""What the "auto" precision loads each model in, decided by the loaders' own rules, so that a settings
screen says what Automatic runs instead of restating (and drifting from) those rules."""

from __future__ import annotations

from .settings import EMBEDDING, MODEL_KINDS, WHISPER, ServiceSettings

_DEVICES = (("cpu", "CPU"), ("cuda", "GPU"))


def automatic_precision(device_kind: str, settings: ServiceSettings | None = None) -> dict[str, str]:
    """Model kind -> the precision of its weights when dtype is "auto" on ``device_kind`` ("cpu", "cuda",
    "mps"): "int8" or a float dtype. Imports torch (the quantisation rules): call it off the GUI thread."""
    from ..core.device import auto_dtype
    from ..whisper.quantize import resolve_mode

    settings = settings or ServiceSettings()
    dtype = auto_dtype(device_kind)
    int8 = {WHISPER: resolve_mode(settings.whisper_quantize, device_kind) == "int8",
            EMBEDDING: settings.embedding_int8 and device_kind == "cpu"}
    return {kind: "int8" if int8[kind] else dtype for kind in MODEL_KINDS}


def describe_automatic(settings: ServiceSettings | None = None) -> str:
    """"int8 speech model, float32 embeddings on CPU; float16 on GPU": ``automatic_precision`` in words."""
    parts = []
    for kind, name in _DEVICES:
        precision = automatic_precision(kind, settings)
        if precision[WHISPER] == precision[EMBEDDING]:
            parts.append(f"{precision[WHISPER]} on {name}")
        else:
            parts.append(f"{precision[WHISPER]} speech model, {precision[EMBEDDING]} embeddings on {name}")
    return "; ".join(parts)
