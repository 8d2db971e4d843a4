"""Transcribing a file (or bytes, or samples) as a job on the Whisper worker, into the history.

The record is created when the job starts, each segment is saved as it is decoded, and the record is
closed as done, cancelled or failed with whatever was decoded; a finished transcript is then indexed
for search in the background. A file cut short is transcribed up to the break, with a ``JobNotice``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..audio.truncation import Truncation, watch_truncations
from ..core.errors import Cancelled, NotFoundError
from ..transcripts.results import Segment, Transcript
from .events import JobNotice, JobProgress, SegmentProduced
from .jobs import Job, JobInfo
from .settings import WHISPER

if TYPE_CHECKING:
    from .engine import EngineService


@dataclass
class TranscriptionResult:
    transcript: Transcript
    record_id: int | None   # its history record (None when not saved)
    seconds: float          # wall time of the transcription itself
    job_id: str
    cut_short: list[Truncation] = field(default_factory=list)  # the input ended before its header said


def submit(service: EngineService, source, options=None, *, title: str | None = None, save: bool | None = None,
           job_id: str | None = None, on_segment: Callable[[Segment], None] | None = None,
           on_progress: Callable | None = None, on_start: Callable[[JobInfo], None] | None = None,
           speakers=None) -> Job:
    """``speakers`` (DiarizationOptions, also taken from ``options.extra["speakers"]``) labels who speaks
    each part once the words are in (word timestamps are switched on for it)."""
    from ..whisper.options import TranscribeOptions

    options = (options or TranscribeOptions()).validate()
    speakers = speakers if speakers is not None else options.extra.get("speakers")
    if speakers is not None and not options.word_timestamps:
        options = replace(options, word_timestamps=True)
    path = Path(source).expanduser().absolute() if isinstance(source, (str, Path)) else None
    title = title or (path.name if path is not None else "audio")
    job = service.jobs.create("transcribe", title, str(path) if path is not None else title, job_id)
    job.info.path = path
    save = service.settings.save_history if save is None else save

    def body(job: Job) -> TranscriptionResult:
        info, history = job.info, service.history
        info.duration = _probe(path if path is not None else source)
        model = service.models.require(WHISPER)
        job.token.raise_if_cancelled("transcription")
        if save:
            info.record_id = history.begin(info.source, model.model_id, options, audio_path=path)
        service.jobs.started(job)
        if on_start is not None:
            on_start(info)

        segment = segment_sink(service, job, info.record_id, on_segment)

        def progress(p) -> None:
            service.events.emit(JobProgress(job.job_id, p))
            if on_progress is not None:
                on_progress(p)

        start = time.perf_counter()
        try:
            with watch_truncations() as cut_short:
                transcript = model.executor.transcribe(path if path is not None else source, options,
                                                       on_segment=segment, on_progress=progress, cancel=job.token,
                                                       duration=info.duration)
                if speakers is not None:
                    transcript = label_speakers(transcript, path if path is not None else source, speakers,
                                                 progress, job.token)
        except Exception as exc:
            close_failed(service, info.record_id, exc)
            raise
        seconds = time.perf_counter() - start
        return finish(service, job, transcript, info.record_id, seconds, cut_short)

    return service.jobs.run(job, service.workers[WHISPER], body, f"transcribing {title}")


def segment_sink(service: EngineService, job: Job, record_id: int | None,
                 on_segment: Callable[[Segment], None] | None) -> Callable[[Segment], None]:
    """Where each decoded segment goes: the service's event, the history record (in the background),
    the caller."""
    def sink(seg: Segment) -> None:
        service.events.emit(SegmentProduced(job.job_id, seg))
        if record_id is not None:
            service.history.append_segment_soon(record_id, seg)
        if on_segment is not None:
            on_segment(seg)
    return sink


def finish(service: EngineService, job: Job, transcript: Transcript, record_id: int | None, seconds: float,
           cut_short: list[Truncation]) -> TranscriptionResult:
    """A transcription is done: its notices, its history record closed, its metrics, its indexing."""
    for truncation in cut_short:
        service.events.emit(JobNotice(job.job_id, truncation.message, truncation.hint))
    if record_id is not None:
        service.history.end(record_id, "done", transcript)
    service.events.sample("job_latency_s", seconds)
    if transcript.duration > 0:
        service.events.sample("rtf", seconds / transcript.duration)
    if record_id is not None and transcript.segments and service.settings.auto_index_transcripts:
        service.search.index_record_soon(record_id)
    return TranscriptionResult(transcript, record_id, seconds, job.job_id, cut_short)


def close_failed(service: EngineService, record_id: int | None, exc: BaseException) -> None:
    """Close ``record_id`` as cancelled or failed, with whatever part the error carries."""
    if record_id is not None:
        service.history.end(record_id, "cancelled" if isinstance(exc, Cancelled) else "failed",
                            getattr(exc, "partial", None), str(getattr(exc, "message", exc)))


def label_speakers(transcript: Transcript, source, speakers, progress: Callable, cancel) -> Transcript:
    from ..core.types import Progress
    from ..diarization import diarize_transcript

    total = transcript.duration

    def step(p) -> None:
        progress(Progress(p.fraction * total, total, "s", "finding speakers"))

    return diarize_transcript(transcript, source, speakers, on_progress=step, cancel=cancel)


def _probe(source) -> float | None:
    """Seconds of audio; fails early with a clear error for a missing or unreadable file."""
    import numpy as np

    from ..audio.decode import SAMPLE_RATE, audio_duration

    if isinstance(source, Path):
        if not source.is_file():
            raise NotFoundError(f"{source} does not exist", "check the path, or pick the file again")
        return audio_duration(source)
    if isinstance(source, np.ndarray):
        return len(source) / SAMPLE_RATE
    return audio_duration(bytes(source))
