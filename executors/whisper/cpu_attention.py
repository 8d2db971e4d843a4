"""Attention as the decoder computes it on the CPU, for the Python step and the TorchScript one alike.

No ``from __future__ import annotations``: TorchScript reads the annotations as written.
"""

from typing import Optional

import torch
import torch.nn.functional as F


def cpu_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Attention of [B, H, q, hd] queries (already scaled) over [B, H, k, hd] keys and values.

    SDPA's float32 kernel splits its work by batch size and thread count, so a row's result changes in
    the last bits with what it is batched with, and the next int8 layer can round that to a whole
    quantisation step: the text of a window would then depend on its batch. Two matmuls and a softmax
    compute each (row, head) on its own, as fast for one query. K/V of a lower precision (bfloat16,
    ``WhisperRuntime.fast_cross_attention``) go to SDPA's kernel in their dtype (its softmax and sums in
    float32), which gives a row the same bits in any batch (``tests/test_whisper_step_kernels.py``).
    Rows that share one encoder output (best-of samples: K/V expanded with stride 0) attend to its single
    copy as one query block: a broadcast K/V would be copied for every row at every step."""
    if mask is None and k.size(0) > 1 and k.stride(0) == 0:
        b, h, n, hd = q.shape
        block = q.transpose(0, 1).reshape(1, h, b * n, hd)
        return _attention(block, k[:1], v[:1], None).reshape(h, b, n, hd).transpose(0, 1)
    return _attention(q, k, v, mask)


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
    if k.dtype != q.dtype:
        return F.scaled_dot_product_attention(q.to(k.dtype), k, v, attn_mask=mask, scale=1.0).to(q.dtype)
    scores = torch.matmul(q, k.transpose(-1, -2))
    if mask is not None:
        scores.masked_fill_(~mask, float("-inf"))
    return torch.matmul(scores.softmax(dim=-1), v)
