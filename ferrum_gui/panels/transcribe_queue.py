"""The transcription queue behind the Transcribe panel: files run one at a time through the host.

It keeps what each job produced (segments, history record) and reports every change as a signal;
the panel turns those into rows, progress bars and the live transcript.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from executors.core.errors import Cancelled, FerrumError
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
    jobEnded = Signal(str, str, str)        # job_id, JobState value, message

    def __init__(self, host, parent: QObject | None = None):
        super().__init__(parent)
        self.host = host
        self._tasks = TaskSet(host.failure.emit)
        self._waiting: list[tuple[str, Path, TranscribeOptions]] = []
        self._running: str | None = None
        self._draining = False
        self._paths: dict[str, Path] = {}
        self._segments: dict[str, list] = {}
        self._records: dict[str, int] = {}
        host.jobStarted.connect(self._on_started)
        host.jobProgress.connect(self._on_progress)
        host.segmentProduced.connect(self._on_segment)

    # --- queries -------------------------------------------------------------------------

    @property
    def running_job(self) -> str | None:
        return self._running

    def is_busy(self) -> bool:
        return self._draining

    def path(self, job_id: str) -> Path:
        return self._paths[job_id]

    def segments(self, job_id: str) -> list:
        return list(self._segments.get(job_id, []))

    def record_id(self, job_id: str) -> int | None:
        return self._records.get(job_id)

    def active_records(self) -> set[int]:
        """History records a running job is still writing."""
        return {self._records[self._running]} if self._running in self._records else set()

    # --- control -------------------------------------------------------------------------

    def enqueue(self, paths, options: TranscribeOptions) -> list[str]:
        ids = []
        for p in paths:
            job_id = f"tx-{next(_job_numbers)}"
            self._paths[job_id] = Path(p)
            self._waiting.append((job_id, Path(p), options))
            self.jobQueued.emit(job_id, Path(p))
            ids.append(job_id)
        if ids and not self._draining:
            self._draining = True
            self._tasks.spawn(self._drain(), "running the transcription queue")
        return ids

    def cancel(self, job_id: str) -> bool:
        """Drop a waiting job, or ask the host to stop the running one; False if already over."""
        waiting = [w for w in self._waiting if w[0] == job_id]
        if waiting:
            self._waiting.remove(waiting[0])
            self.jobEnded.emit(job_id, JobState.CANCELLED.value, "cancelled before it started")
            return True
        if job_id == self._running:
            return self.host.cancel(job_id)
        return False

    def shutdown(self) -> None:
        self._waiting.clear()
        if self._running is not None:
            self.host.cancel(self._running)
        self._tasks.cancel_all()

    # --- running -------------------------------------------------------------------------

    async def _drain(self) -> None:
        try:
            while self._waiting:
                await self._run(*self._waiting.pop(0))
        finally:
            self._draining = False

    async def _run(self, job_id: str, path: Path, options: TranscribeOptions) -> None:
        self._running = job_id
        self._segments[job_id] = []
        self.jobRunning.emit(job_id, path)
        try:
            await self.host.transcribe(path, options, job_id=job_id)
        except Cancelled:
            state, message = JobState.CANCELLED, "cancelled; the segments decoded so far are kept"
        except FerrumError as exc:  # already shown by the host's notification path
            state, message = JobState.FAILED, str(exc)
        else:
            state, message = JobState.DONE, ""
        finally:
            self._running = None
        self.jobEnded.emit(job_id, state.value, message)

    def _on_started(self, job_id: str, info) -> None:
        record_id = getattr(info, "record_id", None)
        if job_id in self._segments and record_id is not None:
            self._records[job_id] = record_id
            self.recordAssigned.emit(job_id, record_id)

    def _on_progress(self, job_id: str, progress) -> None:
        if job_id in self._segments:
            self.progressed.emit(job_id, progress.done, progress.total)

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
