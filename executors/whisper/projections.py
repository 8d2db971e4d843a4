"""Direct-call linear projections for the decoder step.

A decoder step of a small Whisper is a few dozen one-row matmuls, so the overhead around each
kernel counts: the step calls the kernels directly (no ``Module.__call__``, no dtype round trip)
and computes self-attention's q, k and v in one matmul, which on the CPU is also one thread-pool
round trip instead of three.  Results are bit-identical to calling the modules one by one.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from .int8_linear import RowInt8Linear

Projection = Callable[[torch.Tensor], torch.Tensor]


def _int8_packed(module):
    """The fbgemm/oneDNN packed weight of a dynamic int8 linear, else None."""
    params = getattr(getattr(module, "_packed_params", None), "_packed_params", None)
    return params if params is not None and module._packed_params.dtype == torch.qint8 else None


def direct(module: nn.Module) -> Projection:
    """``module(x)`` without the module machinery, for float and dynamic int8 linears."""
    module = getattr(module, "qlinear", module)  # quantize.Int8Head wraps the vocabulary projection
    if isinstance(module, RowInt8Linear):
        return module.forward
    packed = _int8_packed(module)
    if packed is not None:
        linear_dynamic = torch.ops.quantized.linear_dynamic.default
        return lambda x: linear_dynamic(x, packed, True)  # reduce_range=True, as the module passes it
    if type(module) is nn.Linear:
        weight, bias = module.weight, module.bias
        return lambda x: F.linear(x, weight, bias)
    return module


def fused(parts: list[nn.Module]) -> Projection:
    """One projection whose output is the outputs of ``parts`` (same input) side by side."""
    if all(isinstance(p, RowInt8Linear) for p in parts):
        return RowInt8Linear.concat(parts).forward
    if all(_int8_packed(p) is not None for p in parts):
        return _fused_int8(parts)
    if all(type(p) is nn.Linear for p in parts):
        return _fused_float(parts)
    calls = [direct(p) for p in parts]
    return lambda x: torch.cat([c(x) for c in calls], dim=-1)


def _bias_or_zeros(bias: torch.Tensor | None, rows: int, like: torch.Tensor) -> torch.Tensor:
    return bias.detach() if bias is not None else torch.zeros(rows, dtype=like.dtype, device=like.device)


def _row_scales(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row scales and zero points of a per-channel or per-tensor quantised weight."""
    rows = weight.shape[0]
    if weight.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
        return weight.q_per_channel_scales().double(), weight.q_per_channel_zero_points().long()
    return (torch.full((rows,), weight.q_scale(), dtype=torch.double),
            torch.full((rows,), weight.q_zero_point(), dtype=torch.long))


def _fused_int8(parts: list[nn.Module]) -> Projection:
    # Each part's rows keep their own scales (per-channel already, or the part's per-tensor scale
    # repeated), so the fused kernel computes exactly what the separate ones did.  The packed copy
    # costs 1 byte per weight.
    weights = [p.weight() for p in parts]
    ints = torch.cat([w.int_repr() for w in weights])
    scales, zeros = (torch.cat(t) for t in zip(*(_row_scales(w) for w in weights)))
    bias = torch.cat([_bias_or_zeros(p.bias(), w.shape[0], torch.empty(0)) for p, w in zip(parts, weights)])
    packed = torch.ops.quantized.linear_prepack(torch._make_per_channel_quantized_tensor(ints, scales, zeros, 0),
                                                bias)
    linear_dynamic = torch.ops.quantized.linear_dynamic.default
    return lambda x: linear_dynamic(x, packed, True)


@torch.no_grad()
def _fused_float(parts: list[nn.Linear]) -> Projection:
    # The parts' weights become views of the fused one, so no weight is held twice.
    weight = torch.cat([p.weight.detach() for p in parts])
    bias = torch.cat([_bias_or_zeros(p.bias, p.out_features, weight) for p in parts])
    at = 0
    for p in parts:
        rows = slice(at, at + p.out_features)
        p.weight.data = weight[rows]
        if p.bias is not None:
            p.bias.data = bias[rows]
        at += p.out_features
    return lambda x: F.linear(x, weight, bias)
