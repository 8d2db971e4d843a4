"""Live dictation: capture, ring buffer, VAD, LocalAgreement-2 policy and the engine loop."""

from ..audio.capture import (
                      AudioSource,
                      FileSource,
                      InputDevice,
                      MicrophoneSource,
                      find_input_device,
                      list_input_devices,
)
from ..audio.ring import AudioRing
from .engine import DictationEngine
from .events import (
                      Committed,
                      DictationOptions,
                      DictationSummary,
                      Event,
                      Level,
                      Overrun,
                      Tentative,
                      UtteranceEnd,
                      apply_session_edits,
                      apply_text_edits,
                      session_transcript,
)

__all__ = ["AudioRing", "AudioSource", "Committed", "DictationEngine", "DictationOptions", "DictationSummary",
           "Event", "FileSource", "InputDevice", "Level", "MicrophoneSource", "Overrun", "Tentative",
           "UtteranceEnd", "apply_session_edits", "apply_text_edits", "find_input_device", "list_input_devices", "session_transcript"]
