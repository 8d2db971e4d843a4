"""``ferrum embed`` with the bundled MiniLM: .npy and JSON output, stdin, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from ferrum_cli.main import main

LINES = ["Space shuttle launch schedules", "", "Arguments about the existence of god"]
REPO = Path(__file__).resolve().parents[1]


def _write_input(tmp_path) -> Path:
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def test_embed_file_to_npy_matches_the_executor(tmp_path, minilm, capsys):
    out = tmp_path / "out" / "vectors.npy"
    assert main(["embed", "--input", str(_write_input(tmp_path)), "--output", str(out), "--device", "cpu"]) == 0
    vectors = np.load(out)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, minilm.embed(LINES, use_cache=False), atol=1e-5)
    captured = capsys.readouterr()
    assert captured.out == ""  # with --output and no --json, stdout stays clean
    assert "Embedded 3 texts" in captured.err and "all-MiniLM-L6-v2" in captured.err


def test_embed_json_int8(tmp_path, minilm, capsys):
    assert main(["embed", "-i", str(_write_input(tmp_path)), "--json", "--int8"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["model"] == "all-MiniLM-L6-v2" and doc["dim"] == 384
    got = np.array(doc["embeddings"], dtype=np.float32)
    assert got.shape == (3, 384)
    cos = (got * minilm.embed(LINES, use_cache=False)).sum(axis=1)
    assert cos.min() > 0.98


def test_embed_reads_stdin_in_a_real_process():
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "FERRUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "ferrum_cli.main", "embed", "--device", "cpu"],
                          input="first line\nsecond line\n", capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert len(doc["embeddings"]) == 2
    assert abs(np.linalg.norm(doc["embeddings"][0]) - 1.0) < 1e-4


def test_embed_errors_are_clear(tmp_path, capsys):
    assert main(["embed", "--input", str(tmp_path / "missing.txt")]) == 1
    assert "not found" in capsys.readouterr().err
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert main(["embed", "--input", str(empty)]) == 1
    assert "no lines" in capsys.readouterr().err
    assert main(["embed", "--input", str(_write_input(tmp_path)), "--output", str(tmp_path / "v.txt")]) == 1
    assert ".npy" in capsys.readouterr().err
