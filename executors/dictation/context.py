"""What a pass hears before its buffer: the last few seconds of audio whose text is already final.

Decoded alone, a short utterance loses words ("five" after "five", names, "ill-disposed"): the model
has heard nothing before it.  Offline transcription decodes each 30 s window with the speech before
it, so every pass gets the same here: the recent committed audio goes in front of the buffer and
its text, with its timestamps, is forced as the start of the transcript (``decode_batch``'s
``prefix``, one prefill, no extra decoding steps).  Whisper then continues from where that text ends.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

RATE = 16000


@dataclass(frozen=True)
class PassContext:
    audio: np.ndarray                              # 16 kHz audio right before the buffer
    spans: tuple[tuple[float, float, str], ...]    # (start, end, text) inside ``audio``, oldest first

    @property
    def seconds(self) -> float:
        return len(self.audio) / RATE


class RecentSpeech:
    """The stream's last seconds of audio and the committed text spans in them.

    ``push`` is fed every 16 kHz sample of the stream in order; ``commit`` records a span of stream
    samples whose text became final and left the utterance buffer.  Memory is fixed: one circular
    array of ``history_s`` seconds (stream sample i lives at i mod its size) and a short deque of
    spans; a push writes only its own samples, as it runs for every 32 ms VAD window.
    """

    def __init__(self, max_context_s: float, history_s: float):
        self.max_context = int(max_context_s * RATE)
        self._audio = np.zeros(int(history_s * RATE), np.float32)
        self._end = 0  # stream index one past the newest sample held
        self._spans: collections.deque[tuple[int, int, str]] = collections.deque(maxlen=64)

    def push(self, samples: np.ndarray) -> None:
        size = len(self._audio)
        kept = samples[-size:]
        at = (self._end + len(samples) - len(kept)) % size
        head = min(len(kept), size - at)
        self._audio[at:at + head] = kept[:head]
        self._audio[:len(kept) - head] = kept[head:]
        self._end += len(samples)

    def commit(self, start: int, end: int, text: str) -> None:
        text = text.strip()
        if text and end > start:
            self._spans.append((start, end, text))

    def clear(self) -> None:
        self._spans.clear()

    def before(self, buffer_start: int) -> PassContext | None:
        """The newest spans that end by ``buffer_start`` and begin within ``max_context_s`` of it,
        with the audio from the first one's start up to ``buffer_start``; None when there are none."""
        oldest = max(buffer_start - self.max_context, self._end - len(self._audio))
        chosen = []
        for start, end, text in reversed(self._spans):
            if end > buffer_start:
                continue
            if start < oldest:
                break
            chosen.append((start, end, text))
        if not chosen:
            return None
        chosen.reverse()
        first = chosen[0][0]
        audio = self._audio.take(np.arange(first, buffer_start) % len(self._audio))
        spans = tuple(((s - first) / RATE, (e - first) / RATE, t) for s, e, t in chosen)
        return PassContext(audio, spans)
