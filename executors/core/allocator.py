"""The C heap, as glibc's allocator sees it: bytes in use, and giving freed pages back to the system.

Memory outside tensors (a kernel's packed weights, a tokenizer's tables) is invisible to torch; the
allocator's own count of bytes in use is how such memory is measured. Elsewhere than glibc both
functions do nothing (``in_use`` answers None), and callers count what they can see.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


@functools.cache
def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):  # musl, or glibc older than 2.33
        return None
    return libc


def in_use() -> int | None:
    """Bytes the C heap has handed out and not taken back (every thread's arena, and large blocks
    mapped on their own); None where that cannot be read."""
    libc = _libc()
    if libc is None:
        return None
    info = libc.mallinfo2()
    return int(info.uordblks + info.hblkhd)


def held_by(build: Callable[[], T]) -> tuple[T, int]:
    """What ``build()`` returns and the bytes the C heap holds once it is done (its temporaries freed),
    0 where the heap cannot be read. Other threads allocating meanwhile blur the figure."""
    before = in_use()
    built = build()
    after = in_use()
    return built, max(0, after - before) if before is not None and after is not None else 0


def release_free_pages() -> None:
    """Give the heap's free pages back to the system. After a load replaces float weights by int8
    ones, glibc otherwise keeps the freed blocks (Whisper tiny: about 50 MiB) resident."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
