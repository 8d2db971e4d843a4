"""One path for every job (issue 26): the front-ends (app, CLI, API) and ``ferrum batch`` neither load a
model, nor transcribe, nor write the history on their own; they go through the engine service, and a
model is loaded only by ``executors/loading.py`` (whose torch-free query embedder ``ferrum search`` may
ask for directly). ``ferrum batch`` sits beside the service (it cannot import it) and may call the one
loader and the Whisper executor's batched API, and nothing else of the kind."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FRONT_ENDS = ("ferrum_cli", "ferrum_api", "ferrum_gui")
# What loads a model, runs an executor's transcription or writes the history, by the name imported.
PRIVATE_PATHS = {"WhisperModelExecutor", "BertModelExecutor", "OnnxEmbedder", "TranscriptHistory",
                 "load_executor", "transcribe_many", "transcribe_chunked"}
BATCH_MAY_USE = {"load_executor", "transcribe_many"}


def _imported_names(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(node.lineno, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            for alias in node.names]


def _offenders(folder: Path, allowed: set[str]) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{lineno} imports {name}" for path in sorted(folder.rglob("*.py"))
            for lineno, name in _imported_names(path) if name in PRIVATE_PATHS - allowed]


def test_front_ends_load_transcribe_and_write_history_only_through_the_service():
    offenders = [line for pkg in FRONT_ENDS for line in _offenders(ROOT / pkg, set())]
    assert not offenders, "go through executors.service (or executors.loading):\n" + "\n".join(offenders)


def test_batch_uses_only_the_one_loader_and_the_executors_batched_api():
    offenders = _offenders(ROOT / "executors" / "batch", BATCH_MAY_USE)
    assert not offenders, "\n".join(offenders)
