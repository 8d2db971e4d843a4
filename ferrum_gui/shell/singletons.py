"""Keep ``None``, ``True`` and ``False`` alive for the whole process on Python 3.10 and 3.11.

PySide6 6.12 (its stable-ABI wheel) hands back ``None`` from every void method and ``True`` from
``Signal.emit`` without a reference of their own, as Python 3.12 allows: there these singletons are
immortal. On 3.10 and 3.11 each such call takes one reference away for good. A session of a few
hours takes them all (the Monitor alone calls hundreds a second), and the interpreter stops with
"Fatal Python error: bool_dealloc" or "none_dealloc", mostly while it finalises on quit, when the
last honest references go. Giving the three objects the immortality that 3.12 gives them costs
nothing and ends that.
"""

from __future__ import annotations

import ctypes
import sys

# Far more references than any session takes (a million a second for 30,000 years), far below the
# 2**63 that a reference count can hold.
HEADROOM = 1 << 60


def make_singletons_immortal() -> bool:
    """Add ``HEADROOM`` references to ``None``, ``True`` and ``False`` once per process where they are
    mortal (CPython before 3.12); True when this call added them."""
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12) or hasattr(sys, "getobjects"):
        return False  # immortal already; or a Py_TRACE_REFS build, whose objects do not start with the count
    if sys.getrefcount(None) > HEADROOM:
        return False
    for singleton in (None, True, False):
        ctypes.c_ssize_t.from_address(id(singleton)).value += HEADROOM
    return True
