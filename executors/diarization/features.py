"""Kaldi-style log mel filterbank frames, the input CAM++ was trained on (as Kaldi's ``compute-fbank-feats``
with 80 bins, 25 ms Povey windows every 10 ms, pre-emphasis 0.97, no dither, 20 Hz to Nyquist).

Written in torch so a whole recording is one batched FFT; a test holds it to kaldi-native-fbank.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

SAMPLE_RATE = 16000
FRAME = 400          # 25 ms
HOP = 160            # 10 ms
FFT = 512
N_MELS = 80
LOW_HZ = 20.0
_EPS = float(np.finfo(np.float32).eps)


def _mel(hz):
    return 1127.0 * np.log1p(np.asarray(hz, np.float64) / 700.0)


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[torch.Tensor, torch.Tensor]:
    """(Povey window [400], triangular mel weights [256, 80] over FFT bins below Nyquist)."""
    n = torch.arange(FRAME, dtype=torch.float64)
    window = ((0.5 - 0.5 * torch.cos(2 * math.pi * n / (FRAME - 1))) ** 0.85).float()
    lo, hi = _mel(LOW_HZ), _mel(SAMPLE_RATE / 2)
    step = (hi - lo) / (N_MELS + 1)
    bins = _mel(np.arange(FFT // 2) * SAMPLE_RATE / FFT)[None, :]
    left = lo + step * np.arange(N_MELS)[:, None]
    centre, right = left + step, left + 2 * step
    rising = np.where((bins > left) & (bins <= centre), (bins - left) / step, 0.0)
    falling = np.where((bins > centre) & (bins < right), (right - bins) / step, 0.0)
    return window, torch.from_numpy((rising + falling).T.astype(np.float32))


def frame_count(samples: int) -> int:
    return 0 if samples < FRAME else 1 + (samples - FRAME) // HOP


def fbank(samples: np.ndarray) -> torch.Tensor:
    """[frames, 80] log mel energies; frame ``i`` covers samples ``[160 i, 160 i + 400)``."""
    x = torch.as_tensor(np.ascontiguousarray(samples, dtype=np.float32))
    if x.numel() < FRAME:
        return torch.zeros(0, N_MELS)
    frames = x.unfold(0, FRAME, HOP)
    frames = frames - frames.mean(dim=1, keepdim=True)
    emphasised = torch.cat([frames[:, :1] * (1 - 0.97), frames[:, 1:] - 0.97 * frames[:, :-1]], dim=1)
    window, mel = _tables()
    power = torch.fft.rfft(emphasised * window, n=FFT).abs().square()[:, :FFT // 2]
    return torch.log(torch.clamp(power @ mel, min=_EPS))
