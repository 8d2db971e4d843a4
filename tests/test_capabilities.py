"""Capabilities claim only what a test or a bench of this repository has run (``executors.core.verified``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from executors.core import verified

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("run", verified.WHISPER + verified.EMBEDDING, ids=lambda r: f"{r.device_kind}-{r.dtype}")
def test_every_claimed_run_names_a_test_that_exists(run):
    path, _, name = run.by.partition("::")
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    assert name in {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}, run.by


def test_claims_keep_to_the_runs_on_the_executors_device():
    runs = (verified.Run("cpu", "float32", ("sdpa",), "t"), verified.Run("cpu", "int8", ("sdpa", "eager"), "t"),
            verified.Run("cuda", "float16", ("flash",), "t"))
    cpu = verified.claims(runs, "cpu", ["cpu", "cuda:0", "cuda:1", "mps"])
    assert (cpu.dtypes, cpu.attention) == (["float32", "int8"], ["sdpa", "eager"])
    assert cpu.devices == ["cpu", "cuda:0", "cuda:1"]   # no run on MPS: not claimed though torch sees it
    assert verified.claims(runs, "mps", ["cpu", "mps"]).dtypes == []


def test_whisper_claims_what_its_tests_ran(whisper_tiny):
    caps = whisper_tiny.capabilities()
    assert caps.supported_dtypes == ["float32"] and caps.supported_devices == ["cpu"]
    # the encoder calls SDPA; on the CPU decoder steps use two matmuls and a softmax
    assert caps.attention_mechanisms == ["sdpa", "eager"]
    assert whisper_tiny.info().metadata["attention"] == {"encoder": "sdpa", "decoder": "eager"}


def test_embedding_claims_what_its_tests_ran(minilm):
    caps = minilm.capabilities()
    assert caps.supported_dtypes == ["float32", "int8"] and caps.supported_devices == ["cpu"]
    assert caps.attention_mechanisms == ["sdpa"] == [minilm.info().metadata["attn_implementation"]]
