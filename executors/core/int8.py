"""Symmetric int8 weights with one scale per output row, shared by the Whisper and BERT int8 layers."""

from __future__ import annotations

import torch

# Rows quantised per block: a block's float temporaries stay in the CPU's cache, where whole-weight ones
# (80 MB for Whisper's vocabulary) were allocated and faulted in afresh by every operation: 3x the time
ROWS_PER_BLOCK = 1024


def quantize_rows(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(int8 weight, float32 scales) of a float weight [out, in]: row r is ``round(w_r / s_r)`` with
    ``s_r = max |w_r| / 127``, so every row uses the full int8 range."""
    w = weight.detach().float()
    scales = torch.empty(w.shape[0], dtype=torch.float32, device=w.device)
    out = torch.empty(w.shape, dtype=torch.int8, device=w.device)
    for at in range(0, w.shape[0], ROWS_PER_BLOCK):
        rows = slice(at, at + ROWS_PER_BLOCK)
        block = w[rows]
        scale = block.abs().amax(dim=1).clamp_(min=1e-8).div_(127.0)
        scales[rows] = scale
        out[rows] = (block / scale[:, None]).round_().clamp_(-127, 127)
    return out, scales
