"""Shared helpers for benchmarks and accuracy tests: the speech dev set, normalised WER, timing.

Figures are only meaningful as ratios against a peer timed in the same run, so ``interleaved``
alternates engines per repetition and everything reports medians.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from bench.eval_data import eval_path, eval_root

# where speech-dev is expected (bench/eval_data.py says where the sets live); readers check it via eval_path
SPEECH_DEV = eval_root() / "speech-dev"
SAMPLE_RATE = 16000


@dataclass(frozen=True)
class Utterance:
    path: Path
    reference: str


def load_speech_dev(root: Path | None = None) -> list[Utterance]:
    """Every utterance of speech-dev (or of a folder with its layout, such as tests/data/speech), sorted by
    path (the order that slices are defined on). Raises ``EvalDataMissing`` when speech-dev is absent."""
    root = root or eval_path("speech-dev")
    tsv = root / "transcripts.tsv"
    if not tsv.is_file():
        raise FileNotFoundError(f"{tsv} not found")
    rows = []
    for line in tsv.read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            rel, ref = line.split("\t", 1)
            rows.append(Utterance(root / rel, ref.strip()))
    return sorted(rows, key=lambda u: str(u.path))


def in_order(utterances: list[Utterance], order: int) -> list[Utterance]:
    """``utterances`` as joined into a long file: as they are for order 0, else shuffled with seed ``order``
    (files that thresholds were not chosen on)."""
    joined = list(utterances)
    if order:
        random.Random(order).shuffle(joined)
    return joined


def evenly_spaced(items: list, count: int) -> list:
    if count >= len(items):
        return list(items)
    return [items[(i * len(items)) // count] for i in range(count)]


def dev_slice(count: int = 60, root: Path | None = None) -> list[Utterance]:
    """A fixed, deterministic slice mixing both subsets in proportion, with at least a few of the
    smaller (LibriVox/commands) one so longer natural sentences are always covered."""
    rows = load_speech_dev(root)
    groups: dict[str, list[Utterance]] = {}
    for u in rows:
        groups.setdefault(u.path.parent.name, []).append(u)
    small = min(groups, key=lambda k: len(groups[k]))
    n_small = min(len(groups[small]), max(6, round(count * len(groups[small]) / len(rows))))
    picked = evenly_spaced(groups[small], n_small)
    rest = [u for k, g in sorted(groups.items()) if k != small for u in g]
    picked += evenly_spaced(rest, count - n_small)
    return sorted(picked, key=lambda u: str(u.path))


def read_audio(path: Path) -> np.ndarray:
    import soundfile as sf

    audio, sr = sf.read(str(path), dtype="float32", always_2d=True)
    audio = audio.mean(axis=1)
    if sr != SAMPLE_RATE:
        import soxr

        audio = soxr.resample(audio, sr, SAMPLE_RATE).astype(np.float32)
    return np.ascontiguousarray(audio, dtype=np.float32)


def long_audio(utterances: Iterable[Utterance], seconds: float = 300.0, gap: float = 0.5
               ) -> tuple[np.ndarray, str]:
    """Join clips (with short silences) until ``seconds`` of audio; returns audio and joined reference."""
    parts, refs, total = [], [], 0
    silence = np.zeros(int(gap * SAMPLE_RATE), dtype=np.float32)
    for u in utterances:
        a = read_audio(u.path)
        parts += [a, silence]
        refs.append(u.reference)
        total += len(a) + len(silence)
        if total >= seconds * SAMPLE_RATE:
            break
    return np.concatenate(parts), " ".join(refs)


_normalizer = None


def normalize(text: str) -> str:
    global _normalizer
    if _normalizer is None:
        from whisper_normalizer.english import EnglishTextNormalizer

        _normalizer = EnglishTextNormalizer()
    return _normalizer(text)


def corpus_wer(references: list[str], hypotheses: list[str]) -> float:
    """Corpus WER in percent, Whisper's English normaliser on both sides; empty references skipped."""
    import jiwer

    pairs = [(normalize(r), normalize(h)) for r, h in zip(references, hypotheses, strict=True)]
    pairs = [(r, h) for r, h in pairs if r.strip()]
    return 100.0 * jiwer.wer([r for r, _ in pairs], [h for _, h in pairs])


def fallback_windows(segments) -> int:
    """Windows decoded above temperature 0 (the fallback ladder), from segments that carry their window's
    ``temperature``, ``avg_logprob`` and ``compression_ratio`` (ours and faster-whisper's alike): the
    segments of one window share those figures."""
    return len({(s.avg_logprob, s.compression_ratio) for s in segments if s.temperature > 0})


def empty_outputs(utts: list[Utterance], hypotheses: list[str]) -> int:
    """Utterances whose reference has words and whose transcript, normalised, has none."""
    return sum(1 for u, h in zip(utts, hypotheses, strict=True) if normalize(u.reference).strip()
               and not normalize(h).strip())


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def interleaved(engines: dict[str, Callable[[], object]], reps: int,
                on_result: Callable[[str, int, float, object], None] | None = None
                ) -> dict[str, list[float]]:
    """Run every engine once per repetition, rotating the start so no engine always goes first
    (cache warmth and thermal state are shared fairly); returns wall seconds per engine."""
    names = list(engines)
    times: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(reps):
        order = names[rep % len(names):] + names[:rep % len(names)]
        for name in order:
            t0 = time.perf_counter()
            out = engines[name]()
            dt = time.perf_counter() - t0
            times[name].append(dt)
            if on_result is not None:
                on_result(name, rep, dt, out)
    return times


def format_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).ljust(w) for x, w in zip(r, widths))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def subset_of(utt: Utterance) -> str:
    return utt.path.parent.name


def wer_by_subset(utts: list[Utterance], hypotheses: list[str]) -> dict[str, float]:
    """Corpus WER per subset, and over everything as "all"."""
    groups: dict[str, list[int]] = {}
    for i, u in enumerate(utts):
        groups.setdefault(subset_of(u), []).append(i)
    out = {name: corpus_wer([utts[i].reference for i in idx], [hypotheses[i] for i in idx])
           for name, idx in sorted(groups.items())}
    out["all"] = corpus_wer([u.reference for u in utts], hypotheses)
    return out
