"""Live dictation: capture, ring buffer, VAD, LocalAgreement-2 policy and the engine loop."""

from .capture import (
                      AudioSource,
                      FileSource,
                      InputDevice,
                      MicrophoneSource,
                      find_input_device,
                      list_input_devices,
)
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
                      session_transcript,
)
from .ring import AudioRing

__all__ = ["AudioRing", "AudioSource", "Committed", "DictationEngine", "DictationOptions", "DictationSummary",
           "Event", "FileSource", "InputDevice", "Level", "MicrophoneSource", "Overrun", "Tentative",
           "UtteranceEnd", "find_input_device", "list_input_devices", "session_transcript"]
