"""Where the evaluation sets live: the one lookup shared by tests, benchmarks and scripts.

``FERRUM_EVAL_DIR`` names the folder holding ``speech-dev/``, ``text-dev/`` and ``diarization-dev/``;
unset, it is ``../shared/eval`` beside the checkout. ``FERRUM_EVAL_DIR=off`` behaves as if the data
were absent (the quick test tier runs that way, so it provably reads only ``tests/data``).
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "FERRUM_EVAL_DIR"
OFF = "off"
CHECKOUT = Path(__file__).resolve().parents[1]
DEFAULT = CHECKOUT.parent / "shared" / "eval"
MISSING_PREFIX = "evaluation data not available"


class EvalDataMissing(FileNotFoundError):
    """The evaluation set (or the part asked for) is not on this machine."""


def _switched_off() -> bool:
    return os.environ.get(ENV, "").strip().lower() == OFF


def eval_root() -> Path:
    """The configured evaluation folder (which may not exist; ``eval_path`` checks)."""
    configured = os.environ.get(ENV, "").strip()
    return Path(configured).expanduser() if configured and not _switched_off() else DEFAULT


def eval_path(*parts: str) -> Path:
    """``<eval folder>/<parts>``; raises ``EvalDataMissing`` saying what to do when it is not there."""
    if _switched_off():
        raise EvalDataMissing(f"{MISSING_PREFIX}: {ENV}={OFF}")
    path = eval_root().joinpath(*parts)
    if not path.exists():
        raise EvalDataMissing(
            f"{MISSING_PREFIX}: {path} does not exist; set {ENV} to the folder holding speech-dev/, "
            f"text-dev/ and diarization-dev/ (default: ../shared/eval beside the checkout)")
    return path
