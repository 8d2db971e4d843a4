"""One options object for a batch run, and what a run reports while and after it runs."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..core.errors import InvalidParameterError
from ..diarization.options import DiarizationOptions
from ..transcripts.exporters import EXPORT_FORMATS, SPEAKER_FORMATS
from ..whisper.options import TranscribeOptions


@dataclass
class BatchOptions:
    output_dir: Path
    fmt: str = "txt"
    transcribe: TranscribeOptions = field(default_factory=TranscribeOptions)
    model: str | None = None             # Whisper model reference (None: the bundled default)
    device: str = "auto"                 # per worker: auto, cpu, cuda (GPUs are requested when the cluster has them)
    threads: int | None = None           # CPU threads per transcription worker (None: 1, or more on nodes over 16 cores)
    workers: int | None = None           # transcription workers (None: one per GPU, else as many as the node's cores hold)
    batch_size: int = 1                  # 30 s windows decoded together; >1 packs windows of several files
    index: str | None = None             # search collection to index the transcripts into
    db: Path | None = None               # search database (None: the app's own)
    embedding_model: str | None = None   # None: the bundled default
    speakers: DiarizationOptions | None = None   # label who spoke when (None: no diarization)
    overwrite: bool = False              # redo files whose output exists
    cluster: str = "local"               # local | auto | ray://HOST:PORT | HOST:PORT
    local_cpus: int | None = None        # CPUs of a local cluster (None: all of this machine's)

    def validate(self) -> BatchOptions:
        formats = EXPORT_FORMATS + (SPEAKER_FORMATS if self.speakers is not None else ())
        if self.fmt not in formats:
            raise InvalidParameterError(f"Unknown output format '{self.fmt}'", f"use one of {', '.join(formats)}")
        for name in ("threads", "workers", "local_cpus"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InvalidParameterError(f"{name} must be at least 1", f"leave {name} out to choose it automatically")
        if self.batch_size < 1:
            raise InvalidParameterError("batch_size must be at least 1", "use 1 to decode one window at a time")
        if self.db is not None and self.index is None:
            raise InvalidParameterError("A search database was given without a collection to index into",
                                        "add --index COLLECTION, or leave --db out")
        self.transcribe.validate()
        if self.speakers is not None:
            self.speakers.validate()
            if not self.transcribe.word_timestamps:  # speaker changes inside a segment are found between words
                self.transcribe = replace(self.transcribe, word_timestamps=True)
        return self


@dataclass
class BatchProgress:
    """Where a run stands; sent after each finished file (and once at the start)."""

    files_done: int          # finished this run: written or failed
    files_total: int         # to do this run (files already done before are not counted)
    files_failed: int
    audio_done_s: float
    audio_total_s: float     # 0 while unknown
    elapsed_s: float
    last: FileOutcome | None = None
    first_s: float = 0.0          # elapsed when the first file came back (start-up excluded from rates)
    first_audio_s: float = 0.0    # audio of that first file

    @property
    def eta_s(self) -> float | None:
        """Seconds left, from the audio rate since the first file came back (the file rate while
        the total duration is unknown); None until two files are back."""
        span = self.elapsed_s - self.first_s
        if self.files_done < 2 or span <= 0:
            return None
        audio = self.audio_done_s - self.first_audio_s
        if self.audio_total_s > 0 and audio > 0:
            return max(0.0, (self.audio_total_s - self.audio_done_s) * span / audio)
        return (self.files_total - self.files_done) * span / (self.files_done - 1)


@dataclass
class FileOutcome:
    source: str
    output: str
    status: str              # "written", "indexed" (output existed, only indexed), "failed"
    duration_s: float = 0.0
    seconds: float = 0.0     # time a worker spent transcribing it
    worker_pid: int = 0
    error: str = ""
    index_error: str = ""


@dataclass
class BatchSummary:
    output_dir: str
    files_total: int = 0     # every file the sources name
    written: int = 0
    skipped: int = 0         # output already there
    indexed: int = 0
    audio_seconds: float = 0.0
    wall_seconds: float = 0.0
    cancelled: bool = False
    cluster: str = ""
    failed: list[dict] = field(default_factory=list)          # {"source", "error"}
    index_failed: list[dict] = field(default_factory=list)    # {"source", "output", "error"}

    @property
    def ok(self) -> bool:
        return not self.failed and not self.index_failed and not self.cancelled

    def to_dict(self) -> dict:
        return asdict(self)

    def save(self, path: Path) -> None:
        from .steps import write_output

        write_output(path, json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")
