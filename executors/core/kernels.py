"""Optional CPU kernels: the private or deprecated torch operators the int8 paths run on.

Each kernel is tried once per process on a small input with a known answer. One that is missing,
raises or answers wrongly is not used: its caller takes the float path instead, and the reason is
logged once as a warning (the CLI has no log handler, so Python prints it on stderr; the app writes
it to its log file and shows it in the model's status).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from .errors import UnsupportedError

log = logging.getLogger(__name__)

_lock = threading.Lock()
_problems: dict[str, str | None] = {}
_reported: set[str] = set()


class KernelUnavailable(UnsupportedError):
    """An int8 kernel cannot run in this process; the caller loads or computes in float instead."""


def report(kernel: str, why: str, instead: str) -> KernelUnavailable:
    """The error saying ``kernel`` is not used (``why``) and what runs ``instead``; logged once per kernel."""
    message = f"{kernel} is unavailable in this torch ({why}); {instead}"
    with _lock:
        first = kernel not in _reported
        _reported.add(kernel)
    if first:
        log.warning("ferrum: %s", message)
    return KernelUnavailable(message, "nothing to do: results stay correct, only slower; a torch with this "
                                      "operator brings the int8 path back")


def problem(kernel: str, probe: Callable[[], None], instead: str) -> KernelUnavailable | None:
    """None when ``probe()`` (run once per process for ``kernel``) returned; otherwise the error
    ``report`` makes of what it raised."""
    with _lock:
        known = kernel in _problems
        why = _problems.get(kernel)
    if not known:
        try:
            probe()
            why = None
        except Exception as exc:  # noqa: BLE001 - any failure of the operator means: do not use it
            why = f"{type(exc).__name__}: {exc}"
        with _lock:
            _problems[kernel] = why
    return None if why is None else report(kernel, why, instead)


def require_equal(got: float, expected: float, what: str) -> None:
    """For probes: raise when a kernel's answer on a known input is wrong."""
    if got != expected:
        raise ArithmeticError(f"{what} gave {got} where {expected} is exact")
