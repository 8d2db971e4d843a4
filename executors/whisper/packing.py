"""What an int8 kernel's packing of a weight holds, as the kernels (``fbgemm.py``, ``onednn.py``) report it.

The packed matrices are opaque to torch (no tensor counts them), so their size is read off the C heap
(``core.allocator``) while the first weight of each shape is packed, and reused for the others: packing a
probe of each shape first doubled the load's packing time (the vocabulary's alone is a quarter of a
second). Where the heap cannot be read the int8 size stands in.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from ..core import allocator


@dataclass(frozen=True)
class Packed:
    weight: object  # the kernel's packed matrix (and whatever else its ``linear`` needs)
    nbytes: int     # what packing it added to the C heap; the int8 size where that cannot be read


_SIZES: dict[tuple, int] = {}  # (kernel, out, in) -> bytes its packing of such a weight holds


def pack_counted(key: tuple, build: Callable[[], object], int8_bytes: int) -> Packed:
    """``build()``'s packing with its size, measured for the first ``key`` (kernel name and shape) only."""
    if key in _SIZES:
        return Packed(build(), _SIZES[key])
    weight, size = allocator.held_by(build)
    _SIZES[key] = size or int8_bytes
    return Packed(weight, _SIZES[key])


@contextlib.contextmanager
def quantised_tensors():
    """torch warns in every process, at its first quantised tensor, that such tensors are deprecated;
    a user of ``ferrum transcribe`` can do nothing about it (the README says why they are kept)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*deprecated")
        yield
