"""``WatchTranscriber``: a watched folder's files transcribed by the engine service (``ferrum watch``).

Each settled file becomes a job of ``EngineService.transcribe``, like a file given by hand, so it lands
in the history and (with ``auto_index_transcripts``) the search index; its transcript is written beside
it when a format is asked for. A file whose job was cancelled because watching stopped stays queued in
the ledger, so the next start takes it up again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import Cancelled, FerrumError, wrap_unexpected
from ..transcripts.exporters import write_transcript
from .watch_folder import SETTLE_S, FolderWatcher, output_beside
from .watch_ledger import WatchLedger

if TYPE_CHECKING:
    from .engine import EngineService
    from .transcription import TranscriptionResult


@dataclass(frozen=True)
class WatchOptions:
    output_format: str | None = None  # write <name>.<format> beside each file; None: the history only
    settle_s: float = SETTLE_S        # a file unchanged this long is complete
    transcribe: object = None         # TranscribeOptions (None: the defaults)
    speakers: object = None           # DiarizationOptions to label speakers, or None


@dataclass
class WatchedFile:
    """What happened to one file: "queued", then "done", "failed" or "cancelled"."""

    path: Path
    state: str
    job_id: str = ""
    result: TranscriptionResult | None = None
    output: Path | None = None
    error: FerrumError | None = None


class WatchTranscriber:
    """``start()``, then ``wait()`` until the folder goes away (or ``stop()`` from another thread);
    ``on_file(WatchedFile)`` is called on the service's threads as each file is queued and ends."""

    def __init__(self, service: EngineService, folder: str | Path, options: WatchOptions | None = None,
                 on_file: Callable[[WatchedFile], None] | None = None, ledger: WatchLedger | None = None):
        self.options = options or WatchOptions()
        self._service = service
        self._on_file = on_file
        self._own_ledger = ledger is None
        self._ledger = ledger or WatchLedger()
        self._jobs: dict[str, Path] = {}  # queued or running, not yet told
        self._lock = threading.Condition()
        self._over = threading.Event()
        self.lost: FerrumError | None = None  # why watching stopped by itself
        self._watcher = FolderWatcher(folder, self._ledger, self._queue, self._lose, self.options.settle_s)

    @property
    def folder(self) -> Path:
        return self._watcher.folder

    def start(self) -> None:
        self._watcher.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until watching has stopped; False on ``timeout``."""
        return self._over.wait(timeout)

    def stop(self) -> None:
        """Stop watching and cancel the files still queued or running (they stay queued for next time)."""
        self._over.set()
        self._watcher.stop()
        with self._lock:
            running = list(self._jobs)
        for job_id in running:
            self._service.cancel(job_id)
        with self._lock:  # each job's end is settled before the ledger closes
            self._lock.wait_for(lambda: not self._jobs)
        if self._own_ledger:
            self._ledger.close()

    # -- on the watcher's and the service's threads -----------------------------------------------
    def _queue(self, path: Path) -> None:
        o = self.options
        job = self._service.transcribe(path, o.transcribe, speakers=o.speakers)
        with self._lock:
            self._jobs[job.job_id] = path
        self._tell(WatchedFile(path, "queued", job.job_id))
        job.future.add_done_callback(lambda future: self._ended(job.job_id, path, future))

    def _ended(self, job_id: str, path: Path, future) -> None:
        try:
            self._settle(job_id, path, future)
        finally:
            with self._lock:
                self._jobs.pop(job_id, None)
                self._lock.notify_all()

    def _settle(self, job_id: str, path: Path, future) -> None:
        error = future.exception()
        if isinstance(error, Cancelled) and self._over.is_set():
            return  # stopped with the watching: left queued for the next start
        outcome = WatchedFile(path, "done", job_id)
        if error is None:
            outcome.result = future.result()
            if self.options.output_format:
                try:
                    outcome.output = write_transcript(outcome.result.transcript, self.options.output_format,
                                                      output_beside(path, self.options.output_format))
                except Exception as exc:  # noqa: BLE001 - the transcript is in the history all the same
                    outcome.error = wrap_unexpected(exc, f"writing the transcript of {path.name}")
        else:
            outcome.state = "cancelled" if isinstance(error, Cancelled) else "failed"
            outcome.error = wrap_unexpected(error, f"transcribing {path.name}")
        self._ledger.ended(path, outcome.state)
        self._tell(outcome)

    def _lose(self, error: FerrumError) -> None:
        self.lost = error
        self._over.set()

    def _tell(self, outcome: WatchedFile) -> None:
        if self._on_file is not None:
            self._on_file(outcome)
