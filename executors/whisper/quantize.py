"""int8 weights for CPU inference: dynamic quantisation of every ``nn.Linear``.

Weights are stored as int8 (per output channel), activations are quantised on the fly per call,
and the matmuls run in fbgemm/oneDNN int8 kernels. torch still ships this as
``torch.ao.quantization.quantize_dynamic`` (deprecated in favour of torchao, whose CPU path needs
``torch.compile`` to be fast); we use it while it exists and say clearly what to do when it is gone.
"""

from __future__ import annotations

import warnings

from ..errors import InvalidParameterError, UnsupportedError

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


def quantize_int8(model, *, skip: tuple[str, ...] = ("proj_out",)):
    """Quantise the model's linear layers in place (float32 CPU model) and return it.

    ``proj_out`` (the vocabulary projection) shares its weight with the token embedding, so it is
    left in float32: quantising it would untie the two and cost accuracy for little speed."""
    import torch
    from torch import nn

    if next(model.parameters()).dtype != torch.float32:
        model = model.float()
    targets = {name for name, mod in model.named_modules()
               if isinstance(mod, nn.Linear) and name.split(".")[-1] not in skip}
    if not targets:
        return model
    quantize_dynamic = _quantize_dynamic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return quantize_dynamic(model, targets, dtype=torch.qint8, inplace=True)


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
