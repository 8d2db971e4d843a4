"""The engine service the app, the CLI and the API share (``EngineService``); see ``engine.py``."""

from .dictation import DictationRun, DictationSession
from .engine import EngineService, wait
from .events import (
    EventHub,
    Failure,
    HistoryChanged,
    IndexChanged,
    JobFailed,
    JobFinished,
    JobNotice,
    JobProgress,
    JobStarted,
    ModelStateChanged,
    Sample,
    SegmentProduced,
    ServiceEvent,
)
from .jobs import Job, JobInfo
from .models import LoadedModel, load_model
from .search import FILES, TRANSCRIPTS
from .settings import EMBEDDING, MODEL_KINDS, WHISPER, ServiceSettings
from .transcription import TranscriptionResult
from .workers import IO

__all__ = ["EMBEDDING", "FILES", "IO", "MODEL_KINDS", "TRANSCRIPTS", "WHISPER", "DictationRun", "DictationSession",
           "EngineService", "EventHub", "Failure", "HistoryChanged", "IndexChanged", "Job", "JobFailed",
           "JobFinished", "JobInfo", "JobNotice", "JobProgress", "JobStarted", "LoadedModel", "ModelStateChanged",
           "Sample", "SegmentProduced", "ServiceEvent", "ServiceSettings", "TranscriptionResult", "load_model",
           "wait"]
