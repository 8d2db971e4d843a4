"""A decoder layer's work for one token per window, as one function that TorchScript compiles (``torchscript``).

tiny.en's step went from 4.5 to 3.5 ms at 1 thread and the 609 s speech-wide file from 18.2 to 16.4 s, the
text byte for byte the same. Only int8 decoders on fbgemm's kernel (the CPU default) take this path: their
linears are the calls that cost the most from Python; float models and other kernels keep the Python step.

No ``from __future__ import annotations`` here: TorchScript reads the annotations below as written.
"""

from typing import List, Optional

import torch
import torch.nn.functional as F

from . import fbgemm
from .cpu_attention import cpu_attention
from .int8_linear import RowInt8Linear
from .torchscript import compiled, is_compiled


def _row_linear(x: torch.Tensor, packed: "torch.classes.quantized.LinearPackedParamsBase",
                bias: torch.Tensor, reduce_range: bool) -> torch.Tensor:
    """``RowInt8Linear.token_rows`` for [B, 1, in]: each window's row through the kernel alone."""
    if x.size(0) == 1:
        return torch.ops.quantized.linear_dynamic(x, packed, reduce_range).add_(bias)
    rows = [torch.ops.quantized.linear_dynamic(row, packed, reduce_range) for row in x.unbind(0)]
    return torch.stack(rows).add_(bias)


def _layer(x: torch.Tensor, norms: List[torch.Tensor], eps: List[float],
           packed: List["torch.classes.quantized.LinearPackedParamsBase"], biases: List[torch.Tensor],
           reduce_range: bool, self_scaling: float, cross_scaling: float, heads: int,
           keys: torch.Tensor, values: torch.Tensor, first: int,
           cross_k: torch.Tensor, cross_v: torch.Tensor) -> torch.Tensor:
    """One decoder layer for x [B, 1, d], every row at position ``first``; writes its K/V there.
    ``packed`` and ``biases``: self-attention's fused q|k|v, its output, cross-attention's q and output,
    fc1 and fc2; ``norms``: the three layer norms' weight and bias."""
    b = x.size(0)
    d = x.size(2)
    hd = d // heads
    qkv = _row_linear(F.layer_norm(x, [d], norms[0], norms[1], eps[0]), packed[0], biases[0], reduce_range)
    q = (qkv[:, :, :d] * self_scaling).view(b, 1, heads, hd).transpose(1, 2)
    keys[:, :, first:first + 1] = qkv[:, :, d:2 * d].view(b, 1, heads, hd).transpose(1, 2)
    values[:, :, first:first + 1] = qkv[:, :, 2 * d:].view(b, 1, heads, hd).transpose(1, 2)
    o = cpu_attention(q, keys[:, :, :first + 1], values[:, :, :first + 1])
    x = x + _row_linear(o.transpose(1, 2).reshape(b, 1, d), packed[1], biases[1], reduce_range)
    h = F.layer_norm(x, [d], norms[2], norms[3], eps[1])
    q = (_row_linear(h, packed[2], biases[2], reduce_range) * cross_scaling).view(b, 1, heads, hd).transpose(1, 2)
    o = cpu_attention(q, cross_k, cross_v)
    x = x + _row_linear(o.transpose(1, 2).reshape(b, 1, d), packed[3], biases[3], reduce_range)
    h = F.layer_norm(x, [d], norms[4], norms[5], eps[2])
    return x + _row_linear(F.gelu(_row_linear(h, packed[4], biases[4], reduce_range)), packed[5], biases[5],
                           reduce_range)


class ScriptedLayer:
    """One decoder layer's weights as ``_layer`` takes them; call it as ``_layer`` minus the weights."""

    def __init__(self, layer, qkv: RowInt8Linear, self_scaling: float, cross_scaling: float, heads: int):
        linears = _linears(layer, qkv)
        norms = [layer.self_attn_layer_norm, layer.encoder_attn_layer_norm, layer.final_layer_norm]
        # the kernel's packed weights as they are now: a layer packed again later (a state dict loaded into the
        # model) keeps the same values, and this layer's copy stays valid
        self._weights = ([t for norm in norms for t in (norm.weight, norm.bias)], [norm.eps for norm in norms],
                         [_packed(linear) for linear in linears], [linear.bias for linear in linears],
                         qkv._reduce_range, self_scaling, cross_scaling, heads)
        self._run = compiled(_layer)

    def __call__(self, x: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, first: int,
                 cross_k: torch.Tensor, cross_v: torch.Tensor) -> torch.Tensor:
        return self._run(x, *self._weights, keys, values, first, cross_k, cross_v)


def scripted_layers(layers, calls, heads: int) -> Optional[List[ScriptedLayer]]:
    """The decoder's layers as ``ScriptedLayer``s, or None where the Python step must run them: a float
    model or a kernel other than fbgemm's. ``calls``: the runtime's ``_LayerCalls``, whose fused q|k|v
    layer the step uses."""
    for layer, call in zip(layers, calls):
        if not all(isinstance(m, RowInt8Linear) and m.kernel is fbgemm and not m.range_columns
                   for m in _linears(layer, call.qkv_layer)):
            return None
    return [ScriptedLayer(layer, call.qkv_layer, call.self_scaling, call.cross_scaling, heads)
            for layer, call in zip(layers, calls)]


def runs_compiled() -> bool:
    """Whether this torch compiles the layer (else it runs from Python, the same results, slower)."""
    return is_compiled(_layer)


def _linears(layer, qkv) -> list:
    """A decoder layer's linears in the order ``_layer`` takes them (``qkv``: its fused self-attention q|k|v)."""
    return [qkv, layer.self_attn.out_proj, layer.encoder_attn.q_proj, layer.encoder_attn.out_proj,
            layer.fc1, layer.fc2]


def _packed(linear: RowInt8Linear):
    if linear._packed is None:  # a part of a fused layer called on its own would pack itself again too
        linear._pack()
    return linear._packed.weight
