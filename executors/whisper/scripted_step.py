"""A decoder layer's work for one token per window, run as a TorchScript function.

A step of a small Whisper is some forty operators a layer on one-row tensors, each a few microseconds of
work; called from Python each also pays for its call (3-12 us, most for the int8 linear, whose packed
weight torch converts on every call). In a TorchScript function the same operators are called from C++:
tiny.en's step went from 4.5 to 3.5 ms at 1 thread and the 609 s speech-wide file from 18.2 to 16.4 s,
with the same results bit for bit (``tests/test_whisper_scripted_step.py``).

``torch.jit.script`` is deprecated in favour of ``torch.compile``, which would compile for tens of seconds
(with a C++ compiler) in every fresh process. So the scripting is probed once per process (``problem``);
where it fails, the runtime keeps its Python step (the same results, slower). Only int8 decoders on
fbgemm's kernel (the CPU default) are scripted: their linears are the calls that cost the most.

No ``from __future__ import annotations`` here: TorchScript reads the annotations below as written.
"""

import functools
import warnings
from typing import List, Optional

import torch
import torch.nn.functional as F

from ..core.kernels import KernelUnavailable, require_equal
from ..core.kernels import problem as kernel_problem
from . import fbgemm
from .int8_linear import RowInt8Linear

NAME = "TorchScript (torch.jit.script) for the decoder step"


def _row_linear(x: torch.Tensor, packed: "torch.classes.quantized.LinearPackedParamsBase",
                bias: torch.Tensor, reduce_range: bool) -> torch.Tensor:
    """``RowInt8Linear.token_rows`` for [B, 1, in]: each window's row through the kernel alone."""
    if x.size(0) == 1:
        return torch.ops.quantized.linear_dynamic(x, packed, reduce_range).add_(bias)
    rows = [torch.ops.quantized.linear_dynamic(row, packed, reduce_range) for row in x.unbind(0)]
    return torch.stack(rows).add_(bias)


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``WhisperRuntime._attend`` on the CPU without a mask (one query a row)."""
    if k.dtype != q.dtype:
        return F.scaled_dot_product_attention(q.to(k.dtype), k, v, scale=1.0).to(q.dtype)
    if k.size(0) > 1 and k.stride(0) == 0:  # best-of rows over one window's K/V: one query block
        b, h, n, hd = q.shape
        block = q.transpose(0, 1).reshape(1, h, b * n, hd)
        scores = torch.matmul(block, k[:1].transpose(-1, -2))
        return torch.matmul(scores.softmax(dim=-1), v[:1]).reshape(h, b, n, hd).transpose(0, 1)
    scores = torch.matmul(q, k.transpose(-1, -2))
    return torch.matmul(scores.softmax(dim=-1), v)


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
    o = _attend(q, keys[:, :, :first + 1], values[:, :, :first + 1])
    x = x + _row_linear(o.transpose(1, 2).reshape(b, 1, d), packed[1], biases[1], reduce_range)
    h = F.layer_norm(x, [d], norms[2], norms[3], eps[1])
    q = (_row_linear(h, packed[2], biases[2], reduce_range) * cross_scaling).view(b, 1, heads, hd).transpose(1, 2)
    o = _attend(q, cross_k, cross_v)
    x = x + _row_linear(o.transpose(1, 2).reshape(b, 1, d), packed[3], biases[3], reduce_range)
    h = F.layer_norm(x, [d], norms[4], norms[5], eps[2])
    return x + _row_linear(F.gelu(_row_linear(h, packed[4], biases[4], reduce_range)), packed[5], biases[5],
                           reduce_range)


@functools.cache
def _compiled():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*torch\.jit\.script.*deprecated")
        return torch.jit.script(_layer)


class ScriptedLayer:
    """One decoder layer's weights as ``_layer`` takes them; call it as ``_layer`` minus the weights."""

    def __init__(self, layer, qkv: RowInt8Linear, self_scaling: float, cross_scaling: float, heads: int):
        linears = [qkv, layer.self_attn.out_proj, layer.encoder_attn.q_proj, layer.encoder_attn.out_proj,
                   layer.fc1, layer.fc2]
        norms = [layer.self_attn_layer_norm, layer.encoder_attn_layer_norm, layer.final_layer_norm]
        self._weights = ([t for norm in norms for t in (norm.weight, norm.bias)], [norm.eps for norm in norms],
                         [_packed(linear) for linear in linears], [linear.bias for linear in linears],
                         qkv._reduce_range, self_scaling, cross_scaling, heads)
        self._run = _compiled()

    def __call__(self, x: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, first: int,
                 cross_k: torch.Tensor, cross_v: torch.Tensor) -> torch.Tensor:
        return self._run(x, *self._weights, keys, values, first, cross_k, cross_v)


def scripted_layers(layers, calls, heads: int) -> Optional[List[ScriptedLayer]]:
    """The decoder's layers as ``ScriptedLayer``s, or None where the Python step must run them: a float
    model, a kernel other than fbgemm's, or scripting unavailable here (``problem``). ``calls``: the
    runtime's ``_LayerCalls``, whose fused q|k|v layer the step uses."""
    for layer, call in zip(layers, calls):
        linears = [call.qkv_layer, layer.self_attn.out_proj, layer.encoder_attn.q_proj,
                   layer.encoder_attn.out_proj, layer.fc1, layer.fc2]
        if not all(isinstance(m, RowInt8Linear) and m.kernel is fbgemm for m in linears):
            return None
    if problem() is not None:
        return None
    return [ScriptedLayer(layer, call.qkv_layer, call.self_scaling, call.cross_scaling, heads)
            for layer, call in zip(layers, calls)]


def _packed(linear: RowInt8Linear):
    if linear._packed is None:  # a part of a fused layer called on its own would pack itself again too
        linear._pack()
    return linear._packed.weight


def _probe() -> None:
    """The scripted layer on a random two-head layer gives what the same operators give from Python."""
    torch.manual_seed(0)
    d, heads = 8, 2
    int8 = [RowInt8Linear.quantize(torch.randn(n, d if i != 5 else 2 * d), torch.randn(n))
            for i, n in enumerate((3 * d, d, d, d, 2 * d, d))]
    norms = [torch.rand(d) + 0.5 if i % 2 == 0 else torch.randn(d) for i in range(6)]
    args = (norms, [1e-5] * 3, [m._packed.weight for m in int8], [m.bias for m in int8], int8[0]._reduce_range,
            0.5, 0.5, heads)
    x, cross = torch.randn(1, 1, d), [torch.randn(1, heads, 5, d // heads) for _ in range(2)]
    caches = [[torch.zeros(1, heads, 4, d // heads) for _ in range(2)] for _ in range(2)]
    with torch.inference_mode():
        got = _compiled()(x, *args, *caches[0], 1, *cross)
        want = _layer(x, *args, *caches[1], 1, *cross)
    require_equal(float((got - want).abs().max()), 0.0, NAME)


def problem() -> Optional[KernelUnavailable]:
    """None where the scripted step runs here and matches the Python one; otherwise why not (logged once)."""
    return kernel_problem(NAME, _probe, "the decoder step runs from Python (the same results, slower)")
