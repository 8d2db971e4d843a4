"""int8 weights for CPU inference: dynamic quantisation of every ``nn.Linear``.

Weights are stored as int8 (per output channel), activations are quantised on the fly per call,
and the matmuls run in fbgemm/oneDNN int8 kernels. torch still ships this as
``torch.ao.quantization.quantize_dynamic`` (deprecated in favour of torchao, whose CPU path needs
``torch.compile`` to be fast); we use it while it exists and say clearly what to do when it is gone.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from ..core.errors import InvalidParameterError, UnsupportedError

MODES = ("none", "int8", "auto")


def normalise_mode(mode: str | bool | None) -> str:
    if mode is None or mode is False:
        return "none"
    if mode is True:
        return "int8"
    mode = str(mode).lower()
    if mode in ("float32", "fp32", "off"):
        return "none"
    if mode not in MODES:
        raise InvalidParameterError(f"Unknown quantize mode '{mode}'", "use none, int8 or auto")
    return mode


def resolve_mode(mode: str | bool | None, device_kind: str) -> str:
    """``auto`` picks int8 on the CPU (measured faster at equal WER, see bench/transcribe.py) and
    nothing on GPUs, which run float16 instead."""
    mode = normalise_mode(mode)
    if mode == "auto":
        return "int8" if device_kind == "cpu" else "none"
    if mode == "int8" and device_kind != "cpu":
        raise UnsupportedError(f"int8 dynamic quantisation runs only on the CPU, not on {device_kind}",
                               "use quantize=None with float16 on a GPU, or device='cpu'")
    return mode


def _quantize_dynamic():
    try:
        from torch.ao.quantization import quantize_dynamic
    except ImportError as exc:  # removed from a future torch
        raise UnsupportedError("this torch build no longer offers dynamic int8 quantisation",
                               "run with quantize=None (float32), or pin torch<=2.13") from exc
    return quantize_dynamic


def quantize_int8(model, *, skip: tuple[str, ...] = ()):
    """Quantise the model's linear layers in place (float32 CPU model) and return it.

    ``proj_out`` (the vocabulary projection, the largest matmul of every decoder step) is included:
    it gets its own int8 copy of the weight it shares with the token embedding, which stays float32
    for the embedding lookup. That is what CTranslate2's int8 does too."""
    if next(model.parameters()).dtype != torch.float32:
        model = model.float()
    targets = {name for name, mod in model.named_modules()
               if isinstance(mod, nn.Linear) and name.split(".")[-1] not in skip}
    if not targets:
        return model
    tied = getattr(getattr(model, "proj_out", None), "weight", None)
    quantize_dynamic = _quantize_dynamic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = quantize_dynamic(model, targets, dtype=torch.qint8, inplace=True)
    if "proj_out" in targets and isinstance(tied, torch.Tensor):
        model.proj_out = Int8Head(model.proj_out, tied)
    return model


class Int8Head(nn.Module):
    """The int8 vocabulary projection, still exposing the float ``weight`` it was made from (callers
    read shape, dtype and device from it; the token embedding keeps using it)."""

    def __init__(self, qlinear: nn.Module, weight: torch.Tensor):
        super().__init__()
        self.qlinear = qlinear
        self.weight = weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.qlinear(x)


def quantize_model(model, mode: str | bool | None, device):
    """Apply ``mode`` ('none' | 'int8' | 'auto') for ``device`` (a DeviceChoice or a kind such as
    'cpu'); returns (model, applied mode)."""
    applied = resolve_mode(mode, getattr(device, "kind", device))
    if applied == "int8":
        model = quantize_int8(model)
    return model, applied


def is_quantized(model) -> bool:
    return any(type(m).__name__ == "DynamicQuantizedLinear" or "quantized" in type(m).__module__
               for m in model.modules())
