"""Encode only the audio there is, instead of a 30 s window padded with silence.

Whisper's encoder is a stack of convolutions and self-attention over 1500 positions (30 s).  As
whisper.cpp's ``audio_ctx`` does, the positional embedding can be sliced to the frames we have:
n seconds give 100·n mel frames and 50·n encoder positions, so 3 s of audio costs about a tenth of
a full window.  The decoder's cross-attention then reads only those positions.  The loaded
executor's own encoder runs (``executors/whisper/network.py`` takes any frame count), so its int8
(quantised) path is used unchanged.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


def audio_context(ex, samples: np.ndarray, min_seconds: float = 1.0,
                  pad_seconds: float = 0.0) -> tuple[torch.Tensor, int]:
    """Log-mel of ``samples`` followed by ``pad_seconds`` of padding, at least ``min_seconds`` long
    (and at most one window) with an even frame count, and the number of frames that hold audio."""
    lm = ex.log_mel
    mel = lm(samples[: lm.n_samples])
    frames = mel.shape[-1]
    per_s = lm.sample_rate / lm.hop
    want = max(frames + int(pad_seconds * per_s), int(min_seconds * per_s))
    want = min(want + (want % 2), lm.n_frames)
    if want > frames:
        mel = F.pad(mel, (0, want - frames))  # the executor pads 30 s windows the same way
    return mel, frames


@torch.inference_mode()
def encode_short(ex, samples: np.ndarray, min_seconds: float = 1.0, pad_seconds: float = 0.0) -> torch.Tensor:
    """[1, T, d] encoder output for ``samples`` (16 kHz mono, ≤ 30 s), T = frames / 2."""
    mel, _ = audio_context(ex, samples, min_seconds, pad_seconds)
    rt = ex.runtime
    with ex.stats.operation("prefill", 1):
        return rt.encoder(mel[None].to(rt.device, rt.dtype))


def encode_full(ex, samples: np.ndarray) -> torch.Tensor:
    """[1, 1500, d]: the reference path, ``samples`` padded to one 30 s window."""
    mel, _ = ex.log_mel.window(samples)
    return ex.encode_window(mel)
