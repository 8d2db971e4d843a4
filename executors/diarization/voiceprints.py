"""CAM++ voice prints of the local speakers of each chunk, one per stretch of their speech.

The segmentation network sometimes gives two people who take turns without overlapping the same
local speaker, so a local speaker's speech is cut at pauses of ``PAUSE_S`` into stretches (those
under ``MIN_STRETCH_S`` joined to a neighbour) and each stretch gets its own voice print. The
chunk's Kaldi filterbank frames where the segmentation says only that speaker talks are joined and
mean-normalised (the utterance-level normalisation CAM++ was trained with), then embedded. A
stretch heard mostly in overlap uses those frames too; one under ``MIN_EMBED_S`` gets no voice
print (a cough or a word's tail cannot be told apart reliably).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.types import CancelToken, Progress
from . import features
from .activity import ChunkActivity, chunk_audio
from .campplus import EMBED_DIM
from .segmenter import FRAME_HOP, FRAME_SPAN, SAMPLE_RATE

MIN_EMBED_S = 0.2      # shortest speech that gets a voice print at all
MIN_CLEAN_S = 0.5      # below this much speech without overlap, overlapped frames are used too
PAUSE_S = 0.2          # a pause this long may be a change of person within one local speaker
# Shorter stretches join their neighbour: too little for a steady voice print. At 1.0 s someone who answers
# in two words (0.98 s, an AN4 speaker of a speech-wide conversation) was joined to the reader after them;
# 0.8 s was chosen on speech-wide conversations 0-23 and checked on 24-47 (bench/diarize.py --wide-first 24).
MIN_STRETCH_S = 0.8


@dataclass
class VoicePrints:
    chunk: np.ndarray        # [n] chunk of each voice print
    speaker: np.ndarray      # [n] local speaker (0..2) inside that chunk
    frames: np.ndarray       # [n, 2] [first, end) segmentation frame of the stretch inside the chunk
    clean_s: np.ndarray      # [n] seconds of speech without overlap it was made from
    vectors: np.ndarray      # [n, 192] unit length

    def __len__(self) -> int:
        return len(self.chunk)


def _fbank_to_segment_frames(n_fbank: int, n_segment: int) -> np.ndarray:
    """Segmentation frame whose span holds the centre of each filterbank frame of a chunk."""
    centres = np.arange(n_fbank) * features.HOP + features.FRAME / 2
    index = np.floor((centres - (FRAME_SPAN - FRAME_HOP) / 2) / FRAME_HOP).astype(np.int64)
    return np.clip(index, 0, n_segment - 1)


def stretches(active: np.ndarray, frame_s: float) -> list[tuple[int, int]]:
    """[first, end) frame ranges of one local speaker's speech, cut at pauses, short ones joined."""
    edges = np.diff(np.concatenate([[0], active.astype(np.int8), [0]]))
    runs = [[int(a), int(b)] for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1))]
    merged: list[list[int]] = []
    for run in runs:
        if merged and (run[0] - merged[-1][1]) * frame_s < PAUSE_S:
            merged[-1][1] = run[1]
        else:
            merged.append(run)
    out: list[list[int]] = []
    for run in merged:
        talk = active[run[0]:run[1]].sum() * frame_s
        if out and (talk < MIN_STRETCH_S or active[out[-1][0]:out[-1][1]].sum() * frame_s < MIN_STRETCH_S):
            out[-1][1] = run[1]
        else:
            out.append(run)
    return [(a, b) for a, b in out]


def embed(encoder, frames) -> np.ndarray:
    frames = frames - frames.mean(0, keepdim=True)
    vector = encoder(frames[None]).numpy()[0]
    return vector / max(float(np.linalg.norm(vector)), 1e-8)


def voice_prints(samples: np.ndarray, activity: ChunkActivity, encoder, cancel: CancelToken | None = None,
                 on_progress: Callable[[Progress], None] | None = None) -> VoicePrints:
    import torch

    chunks, speakers, ranges, clean, vectors = [], [], [], [], []
    frame_s = features.HOP / features.SAMPLE_RATE
    with torch.inference_mode():
        for c, (start, local) in enumerate(zip(activity.starts, activity.local)):
            if cancel is not None:
                cancel.raise_if_cancelled("speaker diarization")
            if local.any():
                fbank = features.fbank(chunk_audio(samples, int(start)))
                to_segment = _fbank_to_segment_frames(len(fbank), len(local))
                on_fbank = local[to_segment]  # [fbank frames, 3]
                alone = on_fbank & (on_fbank.sum(-1, keepdims=True) == 1)
                for k in range(local.shape[1]):
                    for first, end in stretches(local[:, k], FRAME_HOP / SAMPLE_RATE):
                        inside = (to_segment >= first) & (to_segment < end)
                        clean_k, all_k = alone[:, k] & inside, on_fbank[:, k] & inside
                        use = clean_k if clean_k.sum() * frame_s >= MIN_CLEAN_S else all_k
                        if use.sum() * frame_s < MIN_EMBED_S:
                            continue
                        chunks.append(c)
                        speakers.append(k)
                        ranges.append((first, end))
                        clean.append(clean_k.sum() * frame_s)
                        vectors.append(embed(encoder, fbank[torch.from_numpy(use)]))
            if on_progress is not None:
                on_progress(Progress(c + 1, len(activity.starts), "chunks", "telling voices apart"))
    return VoicePrints(np.array(chunks, np.int64), np.array(speakers, np.int64),
                       np.array(ranges, np.int64).reshape(-1, 2), np.array(clean, np.float64),
                       np.stack(vectors).astype(np.float32) if vectors else np.zeros((0, EMBED_DIM), np.float32))
