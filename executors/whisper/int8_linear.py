"""``RowInt8Linear``: int8 weights per output channel, activations quantised per row, on fbgemm
(``fbgemm.py``, the kernel).

torch's dynamic int8 linear (``quantized::linear_dynamic``) quantises its whole input with one
scale: a 30 s window's 1,500 encoder rows share the range of the loudest one, and a batch of
decoder rows shares one range, so a row's result depends on which rows it is batched with.  This
layer keeps fbgemm's int8 GEMM but gives every row its own range, as CTranslate2 does:

    x = c + a * u          per row: c = (max + min) / 2, a = (max - min) / 2, so u is in [-1, 1]
    W x + b = a * (W u) + c * (W 1) + b

``u`` goes to the kernel together with one calibration row whose range (a little wider than
[-1, 1]) fixes the kernel's per-tensor range to the same constant for every call, so each row is
quantised over its own [min, max] whatever else is in the batch.  The result of a row therefore
does not depend on the batch (bit for bit), which is what makes batched decoding give the same text
as decoding one window at a time.  A layer made with ``range_columns`` (the vocabulary projection, called
with one row a window at every decoder step) gets the range from two extra input columns instead,
whose weights are zero: the same quantisation and the same results, bit for bit, without a second row
(fbgemm spent 10 % more on a call of two rows than of one).

Weights: symmetric int8, one scale per output row (``max |w_row| / 127``).  Activations use the
kernel's full 8-bit grid (252 steps over a row's range) where its int8 dot product accumulates in
32 bits (AVX-512 VNNI); where it sums pairs of products in 16 bits (AVX2 without VNNI) that
would saturate, so there the 7-bit grid (``reduce_range``, 125 steps) is used.  ``full_range_is_exact``
asks the kernel itself which case applies.

Each layer holds its int8 weight twice: ``weight_int8`` (state dict, fusing, the row sums) and the
kernel's packed copy, which ``packed_bytes`` counts (``core.stats.parameter_bytes`` adds it).
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from ..core.int8 import quantize_rows
from . import fbgemm

# The calibration row's range: on the kernel's 0..255 grid scale 1/126 with zero point 127, on its
# 0..127 grid scale 1/62.5 with zero point 63; either is a little wider than [-1, 1], so that
# rounding in (x - c) / a never moves the range.
_CALIBRATION = {False: (-127.0 / 126.0, 128.0 / 126.0), True: (-63.0 / 62.5, 64.0 / 62.5)}


@functools.cache
def reduce_range() -> bool:
    """Whether activations must use the kernel's 7-bit grid on this CPU: true unless the kernel's
    ``full_range_is_exact``."""
    return not RowInt8Linear.kernel.full_range_is_exact()


class RowInt8Linear(nn.Module):
    kernel = fbgemm  # the int8 GEMM of layers made from now on (see fbgemm.py for what a kernel offers)

    def __init__(self, weight_int8: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor | None,
                 kernel=None, range_columns: bool = False):
        super().__init__()
        self.kernel = kernel or RowInt8Linear.kernel
        # the kernel's range comes from two extra input columns (zero weights) instead of a calibration row:
        # a layer called with one row at a time (the vocabulary at each decoder step) then makes one-row calls
        self.range_columns = range_columns
        out_features, in_features = weight_int8.shape
        self.in_features, self.out_features = in_features, out_features
        self.register_buffer("weight_int8", weight_int8.contiguous(), persistent=True)
        self.register_buffer("scales", scales.float().contiguous(), persistent=True)
        zeros = torch.zeros(out_features, dtype=torch.float32)
        self.register_buffer("bias", (bias.detach().float() if bias is not None else zeros).contiguous())
        # W 1 per output row, from the int8 weights the kernel actually uses
        self.register_buffer("row_sums", weight_int8.sum(dim=1, dtype=torch.int32).float() * self.scales)
        self._reduce_range = reduce_range()
        calibration = torch.zeros(in_features)
        self._bounds = _CALIBRATION[self._reduce_range]  # the kernel's input spans exactly this range
        calibration[0], calibration[-1] = self._bounds
        self._calibration = calibration
        self._range_pair = torch.tensor(self._bounds)
        self._packed = None
        self._pack()

    def _pack(self) -> None:
        weight = self.weight_int8
        if self.range_columns:
            weight = torch.cat([weight, torch.zeros(self.out_features, 2, dtype=weight.dtype)], dim=1)
        self._packed = self.kernel.pack(weight, self.scales)

    @property
    def packed_bytes(self) -> int:
        """Bytes of the kernel's packed weight, which no tensor of this module counts (0 once shared)."""
        return self._packed.nbytes if self._packed is not None else 0

    @classmethod
    def quantize(cls, weight: torch.Tensor, bias: torch.Tensor | None, kernel=None,
                 range_columns: bool = False) -> RowInt8Linear:
        """Symmetric per-row int8 of a float weight [out, in] (on ``kernel``, the class's by default)."""
        return cls(*quantize_rows(weight), bias, kernel, range_columns)

    @classmethod
    def from_linear(cls, linear: nn.Linear, kernel=None, range_columns: bool = False) -> RowInt8Linear:
        return cls.quantize(linear.weight, linear.bias, kernel, range_columns)

    @classmethod
    def concat(cls, parts: list[RowInt8Linear]) -> RowInt8Linear:
        """One layer computing ``parts`` (same input) side by side, exactly as they do one by one."""
        return cls(torch.cat([p.weight_int8 for p in parts]), torch.cat([p.scales for p in parts]),
                   torch.cat([p.bias for p in parts]), parts[0].kernel)

    def share(self, whole: RowInt8Linear, first_row: int) -> None:
        """Become rows ``first_row``.. of ``whole`` (a ``concat`` of this layer and others): the tensors
        turn into views of its tensors and the packed copy is dropped (packed again if this layer is
        ever called on its own)."""
        rows = slice(first_row, first_row + self.out_features)
        for name in ("weight_int8", "scales", "bias", "row_sums"):
            setattr(self, name, getattr(whole, name)[rows])
        self._packed = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._packed is None:
            self._pack()
        shape = x.shape
        rows = x.reshape(-1, self.in_features)
        m = rows.shape[0]
        # two reductions, not torch.aminmax: on the CPU its per-row form is ~20x slower (5.3 ms against
        # 0.2 ms for the encoder's 1,500 x 1,536 rows at 1 thread), and the values are the same
        low, high = rows.amin(dim=1, keepdim=True), rows.amax(dim=1, keepdim=True)
        half = ((high - low) * 0.5).clamp_min_(1e-12)
        centre = (high + low) * 0.5
        inverse = half.reciprocal()
        n = self.in_features
        if self.range_columns:
            unit = torch.empty(m, n + 2, dtype=rows.dtype)
            unit[:, n:] = self._range_pair
        else:
            unit = torch.empty(m + 1, n, dtype=rows.dtype)
            unit[m] = self._calibration
        torch.addcmul(-centre * inverse, rows, inverse, out=unit[:m, :n])     # (x - c) / a, in [-1, 1]
        out = self.kernel.linear(unit, self._packed, self._reduce_range, self._bounds)[:m]
        # b + c (W 1), then + a (W u) in place: the same values as addmm's rank-one product, in half its time
        out = torch.addcmul(self.bias, centre, self.row_sums).addcmul_(half, out)
        return out.reshape(*shape[:-1], self.out_features)

    def token_rows(self, x: torch.Tensor) -> torch.Tensor:
        """``forward`` for inputs of one row per window ([B, 1, in], decoder steps): each window's row
        goes to the kernel alone, which quantises it over its own range, so its result is the same
        whatever the batch, at the cost of one kernel call instead of the dozen small operations
        ``forward`` needs to give every row of a larger input its own range."""
        if x.dim() != 3 or x.shape[1] != 1 or self.range_columns:
            return self.forward(x)
        if self._packed is None:
            self._pack()
        kernel, packed, reduce = self.kernel.linear, self._packed, self._reduce_range
        if x.shape[0] == 1:
            return kernel(x, packed, reduce).add_(self.bias)
        return torch.stack([kernel(row, packed, reduce) for row in x.unbind(0)]).add_(self.bias)

    def _load_from_state_dict(self, *args, **kwargs):
        super()._load_from_state_dict(*args, **kwargs)
        self._pack()

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 per-row weights and inputs"
