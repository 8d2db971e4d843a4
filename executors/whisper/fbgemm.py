"""fbgemm's dynamic int8 linear, the kernel under ``RowInt8Linear``, and the one file that calls
torch's deprecated quantised tensors (``torch._make_per_channel_quantized_tensor``) and their
operators (``quantized::linear_prepack``, ``quantized::linear_dynamic``).

Nothing supported measured as fast at Whisper's shapes (``bench/int8_kernels.py``, README "Whisper
int8 on the CPU"), so the default keeps them while torch has them; ``problem()`` finds out once per
process whether it still does, and the model loads its float weights where it does not.

A kernel is this module's four names (a benchmark may give ``RowInt8Linear`` another object with
them): ``pack``, ``linear``, ``full_range_is_exact`` and ``problem``.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from dataclasses import dataclass

import torch

from ..core import allocator
from ..core.kernels import KernelUnavailable, require_equal
from ..core.kernels import problem as kernel_problem

NAME = "fbgemm's int8 linear (quantized::linear_prepack / linear_dynamic)"


@dataclass(frozen=True)
class Packed:
    weight: object  # fbgemm's packed matrix, opaque to torch (no tensor counts it)
    nbytes: int     # what packing it added to the C heap; the int8 size where that cannot be read


@contextlib.contextmanager
def _quantized_tensors():
    """torch warns in every process, at its first quantised tensor, that such tensors are deprecated;
    a user of ``ferrum transcribe`` can do nothing about it (the README says why they are kept)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*deprecated")
        yield


_PACKED_SIZES: dict[tuple[int, int], int] = {}  # bytes fbgemm's packing of a weight of that shape holds


def _prepack(weight_int8: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor | None = None):
    with _quantized_tensors():
        weight = torch._make_per_channel_quantized_tensor(
            weight_int8, scales.double(), torch.zeros(weight_int8.shape[0], dtype=torch.long), 0)
    return torch.ops.quantized.linear_prepack(weight, bias)


def pack(weight_int8: torch.Tensor, scales: torch.Tensor) -> Packed:
    """fbgemm's packing of an int8 weight [out, in] with one float scale per output row (no bias).

    What the packing holds is read off the C heap as the first weight of each shape is packed (its
    blocks pad ``in`` to the CPU's block: 1.37 bytes a weight at Whisper's 384 inputs on AVX2), the int8
    size where the heap cannot be read.  Not by packing a probe: that doubled the load's packing time
    (the vocabulary's alone is a quarter of a second)."""
    shape = tuple(weight_int8.shape)
    if shape in _PACKED_SIZES:
        return Packed(_prepack(weight_int8, scales), _PACKED_SIZES[shape])
    packed, size = allocator.held_by(lambda: _prepack(weight_int8, scales))
    _PACKED_SIZES[shape] = size or weight_int8.numel()
    return Packed(packed, _PACKED_SIZES[shape])


def linear(x: torch.Tensor, packed: Packed, reduce_range: bool) -> torch.Tensor:
    """``W x`` with ``x`` quantised over its whole range (one scale for the tensor, 255 steps, or 127
    with ``reduce_range``), products summed in int32."""
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
