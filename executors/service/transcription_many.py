"""Transcribing many files as one job whose windows share batches (``ferrum transcribe --batch-size N``).

Files are decoded a group at a time (at most ``GROUP_SECONDS`` of audio in memory) and their 30 s windows
packed into shared batches (``executors.whisper.batched.transcribe_many``). Every file gets what a single
transcription gives it: a history record opened when its group starts, its segments saved as they are
decoded, the record closed as done, failed (a file that cannot be decoded is recorded as failed and the
rest go on) or cancelled; speakers when asked; notices for files cut short; indexing for search.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..audio.truncation import Truncation, watch_truncations
from ..core.errors import FerrumError, wrap_unexpected
from ..core.types import Progress
from ..transcripts.results import Segment, Transcript
from .jobs import Job
from .settings import WHISPER
from .transcription import TranscriptionResult, close_failed, finish, label_speakers, segment_sink

if TYPE_CHECKING:
    from .engine import EngineService

GROUP_SECONDS = 1200.0  # decoded audio held at once: 20 min of 16 kHz float32 is 77 MB


@dataclass
class FileOutcome:
    """One file of a many-files job: its result, or the error that stopped it."""

    index: int
    path: Path
    result: TranscriptionResult | None = None
    error: FerrumError | None = None


@dataclass
class _Decoded:
    index: int
    path: Path
    audio: np.ndarray
    cut_short: list[Truncation] = field(default_factory=list)
    record_id: int | None = None


def submit_many(service: EngineService, paths, options=None, *, save: bool | None = None, speakers=None,
                job_id: str | None = None, on_file: Callable[[FileOutcome], None] | None = None,
                on_segment: Callable[[int, Segment], None] | None = None,
                on_progress: Callable[[int, Progress], None] | None = None) -> Job:
    """A job over ``paths`` whose result is one ``FileOutcome`` per path, in order; ``on_file`` is called
    (on the worker) as each file is done or fails, ``on_segment``/``on_progress`` with the file's index."""
    from ..whisper.options import TranscribeOptions

    options = (options or TranscribeOptions()).validate()
    if speakers is not None and not options.word_timestamps:
        options = replace(options, word_timestamps=True)
    paths = [Path(p).expanduser().absolute() for p in paths]
    save = service.settings.save_history if save is None else save
    job = service.jobs.create("transcribe", f"{len(paths)} files", ";".join(map(str, paths)), job_id)

    def body(job: Job) -> list[FileOutcome]:
        model = service.models.require(WHISPER)
        service.jobs.started(job)
        outcomes: list[FileOutcome] = []

        def settle(outcome: FileOutcome) -> None:
            outcomes.append(outcome)
            if on_file is not None:
                on_file(outcome)

        def record(path: Path) -> int | None:
            return service.history.begin(str(path), model.model_id, options, audio_path=path) if save else None

        for group in _groups(paths, lambda path, exc: close_failed(service, record(path), exc), settle):
            job.token.raise_if_cancelled("transcription")
            for item in group:
                item.record_id = record(item.path)
            _run_group(service, job, model, group, options, speakers, settle, on_segment, on_progress)
        return sorted(outcomes, key=lambda o: o.index)

    return service.jobs.run(job, service.workers[WHISPER], body, f"transcribing {len(paths)} files")


def _groups(paths: list[Path], failed: Callable[[Path, FerrumError], None],
            settle: Callable[[FileOutcome], None]) -> Iterator[list[_Decoded]]:
    """The decodable files in groups of at most ``GROUP_SECONDS``; a file that cannot be decoded goes
    to ``failed`` and is settled at once."""
    from ..audio.decode import SAMPLE_RATE, load_audio

    group: list[_Decoded] = []
    seconds = 0.0
    for index, path in enumerate(paths):
        try:
            with watch_truncations() as cut_short:
                audio = load_audio(path)
        except Exception as exc:  # noqa: BLE001 - this file fails, the others go on
            error = exc if isinstance(exc, FerrumError) else wrap_unexpected(exc, f"decoding {path.name}")
            failed(path, error)
            settle(FileOutcome(index, path, error=error))
            continue
        if group and seconds + len(audio) / SAMPLE_RATE > GROUP_SECONDS:
            yield group
            group, seconds = [], 0.0
        group.append(_Decoded(index, path, audio, list(cut_short)))
        seconds += len(audio) / SAMPLE_RATE
    if group:
        yield group


def _run_group(service: EngineService, job: Job, model, group: list[_Decoded], options, speakers,
               settle: Callable[[FileOutcome], None], on_segment, on_progress) -> None:
    from ..whisper.batched import transcribe_many

    started = time.perf_counter()
    done: set[int] = set()

    sinks = [segment_sink(service, job, item.record_id,
                          None if on_segment is None else functools.partial(on_segment, item.index))
             for item in group]

    def progress(i: int, p: Progress) -> None:
        if on_progress is not None:
            on_progress(group[i].index, p)

    def file_done(i: int, transcript: Transcript) -> None:
        item = group[i]
        if speakers is not None:
            transcript = label_speakers(transcript, item.path, speakers, lambda p: progress(i, p), job.token)
        result = finish(service, job, transcript, item.record_id, time.perf_counter() - started, item.cut_short)
        done.add(i)
        settle(FileOutcome(item.index, item.path, result=result))

    try:
        transcribe_many(model.executor, [item.audio for item in group], options, job.token,
                        on_done=file_done, on_progress=progress,
                        on_segment=lambda i, seg: sinks[i](seg))
    except Exception as exc:
        for i, item in enumerate(group):
            if i not in done:
                close_failed(service, item.record_id, exc)
        raise

