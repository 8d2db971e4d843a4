"""Results of a transcription: plain dataclasses that serialise to OpenAI's verbose_json shape."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Word:
    start: float
    end: float
    word: str
    probability: float


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

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.segments).strip()

    def to_dict(self) -> dict:
        return {"task": self.task, "language": self.language,
                "language_probability": self.language_probability, "duration": self.duration,
                "text": self.text, "model_id": self.model_id,
                "segments": [s.to_dict() for s in self.segments]}
