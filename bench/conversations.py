"""Clean turn-taking conversations joined from speech-dev clips of different voices, with their truth.

speech-dev has three voices with several clips each: the asterisk prompts (one female voice), the
LibriVox "Sense and Sensibility" reader, and the pocketsphinx "cards" speaker. A conversation
takes clips of two or three of them in a seeded random turn order with pauses between turns; the
reference turn of a clip is where its signal rises above a floor of -35 dB under the clip's loudest
10 ms (the clips carry some leading/trailing silence that is nobody's turn).

Clips come from ``root``: speech-dev of the evaluation sets by default, or any folder with its layout
(the tests pass ``tests/data/speech``, which has the same three voices).

``wide_conversation`` joins many voices instead: two to four speakers of speech-wide (LibriSpeech, AN4,
VCTK; its ``speakers.tsv`` names each file's speaker; FSDD's lone digits are too short for a turn).
Recordings are cut at their pauses into phrases (each its own reference turn); a turn is one phrase
or, for AN4's short answers, phrases of one voice back to back; every recording gets its own gain of a
few dB. One voice of each conversation is a speaker with several recordings (AN4, VCTK), so its level
and room change between turns.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from bench.common import read_audio
from bench.eval_data import eval_path

RATE = 16000
FRAME = 160                     # 10 ms
WIDE_SUBSETS = ("librispeech_train100_resemblyzer", "an4_nemo", "vctk")
PAUSE_S = 0.3                   # a pause this long inside a recording ends a phrase
NOISE_MARGIN_DB = 6.0           # a pause is within this much of the recording's noise level
MIN_PHRASE_S = 0.2              # a shorter loud stretch is a click or a breath, not a phrase
MIN_SPEECH_S = 15.0             # voices are drawn again until their recordings hold this much audio
MIN_TURN_S = 1.5                # shorter phrases are joined to the next one of the same voice
GAIN_DB = 4.0                   # each recording is scaled by up to this many dB up or down
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


def _frame_db(clip: np.ndarray) -> np.ndarray:
    """Level of each 10 ms frame in dB under the clip's loudest frame."""
    frames = clip[: clip.size // FRAME * FRAME].reshape(-1, FRAME)
    rms = np.sqrt(np.mean(frames ** 2, axis=1)) + 1e-9
    return 20 * np.log10(rms / rms.max())


def _voiced_bounds(clip: np.ndarray, floor_db: float = -35.0) -> tuple[int, int]:
    loud = np.flatnonzero(_frame_db(clip) > floor_db)
    return (int(loud[0]) * FRAME, (int(loud[-1]) + 1) * FRAME) if loud.size else (0, clip.size)


def phrases(clip: np.ndarray) -> list[np.ndarray]:
    """The stretches of ``clip`` between its pauses of ``PAUSE_S`` or more. A pause is quiet against the
    recording's own noise (its 10th-percentile frame level), as LibriSpeech readings have audible noise
    between words that a floor under the loudest frame alone would count as speech."""
    db = _frame_db(clip)
    floor = min(max(-35.0, float(np.percentile(db, 10)) + NOISE_MARGIN_DB), -12.0)
    loud = np.flatnonzero(db > floor)
    if not loud.size:
        return []
    breaks = np.flatnonzero(np.diff(loud) * FRAME / RATE >= PAUSE_S)
    firsts, lasts = np.concatenate([[loud[0]], loud[breaks + 1]]), np.concatenate([loud[breaks], [loud[-1]]])
    return [clip[a * FRAME:(b + 1) * FRAME] for a, b in zip(firsts, lasts)
            if (b + 1 - a) * FRAME >= MIN_PHRASE_S * RATE]


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


def wide_speakers(root: Path | None = None) -> dict[str, list[Path]]:
    """Speaker id -> its recordings in speech-wide (``root``: default from the evaluation sets)."""
    folder = root or eval_path("speech-wide")
    out: dict[str, list[Path]] = {}
    for line in (folder / "speakers.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        path, speaker = line.split("\t")
        if path.split("/")[0] in WIDE_SUBSETS:
            out.setdefault(speaker, []).append(folder / path)
    return out


def _voice_turns(recordings: list[Path], rng: random.Random) -> list[list[np.ndarray]]:
    """One voice's turns: its phrases in recording order, each recording at its own gain."""
    turns, current = [], []
    for path in rng.sample(recordings, len(recordings)):
        gain = np.float32(10 ** (rng.uniform(-GAIN_DB, GAIN_DB) / 20))
        for phrase in phrases(read_audio(path)):
            current.append(np.clip(phrase * gain, -1.0, 1.0))
            if sum(p.size for p in current) >= MIN_TURN_S * RATE:
                turns.append(current)
                current = []
    if current:
        turns.append(current)
    return turns


def wide_conversation(seed: int, max_turns: int = 12, root: Path | None = None) -> Conversation:
    """Two to four speech-wide voices taking turns (never one voice twice in a row while another has
    turns left); one of them has several recordings."""
    rng = random.Random(seed)
    speakers = wide_speakers(root)
    several = sorted(s for s, paths in speakers.items() if len(paths) > 1)
    seconds = {s: sum(sf.info(str(p)).duration for p in paths) for s, paths in speakers.items()}
    voices: list[str] = []
    while sum(seconds[v] for v in voices) < MIN_SPEECH_S:  # two AN4 answers are not a conversation
        first = rng.choice(several)
        voices = [first] + rng.sample(sorted(s for s in speakers if s != first), rng.randint(1, 3))
    left = {v: _voice_turns(speakers[v], rng) for v in voices}
    clips, gaps, last = [], [], None
    for _ in range(max_turns):
        if not any(left.values()):
            break
        voice = rng.choice([v for v in voices if left[v] and v != last] or [v for v in voices if left[v]])
        for n, phrase in enumerate(left[voice].pop(0)):
            clips.append((voice, phrase))
            gaps.append(rng.uniform(0.3, 1.0) if n == 0 else rng.uniform(0.15, 0.3))
        last = voice
    gaps[0] = 0.5
    return join_turns(clips, gaps, f"wide-{seed}-{len(voices)}v")


def wide_set(seeds=range(6)) -> list[Conversation]:
    """Conversations of speech-wide voices, for the benchmark."""
    return [wide_conversation(seed) for seed in seeds]
