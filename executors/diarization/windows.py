"""Voice embeddings of a recording's speech: 1.6 s windows slid over the speech joined end to end.

Silences are cut out first (the VAD's spans, joined by ``SpeechTimeline``), so no window is mostly
silence and a short turn between two pauses still fills a window with speech. Each window speaks
for the ``step`` of audio around its centre.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..audio.vad import SpeechTimeline
from ..core.types import CancelToken, Progress
from .encoder import HOP, SAMPLE_RATE, WINDOW_FRAMES, SpeakerEncoder

TARGET_DBFS = -30.0  # the level the encoder's training audio was normalised to


@dataclass
class SpeechWindows:
    timeline: SpeechTimeline      # maps joined-speech times back to the recording
    centers: np.ndarray           # [n] window centres, seconds of joined speech
    embeddings: np.ndarray        # [n, 256] unit vectors
    step: float                   # seconds each window speaks for


def _gain(speech: np.ndarray) -> float:
    """Raise quiet speech to the encoder's training level (the mel input is linear power)."""
    rms = float(np.sqrt(np.mean(np.square(speech, dtype=np.float64)))) if speech.size else 0.0
    if rms <= 1e-6:
        return 1.0
    return max(1.0, 10 ** ((TARGET_DBFS - 20 * np.log10(rms)) / 20))


def window_starts(n_frames: int, step_frames: int) -> np.ndarray:
    """First frame of each window: every ``step_frames``, the last one flush with the end."""
    if n_frames <= WINDOW_FRAMES:
        return np.zeros(1, np.int64)
    starts = np.arange(0, n_frames - WINDOW_FRAMES + 1, step_frames)
    if starts[-1] != n_frames - WINDOW_FRAMES:
        starts = np.append(starts, n_frames - WINDOW_FRAMES)
    return starts


def embed_speech(samples: np.ndarray, spans: list[tuple[float, float]], encoder: SpeakerEncoder,
                 step_s: float, cancel: CancelToken | None = None,
                 on_progress: Callable[[Progress], None] | None = None) -> SpeechWindows:
    timeline = SpeechTimeline(spans)
    speech = timeline.compact(samples)
    speech = speech * np.float32(_gain(speech))
    mel = encoder.mel_frames(speech)
    n_frames = max(1, speech.size // HOP)
    mel = mel[:n_frames]
    if len(mel) < WINDOW_FRAMES:  # under 1.6 s of speech in all: one zero-padded window
        mel = np.pad(mel, ((0, WINDOW_FRAMES - len(mel)), (0, 0)))
    step_frames = max(1, int(round(step_s * SAMPLE_RATE / HOP)))
    starts = window_starts(len(mel), step_frames)
    windows = np.stack([mel[s:s + WINDOW_FRAMES] for s in starts]).astype(np.float32, copy=False)
    parts, chunk = [], 64
    for i in range(0, len(windows), chunk):
        parts.append(encoder.embed(windows[i:i + chunk], cancel))
        if on_progress is not None:
            on_progress(Progress(min(i + chunk, len(windows)), len(windows), "windows", "telling voices apart"))
    embeddings = np.concatenate(parts)
    centers = (starts + WINDOW_FRAMES / 2) * HOP / SAMPLE_RATE
    centers = np.minimum(centers, timeline.speech_duration)
    return SpeechWindows(timeline, centers, embeddings, step_frames * HOP / SAMPLE_RATE)
