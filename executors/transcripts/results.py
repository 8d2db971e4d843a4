"""Results of a transcription: plain dataclasses that serialise to OpenAI's verbose_json shape.

Speakers: after diarization each segment (and word) carries a stable ``speaker`` label such as
``SPEAKER_00``; ``Transcript.speaker_names`` holds the names a user gave to labels, and
``speaker_name(label)`` is what every view and export shows ("Speaker 1" until renamed).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

_DEFAULT_LABEL = re.compile(r"SPEAKER_(\d+)")


def default_speaker_name(label: str) -> str:
    """``SPEAKER_00`` -> ``Speaker 1``; any other label is shown as it is."""
    match = _DEFAULT_LABEL.fullmatch(label)
    return f"Speaker {int(match.group(1)) + 1}" if match else label


@dataclass
class Word:
    start: float
    end: float
    word: str
    probability: float
    speaker: str | None = None


@dataclass
class Segment:
    id: int
    start: float
    end: float
    text: str
    tokens: list[int] = field(default_factory=list)
    avg_logprob: float = 0.0
    compression_ratio: float = 0.0
    no_speech_prob: float = 0.0
    temperature: float = 0.0
    words: list[Word] | None = None
    speaker: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Transcript:
    language: str
    language_probability: float
    duration: float
    segments: list[Segment] = field(default_factory=list)
    task: str = "transcribe"
    model_id: str = ""
    speaker_names: dict[str, str] = field(default_factory=dict)  # label -> name given by the user

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.segments).strip()

    @property
    def speakers(self) -> list[str]:
        """Speaker labels in order of first appearance (empty when not diarized)."""
        seen: dict[str, None] = {}
        for seg in self.segments:
            if seg.speaker:
                seen.setdefault(seg.speaker, None)
        return list(seen)

    def speaker_name(self, label: str | None) -> str:
        if not label:
            return ""
        return self.speaker_names.get(label) or default_speaker_name(label)

    def to_dict(self) -> dict:
        return {"task": self.task, "language": self.language,
                "language_probability": self.language_probability, "duration": self.duration,
                "text": self.text, "model_id": self.model_id,
                "segments": [s.to_dict() for s in self.segments], "speaker_names": dict(self.speaker_names)}
