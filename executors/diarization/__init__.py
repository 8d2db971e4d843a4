"""Offline speaker diarization: who spoke when, and which speaker said each part of a transcript."""

from .options import Diarization, DiarizationOptions, SpeakerTurn, speaker_label
from .engine import diarize
from .assign import assign_speakers
from .errors import SpeakerCountError, SpeakerModelMissing

__all__ = ["Diarization", "DiarizationOptions", "SpeakerTurn", "diarize", "assign_speakers", "speaker_label",
           "SpeakerCountError", "SpeakerModelMissing"]
