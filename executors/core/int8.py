"""Symmetric int8 weights with one scale per output row, shared by the Whisper and BERT int8 layers."""

from __future__ import annotations

import torch


def quantize_rows(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(int8 weight, float32 scales) of a float weight [out, in]: row r is ``round(w_r / s_r)`` with
    ``s_r = max |w_r| / 127``, so every row uses the full int8 range."""
    w = weight.detach().float()
    scales = w.abs().amax(dim=1).clamp_(min=1e-8) / 127.0
    return torch.round(w / scales[:, None]).clamp_(-127, 127).to(torch.int8), scales
