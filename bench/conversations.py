"""Clean turn-taking conversations joined from speech-dev clips of different voices, with their truth.

speech-dev has three voices with several clips each: the asterisk prompts (one female voice), the
LibriVox "Sense and Sensibility" reader, and the pocketsphinx "cards" speaker. A conversation
takes clips of two or three of them in a seeded random turn order with pauses between turns; the
reference turn of a clip is where its signal rises above a floor of -35 dB under the clip's loudest
10 ms (the clips carry some leading/trailing silence that is nobody's turn).

Clips come from ``root``: speech-dev of the evaluation sets by default, or any folder with its layout
(the tests pass ``tests/data/speech``, which has the same three voices).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.common import read_audio
from bench.eval_data import eval_path

RATE = 16000
VOICES = {
    "asterisk": "asterisk/*.flac",
    "librivox": "pocketsphinx/librivox_*.flac",
    "cards": "pocketsphinx/cards_*.flac",
}


@dataclass
class Conversation:
    name: str
    audio: np.ndarray                           # 16 kHz float32
    turns: list[tuple[float, float, str]]       # reference (start, end, voice)

    @property
    def duration(self) -> float:
        return self.audio.size / RATE

    @property
    def voices(self) -> set[str]:
        return {t[2] for t in self.turns}


def voice_clips(voice: str, root: Path | None = None) -> list[Path]:
    """The clips of one voice under ``root`` (default: speech-dev; ``EvalDataMissing`` when absent)."""
    folder = root or eval_path("speech-dev")
    clips = sorted(folder.glob(VOICES[voice]))
    if not clips:
        raise FileNotFoundError(f"no {voice} clips ({VOICES[voice]}) under {folder}")
    return clips


def _voiced_bounds(clip: np.ndarray, floor_db: float = -35.0) -> tuple[int, int]:
    frames = clip[: clip.size // 160 * 160].reshape(-1, 160)
    rms = np.sqrt(np.mean(frames ** 2, axis=1)) + 1e-9
    loud = np.flatnonzero(20 * np.log10(rms / rms.max()) > floor_db)
    return (int(loud[0]) * 160, (int(loud[-1]) + 1) * 160) if loud.size else (0, clip.size)


def join_turns(clips: list[tuple[str, np.ndarray]], gaps: list[float], name: str) -> Conversation:
    """Clips in order with ``gaps[i]`` seconds of silence before clip i (silence trimmed first)."""
    parts, turns, pos = [], [], 0
    for (voice, clip), gap in zip(clips, gaps):
        a, b = _voiced_bounds(clip)
        silence = np.zeros(int(gap * RATE), np.float32)
        parts += [silence, clip[a:b]]
        pos += silence.size
        turns.append((pos / RATE, (pos + b - a) / RATE, voice))
        pos += b - a
    parts.append(np.zeros(int(0.5 * RATE), np.float32))
    return Conversation(name, np.concatenate(parts).astype(np.float32), turns)


def conversation(voices: list[str], n_turns: int, seed: int, gap_range=(0.3, 1.0),
                 root: Path | None = None) -> Conversation:
    """``n_turns`` turns, never the same voice twice in a row, clips drawn without repeats."""
    rng = random.Random(seed)
    clips_of = {v: voice_clips(v, root) for v in voices}
    pools = {v: rng.sample(clips_of[v], len(clips_of[v])) for v in voices}
    clips, last = [], None
    for _ in range(n_turns):
        voice = rng.choice([v for v in voices if v != last and pools[v]] or voices)
        last = voice
        clips.append((voice, read_audio(pools[voice].pop() if pools[voice] else rng.choice(clips_of[voice]))))
    gaps = [0.5] + [rng.uniform(*gap_range) for _ in clips[1:]]
    return join_turns(clips, gaps, f"{'+'.join(voices)}-{seed}")


def single_voice(voice: str, n_clips: int, seed: int, root: Path | None = None) -> Conversation:
    return conversation([voice], n_turns=n_clips, seed=seed, root=root)


def conversation_set(seeds=range(6)) -> list[Conversation]:
    """Three-voice and two-voice conversations of 12 turns each, for the benchmark."""
    pairs = [["asterisk", "librivox", "cards"], ["asterisk", "librivox"], ["asterisk", "cards"],
             ["librivox", "cards"]]
    return [conversation(voices, 12, seed) for seed in seeds for voices in pairs]
