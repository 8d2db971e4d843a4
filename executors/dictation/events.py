"""What the dictation engine reports, and its options and end-of-session summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import InvalidParameterError


@dataclass(frozen=True)
class Tentative:
    text: str                  # the words after the committed ones; may change or vanish


@dataclass(frozen=True)
class Committed:
    text: str                  # final: never changes once reported
    audio_start: float         # seconds since the stream started
    audio_end: float
    lag: float = 0.0           # seconds of audio received after ``audio_end`` when it was committed


@dataclass(frozen=True)
class UtteranceEnd:
    latency: float             # wall seconds from the end of speech to the final commit
    text: str = ""             # the whole utterance
    audio_start: float = 0.0
    audio_end: float = 0.0


@dataclass(frozen=True)
class Level:
    rms: float                 # input level of the last ``level_interval_s`` (0..1, linear)


@dataclass(frozen=True)
class Overrun:
    dropped_seconds: float     # audio lost because decoding could not keep up with capture


Event = Tentative | Committed | UtteranceEnd | Level | Overrun


@dataclass
class DictationOptions:
    language: str | None = None       # None: "en" for English-only models, else detected per utterance
    task: str = "transcribe"          # or "translate" (into English; multilingual models)
    step_s: float = 1.0               # re-transcribe the utterance after this much new audio (0.5
                                      # shows words sooner; on the dev set it commits more early errors)
    vad_threshold: float = 0.5
    pause_commit_ms: int = 250        # a pause this long commits everything said before it
    final_pass_ms: int = 100          # the final pass over the speech starts this far into a pause, while
                                      # the pause is still being confirmed (its text waits for
                                      # pause_commit_ms and is dropped if the speaker goes on); it hears
                                      # this much of the pause, for soft endings the VAD cuts early
    end_silence_ms: int = 700         # a pause this long ends the utterance
    min_speech_ms: int = 64
    commit_hold_s: float = 0.6        # a step pass commits a word only with this much audio after it
                                      # (words heard at the very end of a buffer agree wrongly: "dile")
    min_commit_buffer_s: float = 0.0  # ... and only from a buffer this long
    preroll_s: float = 1.0            # audio kept before the VAD's speech start (never audio already
                                      # committed): the VAD opens late on soft onsets, and tiny.en
                                      # misreads short clips that begin right at the speech ("clubs")
    trim_after_s: float = 6.0         # then cut the buffer at a committed segment end
    max_buffer_s: float = 15.0        # ... and at the last committed word beyond this
    prompt_previous: bool = False     # condition on earlier utterances too (tiny.en then drops or
                                      # echoes short ones); committed text trimmed from the buffer
                                      # always conditions the rest of its utterance
    context_s: float = 10.0           # committed audio (its text forced) heard before each pass; 0: none
    short_context: bool = True        # passes encode only the audio there is (else every pass a padded 30 s window)
    final_window_s: float = 20.0      # the final pass at a pause encodes at least this much (30: the
                                      # padded full window). Step passes' 8 s lose final words on the
                                      # dev set; 20 s costs 0.3 WER points there against 30 s and takes
                                      # 0.6 of its time (see bench/dictation.py)
    min_context_s: float = 8.0        # shorter contexts loop on short audio (see bench/dictation.py)
    context_pad_s: float = 1.0        # padding after the audio in the short context
    tokens_per_second: float = 8.0    # a pass stops after 8 + this * seconds tokens (no loops)
    ring_seconds: float = 20.0        # capture backlog held before audio is dropped (Overrun)
    level_interval_s: float = 0.05
    stall_s: float = 3.0              # a live device silent this long has vanished
    record_path: Path | None = None   # write the 16 kHz session audio here (FLAC/WAV by suffix)

    def validate(self) -> DictationOptions:
        if self.step_s <= 0 or self.ring_seconds <= 0 or self.level_interval_s <= 0:
            raise InvalidParameterError("step_s, ring_seconds and level_interval_s must be positive",
                                        "a step of 0.5–1 s suits live dictation")
        if not 0 < self.pause_commit_ms <= self.end_silence_ms:
            raise InvalidParameterError("pause_commit_ms must be positive and at most end_silence_ms",
                                        "e.g. 250 and 700")
        if not 0 <= self.final_pass_ms <= self.pause_commit_ms:
            raise InvalidParameterError("final_pass_ms must lie between 0 and pause_commit_ms",
                                        "e.g. 100 with a pause_commit_ms of 250")
        if not self.min_context_s <= self.final_window_s <= 30:
            raise InvalidParameterError("final_window_s must lie between min_context_s and 30 seconds",
                                        "20 is the default; 30 encodes the padded full window")
        if not 0 < self.trim_after_s <= self.max_buffer_s <= 28:
            raise InvalidParameterError("need 0 < trim_after_s <= max_buffer_s <= 28 seconds",
                                        "the buffer must fit one 30 s Whisper window")
        if not 0 <= self.context_s <= 28 - self.max_buffer_s:
            raise InvalidParameterError("context_s plus max_buffer_s must stay within 28 seconds",
                                        "the context and the buffer share one 30 s Whisper window")
        return self


@dataclass
class DictationSummary:
    text: str = ""
    utterances: int = 0
    latencies: list[float] = field(default_factory=list)
    lags: list[float] = field(default_factory=list)
    audio_seconds: float = 0.0
    compute_seconds: float = 0.0       # time spent in encoder + decoder passes
    wall_seconds: float = 0.0
    passes: int = 0
    dropped_seconds: float = 0.0
    max_buffer_seconds: float = 0.0
    record_path: Path | None = None

    @property
    def rtf(self) -> float:
        """Compute time per second of audio (below 1 keeps up with live speech)."""
        return self.compute_seconds / self.audio_seconds if self.audio_seconds else 0.0

    def to_dict(self) -> dict:
        import numpy as np

        def pct(values, q):
            return round(float(np.percentile(values, q)) * 1000, 1) if values else None

        return {"type": "summary", "utterances": self.utterances, "latency_p50_ms": pct(self.latencies, 50),
                "latency_p95_ms": pct(self.latencies, 95), "lag_p50_ms": pct(self.lags, 50),
                "rtf": round(self.rtf, 4), "audio_seconds": round(self.audio_seconds, 2),
                "passes": self.passes, "dropped_seconds": round(self.dropped_seconds, 3),
                "record_path": str(self.record_path) if self.record_path else None}


def session_transcript(utterances: list[tuple[float, float, str]], duration: float, language: str = "en",
                       model_id: str = ""):
    """A dictation session as a ``Transcript``: one segment per (start, end, text) utterance."""
    from ..transcripts.results import Segment, Transcript

    segments = [Segment(i, s, e, " " + t.strip()) for i, (s, e, t) in enumerate(utterances)]
    return Transcript(language, 1.0, duration, segments, model_id=model_id)


def apply_text_edits(utterances: list[tuple[float, float, str]], text: str) -> list[tuple[float, float, str]]:
    """The session's utterances with the user's corrected ``text`` (one line per utterance).

    With as many lines as utterances, each keeps its times and takes its line; after lines were
    joined or split, the lines share the session's span in proportion to their length."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines or not utterances:
        return []
    if len(lines) == len(utterances):
        return [(start, end, line) for (start, end, _), line in zip(utterances, lines)]
    first, last = utterances[0][0], utterances[-1][1]
    total = sum(len(line) for line in lines)
    out, start = [], first
    for line in lines:
        end = start + (last - first) * len(line) / total
        out.append((start, end, line))
        start = end
    return out


def apply_session_edits(sessions: list[list[tuple[float, float, str]]], text: str) -> list[list[tuple[float, float, str]]]:
    """Each session's utterances with the user's corrected ``text`` of them all (sessions in order, one
    line per utterance): a session takes as many lines as it had utterances (the last one the rest)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    out, at = [], 0
    for i, utterances in enumerate(sessions):
        take = len(lines) - at if i == len(sessions) - 1 else min(len(utterances), len(lines) - at)
        out.append(apply_text_edits(utterances, "\n".join(lines[at:at + take])))
        at += take
    return out
