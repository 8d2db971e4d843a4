"""Test-side access to the evaluation sets (``FERRUM_EVAL_DIR``; its default is ``bench.eval_data``'s):
the fixed 60-utterance slice of speech-dev, the normalised WER, and ``require_eval`` for any other part.

Only tests marked ``@pytest.mark.eval`` may read these sets (the quick tier deselects them); where the
data is absent they are skipped with the reason, and an unmarked test that reaches for it fails
(see ``tests/conftest.py``). The implementation lives in bench/common.py and bench/eval_data.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from bench.common import (SPEECH_DEV, Utterance, corpus_wer, dev_slice, in_order, long_audio,  # noqa: E402
                          load_speech_dev, normalize, read_audio)
from bench.eval_data import EvalDataMissing, eval_path  # noqa: E402

SLICE_SIZE = 60

__all__ = ["SPEECH_DEV", "Utterance", "corpus_wer", "normalize", "read_audio", "long_audio", "in_order", "dev_slice",
           "eval_slice", "load_speech_dev", "require_eval", "require_speech_dev"]


def require_eval(*parts: str) -> Path:
    """``<eval folder>/<parts>``, or skip the test saying why the evaluation data is not there."""
    try:
        return eval_path(*parts)
    except EvalDataMissing as missing:
        pytest.skip(str(missing))


def require_speech_dev() -> Path:
    return require_eval("speech-dev", "transcripts.tsv").parent


def eval_slice() -> list[Utterance]:
    require_speech_dev()
    return dev_slice(SLICE_SIZE)
