"""Whisper speech-to-text: options, results and the executor (loaded lazily: it imports torch)."""

from ..transcripts.results import Segment, Transcript, Word
from .options import TranscribeOptions

__all__ = ["Segment", "TranscribeOptions", "Transcript", "Word", "WhisperModelExecutor"]


def __getattr__(name):
    if name == "WhisperModelExecutor":
        from .executor import WhisperModelExecutor

        return WhisperModelExecutor
    raise AttributeError(name)
