"""A model's reported memory is what loading it adds to the process: resident memory before and after a
load in a fresh subprocess against ``status().memory_usage.allocated_bytes`` (``bench/model_memory.py``)."""

from __future__ import annotations

import pytest

from bench.model_memory import CASES, measure


@pytest.mark.parametrize("case, quantized", [
    ("whisper-tiny.en, int8 (default)", "int8"),
    ("all-MiniLM-L6-v2, float32 (default)", False),
    ("all-MiniLM-L6-v2, int8", True),
    pytest.param("whisper-tiny.en, float32", None, marks=pytest.mark.slow),
])
def test_reported_memory_is_what_loading_adds(case, quantized):
    got = measure(*CASES[case])
    assert got["quantized"] == quantized
    assert got["tokenizer"] > 0 and got["reported"] == got["weights"] + got["tokenizer"]
    assert abs(got["reported"] - got["added"]) <= 0.15 * got["added"], got
