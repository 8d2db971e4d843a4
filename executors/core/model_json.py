"""A model folder's JSON files (configs, tokenizer and pooling settings), read with an error that says
which file failed and what to do."""

from __future__ import annotations

import json
from pathlib import Path

from .errors import ModelError

_HINT = "the model folder is incomplete or damaged; download or convert the model again"


def read_model_json(path: Path):
    """The parsed contents of ``path``; ``ModelError`` when it is missing or not valid JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"Could not read {path.name} in {path.parent}: {exc}", _HINT) from exc
