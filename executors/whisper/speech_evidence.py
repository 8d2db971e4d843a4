"""What a window's audio says about the text decoded from it.

Whisper's quality checks read only the text; repeated words look the same whether the speaker said
them ("no, no, no, no") or the decoder made them up over breath or silence.  ``WindowAudio`` answers
the question the text cannot: is there speech enough, and where, for these words?  The voice-activity
detector (Silero, ``executors/audio/vad.py``) runs only when a check asks, so windows whose text raises
no doubt cost nothing extra.
"""

from __future__ import annotations

import numpy as np

from ..audio.silence import is_digital_silence

SAMPLE_RATE = 16000
VAD_FRAME_S = 0.032         # one Silero step at 16 kHz
SPEECH_PROBABILITY = 0.5    # Silero's own default threshold for speech
# Sustained speech stays under ~4 words a second (fast speakers, digit strings, spelled letters
# included); a decoded text with more words than this allows for the speech heard is not in the audio.
WORDS_PER_SPEECH_SECOND = 5.0
# People read at 2-3 words a second: a text with fewer than one word per second of a long stretch of speech
# left most of it out (a prompted window that skipped its speech; fast-long windows ask more of a text,
# chunked.SHORT_WORDS_PER_SPEECH_SECOND, as their first remedy costs less).
MIN_WORDS_PER_SPEECH_SECOND = 1.0
SLACK_WORDS = 3             # short clips: a few words around the VAD's frame edges
TAIL_SECONDS = 1.5          # a transcript may end this long after the last speech the VAD heard
MIN_SPEECH_S = 0.1          # less than this much speech in a window: the VAD heard none
SETTLE_S = 1.0              # a clip shorter than this is scored after silence (vad.speech_probabilities' settle)


class WindowAudio:
    """The audio of one decoded window (16 kHz mono, time 0 = the window's start)."""

    def __init__(self, samples: np.ndarray):
        self.samples = np.asarray(samples, dtype=np.float32).reshape(-1)
        self._speech: np.ndarray | None = None   # per VAD frame: speech or not

    @property
    def duration(self) -> float:
        return len(self.samples) / SAMPLE_RATE

    def is_digital_silence(self) -> bool:
        return is_digital_silence(self.samples)

    def _frames(self) -> np.ndarray:
        if self._speech is None:
            if self.is_digital_silence():
                self._speech = np.zeros(0, dtype=bool)
            else:
                from ..audio.vad import speech_probabilities

                settle = self.duration < SETTLE_S
                self._speech = speech_probabilities(self.samples, settle=settle) >= SPEECH_PROBABILITY
        return self._speech

    def speech_seconds(self, until: float | None = None) -> float:
        """Seconds of speech the detector hears, in the whole window or up to ``until`` seconds."""
        frames = self._frames() if until is None else self._frames()[:max(0, int(until / VAD_FRAME_S))]
        return float(frames.sum()) * VAD_FRAME_S

    def last_speech_end(self) -> float:
        """Seconds from the window's start to the end of the last speech heard (0 when none)."""
        heard = np.flatnonzero(self._frames())
        return float(heard[-1] + 1) * VAD_FRAME_S if heard.size else 0.0

    def hears_speech(self) -> bool:
        return self.speech_seconds() >= MIN_SPEECH_S

    def mostly_speech(self) -> bool:
        """Speech through at least half of the audio (a word said alone, a clip cut to its speech)."""
        return self.hears_speech() and self.speech_seconds() >= 0.5 * self.duration

    def holds(self, words: int, last_time: float | None = None, slack: float = SLACK_WORDS) -> bool:
        """Whether this audio has speech enough for ``words`` words ending at ``last_time`` seconds
        (None: the text carries no times); ``slack``: words allowed beyond the speaking rate."""
        if words > WORDS_PER_SPEECH_SECOND * self.speech_seconds() + slack:
            return False
        return last_time is None or last_time <= self.last_speech_end() + TAIL_SECONDS
