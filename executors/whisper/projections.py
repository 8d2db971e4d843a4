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


def direct(module: nn.Module) -> Projection:
    """``module(x)`` without the module machinery, for float and ``RowInt8Linear`` layers."""
    module = getattr(module, "qlinear", module)  # quantize.Int8Head wraps the vocabulary projection
    if isinstance(module, RowInt8Linear):
        return module.forward
    if type(module) is nn.Linear:
        weight, bias = module.weight, module.bias
        return lambda x: F.linear(x, weight, bias)
    return module


def fused(parts: list[nn.Module]) -> Projection:
    """One projection whose output is the outputs of ``parts`` (same input) side by side."""
    if all(isinstance(p, RowInt8Linear) for p in parts):
        return RowInt8Linear.concat(parts).forward
    if all(type(p) is nn.Linear for p in parts):
        return _fused_float(parts)
    calls = [direct(p) for p in parts]
    return lambda x: torch.cat([c(x) for c in calls], dim=-1)


def _bias_or_zeros(bias: torch.Tensor | None, rows: int, like: torch.Tensor) -> torch.Tensor:
    return bias.detach() if bias is not None else torch.zeros(rows, dtype=like.dtype, device=like.device)


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
