"""Voice activity detection with Silero VAD (its weights ship inside the ``silero-vad`` package; the
network runs as ``silero.SileroNetwork`` runs it, many windows a call).

One network is loaded per process and shared; each caller (a ``speech_spans`` call, a ``StreamingVad``)
keeps its own ``SileroState``, so streams on several threads never share recurrent state.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from ..core.errors import InvalidParameterError
from ..core.types import CancelToken
from .silero import SAMPLE_RATE, WINDOW, SileroState, network, timestamps_from_probabilities

SETTLE_WINDOWS = 32  # windows (1 s) of silence a clip is heard after when ``settle`` asks for it


@dataclass
class VadOptions:
    threshold: float = 0.5            # speech probability that starts speech
    min_speech_ms: int = 250          # shorter bursts are dropped
    min_silence_ms: int = 2000        # pauses shorter than this stay inside a span
    speech_pad_ms: int = 400          # kept on each side of a span
    max_speech_s: float = float("inf")  # longer spans are split (at a pause when possible)

    def validate(self) -> "VadOptions":
        if not 0.0 < self.threshold < 1.0:
            raise InvalidParameterError(f"VAD threshold must be between 0 and 1, got {self.threshold}",
                                        "0.5 suits most recordings; raise it for noisy ones")
        if min(self.min_speech_ms, self.min_silence_ms, self.speech_pad_ms) < 0:
            raise InvalidParameterError("VAD durations must not be negative", "use 0 to disable one")
        return self


def _as_audio(audio) -> np.ndarray:
    from .decode import load_audio

    return load_audio(audio)


def speech_probabilities(audio, cancel: CancelToken | None = None, settle: bool = False) -> np.ndarray:
    """Silero's speech probability for each 32 ms window of 16 kHz mono audio (the last window padded
    with silence).  ``settle``: the network first hears ``SETTLE_WINDOWS`` of silence, so its recurrent
    state has settled when the audio begins (a clip shorter than the settling: started cold on speech,
    Silero heard 0.1 s of a 0.31 s "four"; long audio keeps the cold start, as heard after silence breath
    raised by 18 dB reads as speech)."""
    samples, net, state = _as_audio(audio), network(), SileroState()
    if settle:
        net.probabilities(np.zeros(SETTLE_WINDOWS * WINDOW, np.float32), state, cancel)
    return net.probabilities(samples, state, cancel)


def speech_spans(audio, options: VadOptions | None = None,
                 cancel: CancelToken | None = None) -> list[tuple[float, float]]:
    """(start_s, end_s) of each stretch of speech in ``audio`` (anything ``load_audio`` takes)."""
    options = (options or VadOptions()).validate()
    samples = _as_audio(audio)
    probs = speech_probabilities(samples, cancel)
    stamps = timestamps_from_probabilities(
        probs, threshold=options.threshold, min_speech_duration_ms=options.min_speech_ms,
        max_speech_duration_s=options.max_speech_s, min_silence_duration_ms=options.min_silence_ms,
        speech_pad_ms=options.speech_pad_ms, audio_length_samples=samples.size)
    return [(s["start"] / SAMPLE_RATE, s["end"] / SAMPLE_RATE) for s in stamps]


class SpeechTimeline:
    """Speech spans cut out of a recording and joined; maps times in the joined audio back."""

    def __init__(self, spans: list[tuple[float, float]], sample_rate: int = SAMPLE_RATE):
        self.sample_rate = sample_rate
        self._bounds = [(int(round(s * sample_rate)), int(round(e * sample_rate))) for s, e in spans]
        self._bounds = [(s, e) for s, e in self._bounds if e > s]
        self._offsets: list[int] = []  # where each span starts in the joined audio (samples)
        pos = 0
        for s, e in self._bounds:
            self._offsets.append(pos)
            pos += e - s
        self._length = pos

    @property
    def spans(self) -> list[tuple[float, float]]:
        return [(s / self.sample_rate, e / self.sample_rate) for s, e in self._bounds]

    @property
    def speech_duration(self) -> float:
        return self._length / self.sample_rate

    def compact(self, audio: np.ndarray) -> np.ndarray:
        """Only the speech of ``audio``, spans joined end to end."""
        if not self._bounds:
            return np.zeros(0, np.float32)
        return np.concatenate([audio[s:e] for s, e in self._bounds]).astype(np.float32, copy=False)

    def to_original(self, t: float, is_end: bool = False) -> float:
        """Time ``t`` (seconds) of the joined audio on the original timeline.

        At a seam between two spans, an end time stays at the end of the earlier span and a
        start time moves to the start of the later one.
        """
        if not self._bounds:
            return t
        pos = t * self.sample_rate
        offsets = self._offsets
        i = (bisect.bisect_left(offsets, pos) - 1) if is_end else (bisect.bisect_right(offsets, pos) - 1)
        i = min(max(i, 0), len(offsets) - 1)
        start, _ = self._bounds[i]
        return (start + pos - offsets[i]) / self.sample_rate

    def original_spans(self, start: float, end: float) -> list[tuple[float, float]]:
        """The stretches of the original timeline that ``[start, end)`` of the joined audio came from."""
        lo, hi = start * self.sample_rate, end * self.sample_rate
        out = []
        for (s, e), offset in zip(self._bounds, self._offsets):
            a, b = max(lo, offset), min(hi, offset + e - s)
            if b > a:
                out.append(((s + a - offset) / self.sample_rate, (s + b - offset) / self.sample_rate))
        return out

    def remap(self, segments: list) -> list:
        """Copies of Whisper ``Segment``s (words included) moved onto the original timeline."""
        from dataclasses import replace

        def words(ws):
            return None if ws is None else [replace(w, start=self.to_original(w.start),
                                                    end=self.to_original(w.end, is_end=True)) for w in ws]

        return [replace(s, start=self.to_original(s.start), end=self.to_original(s.end, is_end=True),
                        words=words(s.words)) for s in segments]


def cut_to_speech(audio, options: VadOptions | None = None,
                  cancel: CancelToken | None = None) -> tuple[np.ndarray, SpeechTimeline]:
    """The speech of ``audio`` joined together, and the timeline that maps its times back."""
    samples = _as_audio(audio)
    timeline = SpeechTimeline(speech_spans(samples, options, cancel))
    return timeline.compact(samples), timeline


@dataclass
class VadEvent:
    kind: str          # "speech_start" or "speech_end"
    time: float        # seconds since the stream started
    probability: float


class StreamingVad:
    """Live VAD: push 16 kHz float32 frames of any length, get speech start/end events.

    A start fires once ``min_speech_ms`` of windows score ``threshold`` or more; an end fires
    when the probability stayed under ``threshold - 0.15`` for ``min_silence_ms`` (shorter
    pauses are tolerated). Event times are padded by ``speech_pad_ms``.
    """

    def __init__(self, threshold: float = 0.5, min_silence_ms: int = 500, min_speech_ms: int = 64,
                 speech_pad_ms: int = 30):
        VadOptions(threshold, min_speech_ms, min_silence_ms, speech_pad_ms).validate()
        self.threshold = threshold
        self.neg_threshold = max(threshold - 0.15, 0.01)
        self._min_silence = min_silence_ms * SAMPLE_RATE // 1000
        self._min_speech = min_speech_ms * SAMPLE_RATE // 1000
        self._pad = speech_pad_ms * SAMPLE_RATE // 1000
        self._network = network()
        self.reset()

    def reset(self) -> None:
        self._state = SileroState()
        self._pending = np.zeros(0, np.float32)
        self._samples = 0              # samples scored so far
        self._in_speech = False
        self._run_start: int | None = None    # first window of a candidate speech run
        self._silence_start: int | None = None
        self._last_end = 0
        self.last_probability = 0.0

    @property
    def in_speech(self) -> bool:
        return self._in_speech

    @property
    def time(self) -> float:
        """Seconds of audio scored so far."""
        return self._samples / SAMPLE_RATE

    def push(self, frame: np.ndarray) -> list[VadEvent]:
        frame = np.asarray(frame, dtype=np.float32).reshape(-1)
        buf = np.concatenate([self._pending, frame]) if self._pending.size else frame
        full = buf.size // WINDOW * WINDOW
        self._pending = buf[full:].copy()
        if not full:
            return []
        probs = self._network.probabilities(buf[:full], self._state)
        return [event for prob in probs.tolist() if (event := self._step(prob)) is not None]

    def _step(self, prob: float) -> VadEvent | None:
        start = self._samples
        self._samples += WINDOW
        self.last_probability = prob
        if not self._in_speech:
            if prob < self.threshold:
                self._run_start = None
                return None
            if self._run_start is None:
                self._run_start = start
            if self._samples - self._run_start < max(self._min_speech, 1):
                return None
            self._in_speech, self._silence_start = True, None
            t = max(self._run_start - self._pad, self._last_end, 0)
            return VadEvent("speech_start", t / SAMPLE_RATE, prob)
        if prob >= self.threshold:
            self._silence_start = None
            return None
        if prob < self.neg_threshold and self._silence_start is None:
            self._silence_start = start
        if self._silence_start is not None and self._samples - self._silence_start >= self._min_silence:
            return self._end(prob)
        return None

    def _end(self, prob: float) -> VadEvent:
        end = min(self._silence_start if self._silence_start is not None else self._samples,
                  self._samples)
        self._last_end = min(end + self._pad, self._samples)
        self._in_speech, self._run_start, self._silence_start = False, None, None
        return VadEvent("speech_end", self._last_end / SAMPLE_RATE, prob)

    def flush(self) -> list[VadEvent]:
        """End the stream: close an open speech span at the current time."""
        if not self._in_speech:
            return []
        self._silence_start = self._samples
        return [self._end(self.last_probability)]
