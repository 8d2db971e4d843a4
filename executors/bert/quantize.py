"""int8 CPU inference for the encoder's linear layers: per-channel weights, per-token activations.

torch's ``quantize_dynamic`` scales a whole activation matrix with one number, so a few
outlier tokens in a padded batch cost every other token its precision (MiniLM: mean cosine
0.92 to fp32). Scaling each token row on its own keeps the embeddings at ≥ 0.995 while the
matmul still runs on int8 VNNI/AVX-512 kernels through ``torch._int_mm``.
"""

from __future__ import annotations

import torch

from ..core.int8 import quantize_rows
from ..core.kernels import KernelUnavailable, problem, require_equal

KERNEL = "torch._int_mm (CPU int8 matrix product)"


class Int8Linear(torch.nn.Module):
    """Drop-in for ``nn.Linear`` at inference: y = (q(x) @ q(W)ᵀ) · s_x · s_w + b."""

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        q, scale = quantize_rows(linear.weight)
        self.register_buffer("weight_t", q.t().contiguous())  # [in, out], the layout _int_mm takes
        self.register_buffer("weight_scale", scale)
        bias = linear.bias.detach().float() if linear.bias is not None else torch.zeros(linear.out_features)
        self.register_buffer("bias", bias)
        self.in_features = linear.in_features
        self.out_features = linear.out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        rows = x.reshape(-1, shape[-1])
        if rows.dtype != torch.float32:
            rows = rows.float()
        scale = rows.abs().amax(dim=1, keepdim=True).clamp_(min=1e-8).div_(127.0)
        q = torch.round(rows / scale).to(torch.int8)
        acc = torch._int_mm(q, self.weight_t)
        out = torch.addcmul(self.bias, torch.mul(acc, scale), self.weight_scale)
        return out.reshape(*shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 per-token"


def _probe() -> None:
    ones = torch.ones((32, 32), dtype=torch.int8)
    require_equal(int(torch._int_mm(ones, ones * 127)[0, 0]), 32 * 127, KERNEL)


def int8_problem() -> KernelUnavailable | None:
    """None where ``torch._int_mm`` (a private operator) runs here; otherwise why not (logged once)."""
    return problem(KERNEL, _probe, "the embedding model keeps its float32 weights")


def quantize_linears(model: torch.nn.Module) -> torch.nn.Module:
    """Replace every ``nn.Linear`` of ``model`` in place with an ``Int8Linear``; returns ``model``."""
    for name, child in list(model.named_children()):
        if isinstance(child, torch.nn.Linear):
            setattr(model, name, Int8Linear(child))
        else:
            quantize_linears(child)
    return model

