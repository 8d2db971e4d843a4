"""From a voice label per window to speaker turns on the recording's timeline."""

from __future__ import annotations

import numpy as np

from .clustering import centroids
from .options import SpeakerTurn, speaker_label
from .windows import SpeechWindows


def _runs(labels: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) index ranges of equal consecutive labels."""
    if not len(labels):
        return []
    cuts = np.flatnonzero(np.diff(labels)) + 1
    bounds = [0, *cuts.tolist(), len(labels)]
    return list(zip(bounds[:-1], bounds[1:]))


def smooth_short_runs(labels: np.ndarray, embeddings: np.ndarray, min_windows: int) -> np.ndarray:
    """Give runs shorter than ``min_windows`` to the neighbouring voice they sound closest to.

    A one-window blip between two stretches of the same voice is more often a noisy embedding than
    a real turn; the shortest runs go first so that longer ones absorb them.
    """
    labels = labels.copy()
    if min_windows <= 1:
        return labels
    cents = centroids(embeddings, labels)
    while True:
        runs = [r for r in _runs(labels) if r[1] - r[0] < min_windows]
        if not runs or len(_runs(labels)) == 1:
            return labels
        start, end = min(runs, key=lambda r: r[1] - r[0])
        neighbours = {int(labels[i]) for i in (start - 1, end) if 0 <= i < len(labels)}
        mean = embeddings[start:end].mean(0)
        labels[start:end] = max(neighbours, key=lambda k: float(cents[k] @ mean))


def window_turns(windows: SpeechWindows, labels: np.ndarray) -> list[SpeakerTurn]:
    """Turns on the original timeline; a change of voice falls midway between two window centres."""
    turns: list[SpeakerTurn] = []
    total = windows.timeline.speech_duration
    centers = windows.centers
    for start, end in _runs(labels):
        a = 0.0 if start == 0 else (centers[start - 1] + centers[start]) / 2
        b = total if end == len(labels) else (centers[end - 1] + centers[end]) / 2
        for s, e in windows.timeline.original_spans(a, b):
            turns.append(SpeakerTurn(float(s), float(e), speaker_label(int(labels[start]))))
    return merge_touching(turns)


def merge_touching(turns: list[SpeakerTurn], gap: float = 1e-3) -> list[SpeakerTurn]:
    """One turn for consecutive turns of the same speaker that touch."""
    out: list[SpeakerTurn] = []
    for turn in sorted(turns, key=lambda t: (t.start, t.end)):
        last = next((t for t in reversed(out) if t.speaker == turn.speaker), None)
        if last is not None and turn.start - last.end <= gap and last is out[-1]:
            last.end = max(last.end, turn.end)
        else:
            out.append(SpeakerTurn(turn.start, turn.end, turn.speaker))
    return out
