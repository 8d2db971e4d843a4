"""One options object for diarization, and its results: speaker turns on the recording's timeline."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..audio.vad import VadOptions
from .errors import SpeakerCountError

MAX_AUTO_SPEAKERS = 20


def _diarization_vad() -> VadOptions:
    # Silero backs up the segmentation network, which misses some soft word onsets and endings;
    # a little padding only, as every frame it adds is given to a speaker.
    return VadOptions(threshold=0.5, min_speech_ms=200, min_silence_ms=500, speech_pad_ms=60)


@dataclass
class DiarizationOptions:
    num_speakers: int | None = None        # exact count when known
    min_speakers: int = 1
    max_speakers: int | None = None        # None = up to MAX_AUTO_SPEAKERS
    # Cosine distance (1 - similarity) at which two groups of voice prints stop being merged
    # (automatic count). Chosen on joined clean conversations (bench/diarize.py), then checked on meetings.
    threshold: float = 0.5
    step_s: float = 5.0                    # hop between the 10 s segmentation chunks
    # A "speaker" with less clean speech is folded into the nearest one. 0.5 s (with the merging of alike
    # groups in clustering.py) was chosen on the speech-dev conversations and meetings of bench/diarize.py;
    # 1.0 s folded people who say only a few words into someone else.
    min_speaker_s: float = 0.5
    min_gap_s: float = 0.1                 # shorter pauses inside one speaker's speech are closed
    vad: VadOptions = field(default_factory=_diarization_vad)

    def validate(self) -> "DiarizationOptions":
        n, lo, hi = self.num_speakers, self.min_speakers, self.max_speakers
        if n is not None and n < 1:
            raise SpeakerCountError(f"num_speakers must be at least 1, got {n}")
        if lo < 1:
            raise SpeakerCountError(f"min_speakers must be at least 1, got {lo}")
        if hi is not None and hi < lo:
            raise SpeakerCountError(f"max_speakers ({hi}) is below min_speakers ({lo})")
        if n is not None and (n < lo or (hi is not None and n > hi)):
            raise SpeakerCountError(f"num_speakers ({n}) lies outside min_speakers..max_speakers ({lo}..{hi})")
        if not 0.0 < self.threshold < 2.0:
            raise SpeakerCountError(f"threshold must be a cosine distance between 0 and 2, got {self.threshold}")
        if self.min_speaker_s < 0 or self.min_gap_s < 0:
            raise SpeakerCountError("min_speaker_s and min_gap_s must not be negative")
        if not 0.5 <= self.step_s <= 10.0:
            raise SpeakerCountError(f"step_s must be between 0.5 and 10 seconds, got {self.step_s}")
        self.vad.validate()
        return self

    @property
    def count_range(self) -> tuple[int, int]:
        """(fewest, most) speakers the clustering may return."""
        if self.num_speakers is not None:
            return self.num_speakers, self.num_speakers
        return self.min_speakers, self.max_speakers or max(MAX_AUTO_SPEAKERS, self.min_speakers)


def speaker_label(index: int) -> str:
    """Stable label of the ``index``-th speaker to appear (``SPEAKER_00``, as in RTTM tools)."""
    return f"SPEAKER_{index:02d}"


@dataclass
class SpeakerTurn:
    start: float
    end: float
    speaker: str

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass
class Diarization:
    """Who spoke when. Turns are sorted by start; overlapping speech gives overlapping turns."""

    turns: list[SpeakerTurn]
    duration: float
    speech: list[tuple[float, float]] = field(default_factory=list)  # where anyone talks

    @property
    def speakers(self) -> list[str]:
        """Labels in order of first appearance."""
        seen: dict[str, None] = {}
        for turn in self.turns:
            seen.setdefault(turn.speaker, None)
        return list(seen)

    def speaker_time(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for turn in self.turns:
            totals[turn.speaker] = totals.get(turn.speaker, 0.0) + turn.duration
        return totals

    def to_dict(self) -> dict:
        return {"duration": self.duration, "speakers": self.speakers,
                "turns": [{"start": round(t.start, 3), "end": round(t.end, 3), "speaker": t.speaker}
                          for t in self.turns]}
