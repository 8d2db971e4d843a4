"""oneDNN's int8 matmul (``onednn::qlinear_prepack`` / ``qlinear_pointwise``) for the layers that take
many rows per call, on CPUs with Intel AMX tiles.

fbgemm (``fbgemm.py``) has no AMX path: on such a CPU its int8 GEMM over a 30 s window's 1,500 encoder
rows runs on AVX-512 while oneDNN's runs on the tiles, so a whole int8 layer over those rows takes
0.52-0.67x fbgemm's time at 1 thread (README, "Benchmarks" K3). Its one-row calls take 2.3-2.7x fbgemm's,
so decoder steps stay on fbgemm; ``quantize.many_rows_kernel`` decides which layers get which.

The activations are quantised exactly as fbgemm's dynamic linear does it (one affine uint8 grid over
[min(x, 0), max(x, 0)], chosen and rounded by torch's own per-tensor quantisation), the products are
summed in int32 and rescaled per output channel, so a layer's output is the same, bit for bit, on either
kernel (``tests/test_whisper_onednn.py``): switching kernels changes no text.

A kernel is the four names ``fbgemm.py`` lists; this one also has ``wanted()``, whether the CPU has the
units that make it the faster choice.
"""

from __future__ import annotations

import functools

import torch

from ..core.device import cpu_has_amx_tiles
from ..core.kernels import KernelUnavailable, require_equal
from ..core.kernels import problem as kernel_problem
from .packing import Packed, pack_counted, quantised_tensors

NAME = "oneDNN's int8 matmul (onednn::qlinear_prepack / qlinear_pointwise)"


def wanted() -> bool:
    """Whether this CPU has the AMX tiles that make this kernel the faster one for many rows."""
    return cpu_has_amx_tiles()


def _prepack(weight_int8: torch.Tensor, scales: torch.Tensor):
    return (torch.ops.onednn.qlinear_prepack(weight_int8, None), scales.float().contiguous(),
            torch.zeros(len(scales), dtype=torch.long))


def pack(weight_int8: torch.Tensor, scales: torch.Tensor) -> Packed:
    """oneDNN's packing of an int8 weight [out, in] with one float scale per output row (no bias)."""
    return pack_counted(("onednn", *weight_int8.shape), lambda: _prepack(weight_int8, scales), weight_int8.numel())


def linear(x: torch.Tensor, packed: Packed, reduce_range: bool,
           bounds: tuple[float, float] | None = None) -> torch.Tensor:
    """``W x`` as ``fbgemm.linear`` computes it: ``x`` [..., in] quantised over its whole range, or over
    ``bounds`` where the caller knows its min and max (which saves a pass over ``x``)."""
    weight, scales, zeros = packed.weight
    rows = x.reshape(-1, x.shape[-1]).contiguous()
    scale, zero = _grid(*bounds, reduce_range) if bounds else torch._choose_qparams_per_tensor(rows, reduce_range)
    with quantised_tensors():
        quantised = torch.quantize_per_tensor(rows, scale, zero, torch.quint8)
    # the quantised tensor's bytes as a plain uint8 tensor: int_repr() would copy them (0.7 ms a call on
    # the encoder's 1,500 x 1,536 rows)
    codes = torch.empty(0, dtype=torch.uint8).set_(quantised.untyped_storage(), 0, quantised.shape)
    out = torch.ops.onednn.qlinear_pointwise(codes, scale, zero, weight, scales, zeros, None, 1.0, 0,
                                             torch.float32, "none", [], "")
    return out.reshape(*x.shape[:-1], out.shape[-1])


@functools.cache
def _grid(low: float, high: float, reduce_range: bool) -> tuple[float, int]:
    """The scale and zero point torch (and fbgemm's dynamic linear) choose for values spanning [low, high]."""
    return torch._choose_qparams_per_tensor(torch.tensor([low, high]), reduce_range)


@functools.cache
def full_range_is_exact() -> bool:
    """As ``fbgemm.full_range_is_exact``: whether the largest 8-bit products (255 x 127) sum exactly."""
    return linear(torch.ones(1, 64), pack(torch.full((1, 64), 127, dtype=torch.int8), torch.full((1,), 1 / 127)),
                  False).item() == 64.0


def _probe() -> None:
    weight = torch.tensor([[127, -127, 64, 0] * 16], dtype=torch.int8)
    got = linear(torch.ones(3, 64), pack(weight, torch.full((1,), 1 / 127)), False)[:, 0].tolist()
    require_equal([round(v, 2) for v in got], [round(64 * 16 / 127, 2)] * 3, NAME)
    if not full_range_is_exact():
        raise ArithmeticError(f"{NAME} saturates products of 8-bit activations")


def problem() -> KernelUnavailable | None:
    """None where oneDNN's int8 matmul runs here and is exact; otherwise why not (logged once)."""
    return kernel_problem(NAME, _probe, "fbgemm's int8 linear takes its layers")
