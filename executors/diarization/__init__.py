"""Offline speaker diarization: who spoke when, and which speaker said each part of a transcript."""

from .options import Diarization, DiarizationOptions, SpeakerTurn, speaker_label
from .engine import diarize
from .assign import assign_speakers, diarize_transcript
from .heard import transcript_speech
from .errors import SpeakerCountError, SpeakerModelMissing

__all__ = ["Diarization", "DiarizationOptions", "SpeakerTurn", "diarize", "assign_speakers", "diarize_transcript",
           "transcript_speech", "speaker_label",
           "SpeakerCountError", "SpeakerModelMissing"]
