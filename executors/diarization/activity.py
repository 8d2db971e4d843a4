"""Who is talking in each 10 s chunk: the segmentation network slid over the recording.

Each chunk (every ``step_s``; the last one flush with the end; a short recording zero-padded) gives a
powerset class per 16.875 ms frame, turned here into up to three *local* speakers per chunk, active
or not in each frame. Local speakers are only consistent inside their chunk; clustering their voice
prints across chunks tells which are the same person. The number of people talking in a frame is
the rounded mean of the local counts of the chunks that cover it. The network is trained on
meetings, so it hears quiet, distant speech and marks where two people talk at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..audio.silence import zero_frames
from ..core.types import CancelToken, Progress
from .segmenter import CHUNK_SAMPLES, FRAME_HOP, FRAME_SPAN, POWERSET, SAMPLE_RATE, frame_count

CHUNK_FRAMES = frame_count(CHUNK_SAMPLES)
LOCAL_SPEAKERS = POWERSET.shape[1]
BATCH = 8


def frame_start(i) -> np.ndarray | float:
    """Start (seconds) of output frame ``i``: frames tile the timeline, centred on their receptive fields."""
    return (np.asarray(i) * FRAME_HOP + (FRAME_SPAN - FRAME_HOP) / 2) / SAMPLE_RATE


@dataclass
class ChunkActivity:
    starts: np.ndarray       # [chunks] first sample of each chunk
    offsets: np.ndarray      # [chunks] first frame of each chunk on the recording's frame grid
    local: np.ndarray        # [chunks, CHUNK_FRAMES, 3] bool: local speaker k talks in frame f
    count: np.ndarray        # [frames] people talking in each frame of the recording (0, 1 or 2)
    silent: np.ndarray       # [frames] nothing recorded (``audio.silence.zero_frames``): nobody talks there

    @property
    def n_frames(self) -> int:
        return len(self.count)


def frame_spans(active: np.ndarray, duration: float) -> list[tuple[float, float]]:
    """(start, end) seconds of each run of True frames, clipped to ``duration``."""
    edges = np.diff(np.concatenate([[0], active.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    out = [(float(frame_start(s)), min(float(frame_start(e)), duration)) for s, e in zip(starts, ends)]
    return [(s, e) for s, e in out if e > s]


def chunk_starts(n_samples: int, step: int) -> np.ndarray:
    if n_samples <= CHUNK_SAMPLES:
        return np.zeros(1, np.int64)
    last = n_samples - CHUNK_SAMPLES
    starts = np.arange(0, last + 1, step)
    if starts[-1] != last:
        # a regular chunk close to the flush one adds nothing: the flush one replaces it
        close = len(starts) > 1 and last - starts[-1] < step // 2 and last - starts[-2] <= CHUNK_SAMPLES
        starts = np.append(starts[:-1] if close else starts, last)
    return starts


def chunk_audio(samples: np.ndarray, start: int) -> np.ndarray:
    """The 10 s chunk at ``start``, zero-padded at the end of a short recording."""
    out = np.zeros(CHUNK_SAMPLES, np.float32)
    piece = samples[start:start + CHUNK_SAMPLES]
    out[:piece.size] = piece
    return out


def recording_frames(n_samples: int) -> int:
    """Frames on the recording's grid whose start lies inside it."""
    return max(0, int(np.ceil((n_samples - (FRAME_SPAN - FRAME_HOP) / 2) / FRAME_HOP)))


def chunk_activity(samples: np.ndarray, segmenter, step_s: float, cancel: CancelToken | None = None,
                   on_progress: Callable[[Progress], None] | None = None) -> ChunkActivity:
    import torch

    step = max(1, int(round(step_s * SAMPLE_RATE / FRAME_HOP))) * FRAME_HOP
    starts = chunk_starts(samples.size, step)
    offsets = np.round(starts / FRAME_HOP).astype(np.int64)  # exact except for the flush last chunk
    local = np.zeros((len(starts), CHUNK_FRAMES, LOCAL_SPEAKERS), bool)
    total = int(offsets[-1]) + CHUNK_FRAMES
    talking, cover = np.zeros(total, np.float32), np.zeros(total, np.float32)
    with torch.inference_mode():
        for i in range(0, len(starts), BATCH):
            if cancel is not None:
                cancel.raise_if_cancelled("speaker diarization")
            batch = np.stack([chunk_audio(samples, s) for s in starts[i:i + BATCH]])[:, None]
            classes = segmenter(torch.from_numpy(batch)).argmax(-1).numpy()
            local[i:i + BATCH] = POWERSET[classes] > 0
            if on_progress is not None:
                done = min(i + BATCH, len(starts))
                on_progress(Progress(done, len(starts), "chunks", "finding speech"))
    # the network hears a second of zeros between two turns as part of them: nobody talks where nothing was recorded
    silent = zero_frames(samples, np.round(frame_start(np.arange(total)) * SAMPLE_RATE))
    for chunk, offset in zip(local, offsets):
        chunk &= ~silent[offset:offset + CHUNK_FRAMES, None]
        talking[offset:offset + CHUNK_FRAMES] += chunk.sum(-1)
        cover[offset:offset + CHUNK_FRAMES] += 1
    n_frames = min(recording_frames(samples.size), total)
    count = np.rint(talking / np.maximum(cover, 1)).astype(np.int64)[:n_frames]
    return ChunkActivity(starts, offsets, local, count, silent[:n_frames])
