"""fbgemm's dynamic int8 linear, the kernel under ``RowInt8Linear``, and the one file that calls
torch's deprecated quantised tensors (``torch._make_per_channel_quantized_tensor``) and their
operators (``quantized::linear_prepack``, ``quantized::linear_dynamic``).

Nothing supported measured as fast at Whisper's shapes (``bench/int8_kernels.py``, README "Whisper
int8 on the CPU"), so the default keeps them while torch has them; ``problem()`` finds out once per
process whether it still does, and the model loads its float weights where it does not.

A kernel is this module's four names (``onednn.py`` is another; a benchmark may give ``RowInt8Linear``
more objects with them): ``pack``, ``linear``, ``full_range_is_exact`` and ``problem``.
"""

from __future__ import annotations

import functools

import torch

from ..core.kernels import KernelUnavailable, require_equal
from ..core.kernels import problem as kernel_problem
from .packing import Packed, pack_counted, quantised_tensors

NAME = "fbgemm's int8 linear (quantized::linear_prepack / linear_dynamic)"


def _prepack(weight_int8: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor | None = None):
    with quantised_tensors():
        weight = torch._make_per_channel_quantized_tensor(
            weight_int8, scales.double(), torch.zeros(weight_int8.shape[0], dtype=torch.long), 0)
    return torch.ops.quantized.linear_prepack(weight, bias)


def pack(weight_int8: torch.Tensor, scales: torch.Tensor) -> Packed:
    """fbgemm's packing of an int8 weight [out, in] with one float scale per output row (no bias); its
    blocks pad ``in`` to 512 (1.37 bytes a weight at Whisper's 384 inputs)."""
    return pack_counted(("fbgemm", *weight_int8.shape), lambda: _prepack(weight_int8, scales), weight_int8.numel())


def linear(x: torch.Tensor, packed: Packed, reduce_range: bool,
           bounds: tuple[float, float] | None = None) -> torch.Tensor:
    """``W x`` with ``x`` quantised over its whole range (one scale for the tensor, 255 steps, or 127
    with ``reduce_range``), products summed in int32. ``bounds`` (the range, where the caller knows it)
    is not needed: the kernel finds the range in the same pass that quantises ``x``."""
    return torch.ops.quantized.linear_dynamic(x, packed.weight, reduce_range)


@functools.cache
def full_range_is_exact() -> bool:
    """Whether the kernel gives the exact result for the largest 8-bit products (activation 255 times
    weight 127): kernels that add pairs of such products in 16 bits (AVX2 without VNNI) saturate."""
    return linear(torch.ones(1, 64), pack(torch.full((1, 64), 127, dtype=torch.int8), torch.full((1,), 1 / 127)),
                  False).item() == 64.0


def _probe() -> None:
    weight = torch.tensor([[127, -127, 64, 0] * 16], dtype=torch.int8)
    got = linear(torch.ones(1, 64), pack(weight, torch.full((1,), 1 / 127)), True).item()
    require_equal(round(got, 2), round(64 * 16 / 127, 2), NAME)
    full_range_is_exact()


def problem() -> KernelUnavailable | None:
    """None where fbgemm's int8 linear runs here; otherwise why not (logged once)."""
    return kernel_problem(NAME, _probe, "loading the float32 weights instead")
