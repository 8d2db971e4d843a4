"""The speaker segmentation network: pyannote's segmentation-3.0 (PyanNet), laid out so that its
checkpoint's names load as-is.

Ten seconds of 16 kHz audio in; for each 16.875 ms frame, log-probabilities of the 7 "powerset"
classes of up to three local speakers with at most two at once: nobody, A, B, C, A+B, A+C, B+C.
SincNet (learned band-pass filters from asteroid-filterbanks, then two small convolutions, each
max-pooled by 3 and instance-normalised), four bidirectional LSTM layers, two linear layers.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

SAMPLE_RATE = 16000
CHUNK_SAMPLES = 10 * SAMPLE_RATE
FRAME_HOP = 270                  # samples between output frames: sinc stride 10 x three max-pools of 3
FRAME_SPAN = 991                 # samples one output frame sees (its receptive field)
N_CLASSES = 7
# Which local speakers (A, B, C) each powerset class holds.
POWERSET = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]], np.float32)


class _SincNet(nn.Module):
    def __init__(self):
        super().__init__()
        from asteroid_filterbanks import Encoder, ParamSincFB

        self.wav_norm1d = nn.InstanceNorm1d(1, affine=True)
        self.conv1d = nn.ModuleList([
            Encoder(ParamSincFB(80, 251, stride=10, sample_rate=SAMPLE_RATE, min_low_hz=50, min_band_hz=50)),
            nn.Conv1d(80, 60, 5), nn.Conv1d(60, 60, 5)])
        self.pool1d = nn.ModuleList([nn.MaxPool1d(3, 3) for _ in range(3)])
        self.norm1d = nn.ModuleList([nn.InstanceNorm1d(c, affine=True) for c in (80, 60, 60)])

    def forward(self, wav):  # [B, 1, samples]
        x = self.wav_norm1d(wav)
        for i, (conv, pool, norm) in enumerate(zip(self.conv1d, self.pool1d, self.norm1d)):
            x = conv(x)
            if i == 0:
                x = x.abs()
            x = F.leaky_relu(norm(pool(x)))
        return x  # [B, 60, frames]


class PyanNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.sincnet = _SincNet()
        self.lstm = nn.LSTM(60, 128, num_layers=4, bidirectional=True, batch_first=True)
        self.linear = nn.ModuleList([nn.Linear(256, 128), nn.Linear(128, 128)])
        self.classifier = nn.Linear(128, N_CLASSES)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        """[batch, 1, samples] -> [batch, frames, 7] powerset log-probabilities."""
        x, _ = self.lstm(self.sincnet(wav).transpose(1, 2))
        for layer in self.linear:
            x = F.leaky_relu(layer(x))
        return F.log_softmax(self.classifier(x), dim=-1)


def frame_count(samples: int) -> int:
    """Output frames for ``samples`` of input (valid convolutions and pools, as in the network)."""
    n = (samples - 251) // 10 + 1
    for _ in range(2):
        n = (n // 3) - 4
    return n // 3
