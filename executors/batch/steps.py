"""The per-file work of a batch run, free of Ray: decode one file, transcribe decoded audio,
render and write one output.

These are the batch module's only ties to the rest of the engine (the audio decoder, the
Whisper executor, the exporters), kept narrow so they can be pointed elsewhere in one place.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..core.errors import FerrumError, IOError_, wrap_unexpected


def error_text(exc: BaseException, doing: str) -> str:
    """One line for the summary: the FerrumError's message and hint, or the wrapped exception's."""
    err = exc if isinstance(exc, FerrumError) else wrap_unexpected(exc, doing)
    return str(err)


def decode_file(path: str | os.PathLike) -> np.ndarray:
    """The whole file as 16 kHz mono float32 (the same samples ``ferrum transcribe`` streams)."""
    from ..audio.decode import load_audio

    return load_audio(Path(path))


def load_whisper(model_ref: str | None, device: str, threads: int | None):
    """The Whisper executor for a model reference, as ``ferrum transcribe`` loads it."""
    from ..loading import WHISPER, load_executor
    from ..models.store import DEFAULT_WHISPER

    return load_executor(WHISPER, model_ref or DEFAULT_WHISPER, device=device, threads=threads)[0]


def transcribe_decoded(executor, audios: list[np.ndarray], options) -> list:
    """One Transcript (or the exception that stopped it) per decoded audio, in order.

    ``options.batch_windows`` > 1 packs the 30 s windows of all ``audios`` into shared batches;
    if that fails, each audio is retried alone so one bad input cannot sink the others."""
    if options.batch_windows > 1 and len(audios) > 1:
        from ..whisper.batched import transcribe_many

        try:
            return transcribe_many(executor, audios, options)
        except Exception:  # noqa: BLE001 - fall through to one at a time, which names the culprit
            pass
    results = []
    for audio in audios:
        try:
            results.append(executor.transcribe(audio, options))
        except Exception as exc:  # noqa: BLE001 - reported per file by the caller
            results.append(exc)
    return results


def render_output(transcript, fmt: str) -> str:
    from ..transcripts.exporters import render_transcript

    return render_transcript(transcript, fmt)


def write_output(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a reader (or a resumed run) sees the whole file or none."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise IOError_(f"Cannot write {path}: {exc.strerror or exc}",
                       "check the output folder exists and is writable") from exc


def with_batch_windows(options, batch_size: int):
    return replace(options, batch_windows=max(1, batch_size))
