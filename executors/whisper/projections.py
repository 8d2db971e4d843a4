"""Direct-call linear projections for the decoder step.

A decoder step of a small Whisper is a few dozen one-row matmuls, so the overhead around each
kernel counts: the step calls the kernels directly (no ``Module.__call__``, no dtype round trip)
and computes self-attention's q, k and v in one matmul, which on the CPU is also one thread-pool
round trip instead of three.  Results are bit-identical to calling the modules one by one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .int8_linear import RowInt8Linear

Projection = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Fused:
    call: Projection
    layer: RowInt8Linear | None = None  # the int8 layer made for the call, which holds the parts' weights


def direct(module: nn.Module) -> Projection:
    """``module(x)`` without the module machinery, for float and ``RowInt8Linear`` layers."""
    module = getattr(module, "qlinear", module)  # quantize.Int8Head wraps the vocabulary projection
    if isinstance(module, RowInt8Linear):
        return module.forward
    if type(module) is nn.Linear:
        weight, bias = module.weight, module.bias
        return lambda x: F.linear(x, weight, bias)
    return module


def token_step(module: nn.Module) -> Projection:
    """``direct(module)`` for a decoder layer that a step feeds one token per window: an int8 layer
    then quantises each such row with the kernel's own dynamic range (``RowInt8Linear.token_rows``)."""
    return module.token_rows if isinstance(module, RowInt8Linear) else direct(module)


def fused(parts: list[nn.Module], *, token_rows: bool = False) -> Fused:
    """One projection whose output is the outputs of ``parts`` (same input) side by side
    (``token_rows``: as ``token_step`` makes it). The parts' weights become views of the fused ones,
    so no weight is held twice."""
    if all(isinstance(p, RowInt8Linear) for p in parts):
        layer = RowInt8Linear.concat(parts)
        first = 0
        for part in parts:
            part.share(layer, first)
            first += part.out_features
        return Fused(layer.token_rows if token_rows else layer.forward, layer)
    if all(type(p) is nn.Linear for p in parts):
        return Fused(_fused_float(parts))
    calls = [direct(p) for p in parts]
    return Fused(lambda x: torch.cat([c(x) for c in calls], dim=-1))


def _bias_or_zeros(bias: torch.Tensor | None, rows: int, like: torch.Tensor) -> torch.Tensor:
    return bias.detach() if bias is not None else torch.zeros(rows, dtype=like.dtype, device=like.device)


@torch.no_grad()
def _fused_float(parts: list[nn.Linear]) -> Projection:
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
