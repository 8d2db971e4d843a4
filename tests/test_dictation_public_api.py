"""Live dictation drives the Whisper executor through its public API only.

A pass encodes a window of any length (``encode_samples``), decodes it with a prompt, a prefix and a cap
(``decode_pass``) and validates options (``check_options``); reaching into the executor's private
attributes would tie dictation to its internals, so this test reads every module of
``executors/dictation/`` and fails on any ``something._name`` where ``something`` is not ``self``/``cls``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

import executors.dictation as dictation

SOURCES = sorted(Path(dictation.__file__).parent.rglob("*.py"))


def _private_reaches(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_dictation_uses_no_private_attribute_of_another_object():
    assert SOURCES, "no dictation sources found"
    reaches = {path.name: _private_reaches(ast.parse(path.read_text())) for path in SOURCES}
    assert not {name: found for name, found in reaches.items() if found}


def test_the_scan_catches_a_private_reach():
    tree = ast.parse("def f(ex, self):\n    ex._check_options(1)\n    self._mine = 2\n    self.ex.stats._x\n")
    assert sorted(_private_reaches(tree)) == ["line 2: ex._check_options", "line 4: self.ex.stats._x"]


def test_a_short_pass_encodes_only_the_audio_there_is(whisper_tiny_int8):
    samples = np.zeros(16000 * 3, dtype=np.float32)
    short = whisper_tiny_int8.encode_samples(samples, short=True, min_seconds=1.0, pad_seconds=1.0)
    full = whisper_tiny_int8.encode_samples(samples)
    assert full.shape[1] == 1500
    assert short.shape[1] == 200  # (3 s + 1 s) of frames at 100 per second, halved by the encoder
