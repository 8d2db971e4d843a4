"""Whisper speech-to-text: options, results and the executor (loaded lazily: it imports torch)."""

from .options import TranscribeOptions
from .results import Segment, Transcript, Word

__all__ = ["Segment", "TranscribeOptions", "Transcript", "Word", "WhisperModelExecutor"]


def __getattr__(name):
    if name == "WhisperModelExecutor":
        from .executor import WhisperModelExecutor

        return WhisperModelExecutor
    raise AttributeError(name)
