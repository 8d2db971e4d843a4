"""The Transcribe panel's view of its jobs on the engine service's Whisper queue.

Files are queued on the service at once (they run one at a time, in order); this object keeps what
each job produced (segments, history record, the finished transcript) and reports every change as a
signal; the panel turns those into rows, progress bars and the live transcript.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from executors.core.errors import Cancelled, FerrumError
from executors.transcripts.results import Transcript
from executors.whisper.options import TranscribeOptions

from ..widgets.job_list import JobState
from ..widgets.tasks import TaskSet

_job_numbers = itertools.count(1)


class TranscriptionQueue(QObject):
    jobQueued = Signal(str, object)         # job_id, Path
    jobRunning = Signal(str, object)        # job_id, Path
    recordAssigned = Signal(str, int)       # job_id, history record id
    segmentAdded = Signal(str, object)      # job_id, Segment
    progressed = Signal(str, float, float)  # job_id, seconds done, seconds total
    noticed = Signal(str, str, str)         # job_id, message, hint (e.g. the file is cut short)
    jobEnded = Signal(str, str, str)        # job_id, JobState value, message

    def __init__(self, host, parent: QObject | None = None):
        super().__init__(parent)
        self.host = host
        self._tasks = TaskSet(host.failure.emit)
        self._pending: set[str] = set()         # queued or running, not ended
        self._running: str | None = None
        self._paths: dict[str, Path] = {}
        self._segments: dict[str, list] = {}
        self._records: dict[str, int] = {}
        self._results: dict[str, Transcript] = {}  # the finished transcript, or the part decoded before it stopped
        self._notices: dict[str, str] = {}
        host.jobStarted.connect(self._on_started)
        host.jobProgress.connect(self._on_progress)
        host.segmentProduced.connect(self._on_segment)
        host.jobNotice.connect(self._on_notice)

    # --- queries -------------------------------------------------------------------------

    @property
    def running_job(self) -> str | None:
        return self._running

    def is_busy(self) -> bool:
        return bool(self._pending)

    def path(self, job_id: str) -> Path:
        return self._paths[job_id]

    def segments(self, job_id: str) -> list:
        return list(self._segments.get(job_id, []))

    def record_id(self, job_id: str) -> int | None:
        return self._records.get(job_id)

    def result(self, job_id: str) -> Transcript | None:
        """An ended job's transcript: all of it, or what was decoded before it was cancelled or failed."""
        return self._results.get(job_id)

    def active_records(self) -> set[int]:
        """History records a running job is still writing."""
        return {self._records[self._running]} if self._running in self._records else set()

    # --- control -------------------------------------------------------------------------

    def enqueue(self, paths, options: TranscribeOptions) -> list[str]:
        ids = []
        for p in paths:
            job_id = f"tx-{next(_job_numbers)}"
            self._paths[job_id] = Path(p)
            self._pending.add(job_id)
            self.jobQueued.emit(job_id, Path(p))
            queued = self.host.transcribe(Path(p), options, job_id=job_id)  # in the service's queue now
            self._tasks.spawn(self._run(job_id, queued), "running the transcription queue")
            ids.append(job_id)
        return ids

    def cancel(self, job_id: str) -> bool:
        """Stop a queued or running job; False if it is already over."""
        return job_id in self._pending and self.host.cancel(job_id)

    def shutdown(self) -> None:
        for job_id in list(self._pending):
            self.host.cancel(job_id)
        self._tasks.cancel_all()

    # --- running -------------------------------------------------------------------------

    async def _run(self, job_id: str, queued) -> None:
        try:
            self._results[job_id] = await queued
        except Cancelled as exc:
            state = JobState.CANCELLED
            message = ("cancelled; the segments decoded so far are kept" if job_id in self._segments
                       else "cancelled before it started")
            self._keep_partial(job_id, exc)
        except FerrumError as exc:  # already shown by the host's notification path
            state, message = JobState.FAILED, str(exc)
            self._keep_partial(job_id, exc)
        else:
            state, message = JobState.DONE, self._notices.get(job_id, "")
        finally:
            self._pending.discard(job_id)
            if self._running == job_id:
                self._running = None
        self.jobEnded.emit(job_id, state.value, message)

    def _keep_partial(self, job_id: str, exc: FerrumError) -> None:
        partial = getattr(exc, "partial", None)
        if partial is not None:
            self._results[job_id] = partial

    def _on_started(self, job_id: str, info) -> None:
        if job_id not in self._pending:
            return
        self._running = job_id
        self._segments[job_id] = []
        record_id = getattr(info, "record_id", None)
        if record_id is not None:
            self._records[job_id] = record_id
            self.recordAssigned.emit(job_id, record_id)
        self.jobRunning.emit(job_id, self._paths[job_id])

    def _on_progress(self, job_id: str, progress) -> None:
        if job_id in self._segments:
            self.progressed.emit(job_id, progress.done, progress.total)

    def _on_notice(self, job_id: str, message: str, hint: str) -> None:
        if job_id in self._pending:
            self._notices[job_id] = message
            self.noticed.emit(job_id, message, hint)

    def _on_segment(self, job_id: str, segment) -> None:
        if job_id in self._segments:
            self._segments[job_id].append(segment)
            self.segmentAdded.emit(job_id, segment)


def selection_notices(chosen) -> list[tuple[str, str, str, int]]:
    """(message, hint, level, timeout ms) to tell about a ``MediaSelection``: paths that do not exist,
    and for folders how many files were queued and what was skipped and why."""
    notices = [(f"{path} does not exist", "check the path, or pick the file again", "warning", 0)
               for path in chosen.missing]
    if chosen.folders:
        skipped = chosen.skipped_text()
        detail = f" ({skipped})" if skipped else ""
        if chosen.files:
            n = len(chosen.files)
            notices.append((f"Queued {n} file{'s' if n != 1 else ''} from the folder"
                            f"{'s' if chosen.folders > 1 else ''}{detail}", "", "info", 10000))
        else:
            notices.append((f"No audio or video files to transcribe there{detail}",
                            "pick a folder with WAV, FLAC, MP3, M4A, OGG or video files", "warning", 0))
    return notices
