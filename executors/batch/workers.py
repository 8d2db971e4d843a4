"""The stages of the batch pipeline as Ray Data user functions (plain Python: no Ray import here).

Rows are dicts with the columns of ``ROW_COLUMNS``; every stage keeps all of them so blocks
from any stage share one schema. A failure inside a stage never raises: it lands in the row's
``error`` (or ``index_error``) column and the row travels on to the summary, so one bad file
cannot stop the run. Worker deaths are a different matter: Ray retries those tasks.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .steps import decode_file, error_text, load_whisper, render_output, transcribe_decoded

ROW_COLUMNS = ("index", "source", "output", "text", "error", "duration", "audio", "seconds", "worker",
               "chunks", "vectors", "index_error")


def new_row(index: int, source: str, output: str, text: str = "") -> dict:
    """A row entering the pipeline; ``text`` pre-filled = the output exists, only index it."""
    return {"index": index, "source": source, "output": output, "text": text, "error": "", "duration": 0.0,
            "audio": b"", "seconds": 0.0, "worker": 0, "chunks": "", "vectors": b"", "index_error": ""}


def _rows(batch: dict) -> list[dict]:
    n = len(batch["index"])
    return [{k: _plain(batch[k][i]) for k in ROW_COLUMNS} for i in range(n)]


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _columns(rows: list[dict]) -> dict:
    out = {}
    for k in ROW_COLUMNS:
        values = [r[k] for r in rows]
        out[k] = np.array(values, dtype=object) if isinstance(values[0], (str, bytes)) else np.array(values)
    return out


def decode_row(row: dict) -> dict:
    """CPU task: read and resample one file to 16 kHz mono (skipped for index-only rows)."""
    if row["text"] or row["error"]:
        return row
    try:
        audio = decode_file(row["source"])
        row["audio"], row["duration"] = audio.tobytes(), audio.size / 16000
    except Exception as exc:  # noqa: BLE001 - reported in the summary
        row["error"] = error_text(exc, f"decoding {row['source']}")
    return row


class Transcriber:
    """Actor: one Whisper executor loaded in ``__init__``; ``__call__`` transcribes a batch of files
    (decoding those that no decoding task has) and returns each one's rendered output text (the
    driver writes the files)."""

    def __init__(self, model: str | None, device: str, threads: int | None, options, fmt: str,
                 postprocess: Callable | None = None):
        self.executor = load_whisper(model, device, threads)
        self.options, self.fmt, self.postprocess = options, fmt, postprocess

    def __call__(self, batch: dict) -> dict:
        rows = [r if r["audio"] else decode_row(r) for r in _rows(batch)]  # no decoding stage: decode here
        todo = [r for r in rows if not r["text"] and not r["error"]]
        audios = [np.frombuffer(r["audio"], dtype=np.float32) for r in todo]
        started = time.perf_counter()
        results = transcribe_decoded(self.executor, audios, self.options) if todo else []
        per_file = (time.perf_counter() - started) / max(1, len(todo))
        for row, audio, result in zip(todo, audios, results):
            try:
                if isinstance(result, BaseException):
                    raise result
                if self.postprocess is not None:
                    result = self.postprocess(audio, result)
                row["text"] = render_output(result, self.fmt)
            except Exception as exc:  # noqa: BLE001 - reported in the summary
                row["error"] = error_text(exc, f"transcribing {row['source']}")
            row["seconds"], row["worker"] = per_file, os.getpid()
        for row in rows:
            row["audio"] = b""  # the samples are done with; keep them out of the object store
        return _columns(rows)


class Embedder:
    """Actor: one BERT executor; ``__call__`` chunks each transcript as ``ferrum index`` would
    chunk the output file and embeds the chunks."""

    def __init__(self, model: str | None, device: str, threads: int | None):
        from ..loading import EMBEDDING, load_executor
        from ..models.store import DEFAULT_EMBEDDING

        self.executor = load_executor(EMBEDDING, model or DEFAULT_EMBEDDING, device=device, threads=threads)[0]

    def __call__(self, batch: dict) -> dict:
        from ..search.indexer import extract_chunks

        ex = self.executor
        rows = _rows(batch)
        for row in (r for r in rows if r["text"] and not r["error"]):
            try:
                content, chunks = extract_chunks(ex, Path(row["output"]), row["text"].encode("utf-8"))
                vectors = np.asarray(ex.embed([c.text for c in chunks]), dtype=np.float32) if chunks \
                    else np.zeros((0, ex.embedding_dim), np.float32)
                row["chunks"] = json.dumps({"kind": content.kind.value, "model_id": ex.model_id,
                                            "dim": ex.embedding_dim, "chunks": [asdict(c) for c in chunks]})
                row["vectors"] = vectors.tobytes()
            except Exception as exc:  # noqa: BLE001 - reported in the summary
                row["index_error"] = error_text(exc, f"indexing {row['output']}")
        return _columns(rows)
