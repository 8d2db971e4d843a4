"""TorchScript for the decoder's per-token work.

A decoding step of a small Whisper is a few hundred operators on one-row tensors, each a few microseconds of
work; called from Python each also pays for its call (3-12 us, the int8 linear, whose packed weight torch
converts on every call, the most). A TorchScript function calls the same operators from C++, so the
results are the same bit for bit and only that overhead goes (``tests/test_whisper_scripted_step.py``).

``torch.jit.script`` is deprecated in favour of ``torch.compile``, which compiles for tens of seconds (with
a C++ compiler) in every fresh process: too slow for a desktop app's start. Where scripting a function
fails, the plain Python function runs instead (the same results, slower), and why is logged once.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

import torch

from ..core.kernels import report

NAME = "TorchScript (torch.jit.script)"


@functools.cache
def compiled(function: Callable) -> Callable:
    """``function`` compiled by TorchScript, or ``function`` itself where this torch cannot."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*torch\.jit\.script.*deprecated")
            return torch.jit.script(function)
    except Exception as exc:  # noqa: BLE001 - any failure: run it from Python
        report(NAME, f"{type(exc).__name__}: {exc}", f"{function.__qualname__} runs from Python (slower)")
        return function


def is_compiled(function: Callable) -> bool:
    return isinstance(compiled(function), torch.jit.ScriptFunction)
