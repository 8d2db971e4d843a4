"""From local speakers and their voices back to speaker turns on the recording's timeline.

Each chunk votes for the voices its local speakers were given, frame by frame; the votes are
averaged over the chunks covering a frame. In every frame the ``count`` voices with the most votes
(``count`` = how many people the segmentation hears there) are talking, so overlapping speech gives
overlapping turns. Gaps shorter than ``min_gap_s`` inside one speaker's speech are closed.
"""

from __future__ import annotations

import numpy as np

from .activity import CHUNK_FRAMES, ChunkActivity, frame_spans, frame_start
from .options import SpeakerTurn, speaker_label
from .voiceprints import VoicePrints


def voice_activity(activity: ChunkActivity, prints: VoicePrints, voice_of: np.ndarray, n_voices: int) -> np.ndarray:
    """[frames, voices] bool: who talks in each frame of the recording."""
    total = int(activity.offsets[-1]) + CHUNK_FRAMES
    votes, cover = np.zeros((total, n_voices), np.float32), np.zeros(total, np.float32)
    for offset in activity.offsets:
        cover[offset:offset + CHUNK_FRAMES] += 1
    for chunk, k, (first, end), voice in zip(prints.chunk, prints.speaker, prints.frames, voice_of):
        offset = activity.offsets[chunk]
        span = slice(offset + first, offset + end)
        votes[span, voice] = np.maximum(votes[span, voice], activity.local[chunk, first:end, k])
    votes = (votes / np.maximum(cover, 1)[:, None])[:activity.n_frames]
    ranked = np.argsort(-votes, axis=1, kind="stable")
    talking = np.zeros_like(votes, bool)
    for rank in range(min(n_voices, int(activity.count.max(initial=0)))):
        rows = np.flatnonzero(activity.count > rank)
        chosen = ranked[rows, rank]
        keep = votes[rows, chosen] > 0
        talking[rows[keep], chosen[keep]] = True
    return talking


def _close_gaps(spans: list[tuple[float, float]], min_gap_s: float) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for start, end in spans:
        if out and start - out[-1][1] < min_gap_s:
            out[-1][1] = end
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


def speaker_turns(talking: np.ndarray, duration: float, min_gap_s: float) -> list[SpeakerTurn]:
    """Turns sorted by start, speakers numbered in order of first appearance."""
    per_voice = [_close_gaps(frame_spans(talking[:, v], duration), min_gap_s) for v in range(talking.shape[1])]
    order = sorted((v for v in range(len(per_voice)) if per_voice[v]), key=lambda v: per_voice[v][0][0])
    turns = [SpeakerTurn(s, e, speaker_label(n)) for n, v in enumerate(order) for s, e in per_voice[v]]
    return sorted(turns, key=lambda t: (t.start, t.end))


def fill_heard_speech(talking: np.ndarray, heard: np.ndarray) -> np.ndarray:
    """Give frames where speech is ``heard`` but nobody talks to the speaker of the nearest frame that has one
    (to one speaker when nobody talks anywhere: someone was heard, and words must have a speaker)."""
    quiet = heard & ~talking.any(1)
    voiced = np.flatnonzero(talking.any(1))
    if not quiet.any():
        return talking
    if not len(voiced):
        return heard[:, None].copy()
    out = talking.copy()
    rows = np.flatnonzero(quiet)
    after = np.clip(np.searchsorted(voiced, rows), 0, len(voiced) - 1)
    before = np.clip(after - 1, 0, len(voiced) - 1)
    nearest = np.where(np.abs(voiced[before] - rows) <= np.abs(voiced[after] - rows), voiced[before], voiced[after])
    out[rows] = talking[nearest] & (np.cumsum(talking[nearest], axis=1) == 1)  # one speaker: the first of them
    return out


def span_frames(spans, n_frames: int) -> np.ndarray:
    """[frames] bool: frames whose start lies inside one of ``spans`` ((start, end) seconds, any order)."""
    starts = frame_start(np.arange(n_frames))
    edges = np.asarray(list(spans), np.float64).reshape(-1, 2)
    edges = edges[edges[:, 1] > edges[:, 0]]
    change = np.zeros(n_frames + 1, np.int64)
    np.add.at(change, np.searchsorted(starts, edges[:, 0], "left"), 1)
    np.add.at(change, np.searchsorted(starts, edges[:, 1], "left"), -1)
    return np.cumsum(change[:-1]) > 0
