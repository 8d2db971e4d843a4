"""The kernel under the int8 vector scan: torch's private ``_weight_int8pack_mm`` (bfloat16 query,
int8 rows, one bfloat16 scale a row, scores rounded to bfloat16), or, where this torch lacks it or it
answers wrongly, the same product in float32, a block of rows at a time. The float32 scores are
slower to get but closer to the truth than the kernel's, so the scan's error bounds still hold.
"""

from __future__ import annotations

import torch

from ..core.kernels import KernelUnavailable, require_equal
from ..core.kernels import problem as kernel_problem

KERNEL = "torch._weight_int8pack_mm (the int8 vector scan)"
_BLOCK = 1 << 16  # rows converted to float32 at once: 24 MiB at 384 dimensions


def _probe() -> None:
    codes = torch.full((16, 16), 3, dtype=torch.int8)
    scores = torch._weight_int8pack_mm(torch.ones(1, 16, dtype=torch.bfloat16), codes,
                                       torch.full((16,), 0.5, dtype=torch.bfloat16))
    require_equal(float(scores[0, 15]), 24.0, KERNEL)


def problem() -> KernelUnavailable | None:
    """None where the kernel runs here; otherwise why not (logged once)."""
    return kernel_problem(KERNEL, _probe, "scanning in float32 instead")


def scores(query: torch.Tensor, codes: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """Scores of ``codes`` [n, width] times ``scales`` [n] against the bfloat16 ``query`` [1, width]."""
    if problem() is None:
        return torch._weight_int8pack_mm(query, codes, scales)[0]
    return float_scores(query, codes, scales)


def float_scores(query: torch.Tensor, codes: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """``scores`` without the kernel: float32 products, unrounded."""
    vector = query[0].float()
    out = torch.empty(len(codes))
    for first in range(0, len(codes), _BLOCK):
        block = codes[first:first + _BLOCK]
        torch.mv(block.float(), vector, out=out[first:first + len(block)])
    return out.mul_(scales.float())
