"""Test-side access to the fixed 60-utterance slice of speech-dev and the normalised WER.

The implementation lives in bench/common.py (shared with the benchmarks); this module pins the
slice the accuracy tests use and skips cleanly when the shared eval data is absent.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from bench.common import (SPEECH_DEV, Utterance, corpus_wer, dev_slice, long_audio,  # noqa: E402
                          load_speech_dev, normalize, read_audio)

SLICE_SIZE = 60

__all__ = ["SPEECH_DEV", "Utterance", "corpus_wer", "normalize", "read_audio", "long_audio",
           "eval_slice", "load_speech_dev", "require_speech_dev"]


def require_speech_dev() -> None:
    if not (SPEECH_DEV / "transcripts.tsv").is_file():
        pytest.fail(f"shared eval data not found at {SPEECH_DEV} (expected ../shared/eval beside the checkout)")


def eval_slice() -> list[Utterance]:
    require_speech_dev()
    return dev_slice(SLICE_SIZE)
