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

Projection = Callable[[torch.Tensor], torch.Tensor]


def _int8_packed(module):
    """The fbgemm/oneDNN packed weight of a dynamic int8 linear, else None."""
    params = getattr(getattr(module, "_packed_params", None), "_packed_params", None)
    return params if params is not None and module._packed_params.dtype == torch.qint8 else None


def direct(module: nn.Module) -> Projection:
    """``module(x)`` without the module machinery, for float and dynamic int8 linears."""
    module = getattr(module, "qlinear", module)  # quantize.Int8Head wraps the vocabulary projection
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
    if all(_int8_packed(p) is not None for p in parts):
        return _fused_int8(parts)
    if all(type(p) is nn.Linear for p in parts):
        return _fused_float(parts)
    calls = [direct(p) for p in parts]
    return lambda x: torch.cat([c(x) for c in calls], dim=-1)


def _bias_or_zeros(bias: torch.Tensor | None, rows: int, like: torch.Tensor) -> torch.Tensor:
    return bias.detach() if bias is not None else torch.zeros(rows, dtype=like.dtype, device=like.device)


def _fused_int8(parts: list[nn.Module]) -> Projection:
    # Each part keeps its own per-tensor scale as the per-channel scales of its rows, so the fused
    # kernel computes exactly what the separate ones did.  The packed copy costs 1 byte per weight.
    weights = [p.weight() for p in parts]
    ints = torch.cat([w.int_repr() for w in weights])
    scales = torch.cat([torch.full((w.shape[0],), w.q_scale(), dtype=torch.double) for w in weights])
    zeros = torch.cat([torch.full((w.shape[0],), w.q_zero_point(), dtype=torch.long) for w in weights])
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
