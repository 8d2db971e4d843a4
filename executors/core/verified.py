"""What each executor has run on in this repository's tests and benches: the only devices and dtypes
its ``capabilities()`` may claim.

A device that torch can see but no test or bench has run an executor on (CUDA and MPS, so far) is not
claimed, nor is a dtype that loads but never ran (Whisper in bfloat16 on the CPU). A run enters this
table together with the test or bench that makes it; ``tests/test_capabilities.py`` checks that
every test named here exists.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    device_kind: str  # "cpu", "cuda" or "mps"
    dtype: str        # activations ("int8" where the executor reports int8 as its dtype)
    attention: tuple[str, ...]  # the attention implementations that run there
    by: str           # "tests/<file>.py::<test>" or a bench command that runs it


WHISPER = (
    # CPU: the encoder calls SDPA; decoder steps use two matmuls and a softmax (forward._attend)
    Run("cpu", "float32", ("sdpa", "eager"),
        "tests/test_whisper_executor.py::test_dev_clips_are_transcribed_accurately"),
)
EMBEDDING = (
    Run("cpu", "float32", ("sdpa",), "tests/test_bert_parity.py::test_every_row_equals_sentence_transformers"),
    Run("cpu", "int8", ("sdpa",), "tests/test_bert_parity.py::test_int8_stays_close_to_fp32"),
)


@dataclass(frozen=True)
class Claims:
    dtypes: list[str]
    devices: list[str]
    attention: list[str]


def claims(runs: tuple[Run, ...], device_kind: str, available: list[str]) -> Claims:
    """What an executor on ``device_kind`` may claim: the dtypes and attention run there, and the
    ``available`` devices (``cpu``, ``cuda:0``…) of a kind it has run on."""
    here = [run for run in runs if run.device_kind == device_kind]
    kinds = {run.device_kind for run in runs}
    return Claims(dtypes=list(dict.fromkeys(run.dtype for run in here)),
                  devices=[name for name in available if name.split(":")[0] in kinds],
                  attention=list(dict.fromkeys(name for run in here for name in run.attention)))
