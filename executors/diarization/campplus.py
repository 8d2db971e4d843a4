"""CAM++ speaker encoder (Wang et al., "CAM++: A Fast and Efficient Network for Speaker Verification
Using Context-Aware Masking", 2023), laid out so that the 3D-Speaker checkpoint's names load as-is.

80 log-mel frames (10 ms hop) in, one 192-d voice embedding out. A small 2-D residual front end
(``head``) reads the spectrogram; densely connected TDNN blocks follow, each layer's output gated
by a context mask computed from the utterance mean and 100-frame segment means; mean and standard
deviation over time are pooled and projected. Inference only: batch norms use their running stats.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

FEAT_DIM = 80
EMBED_DIM = 192
GROWTH = 32             # channels each dense layer adds
BOTTLENECK = 128        # 4 x GROWTH
INIT_CHANNELS = 128
BLOCKS = ((12, 3, 1), (24, 3, 2), (16, 3, 2))  # (layers, kernel, dilation) of the three dense blocks
SEGMENT_FRAMES = 100    # context-mask segment pooling length


def _bn_relu(channels: int) -> nn.Sequential:
    seq = nn.Sequential()
    seq.add_module("batchnorm", nn.BatchNorm1d(channels))
    seq.add_module("relu", nn.ReLU())
    return seq


class _ResBlock2d(nn.Module):
    def __init__(self, channels: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, stride=(stride, 1), padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.shortcut = nn.Sequential()
        if stride != 1:
            self.shortcut = nn.Sequential(nn.Conv2d(channels, channels, 1, stride=(stride, 1), bias=False),
                                          nn.BatchNorm2d(channels))

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + self.shortcut(x))


class _Head(nn.Module):
    """2-D front end: frequency is downsampled 8x; channels x remaining bands become features."""

    def __init__(self, channels: int = 32):
        super().__init__()
        self.conv1 = nn.Conv2d(1, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.layer1 = nn.Sequential(_ResBlock2d(channels, 2), _ResBlock2d(channels, 1))
        self.layer2 = nn.Sequential(_ResBlock2d(channels, 2), _ResBlock2d(channels, 1))
        self.conv2 = nn.Conv2d(channels, channels, 3, stride=(2, 1), padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.out_channels = channels * (FEAT_DIM // 8)

    def forward(self, x):  # [B, F, T]
        x = F.relu(self.bn1(self.conv1(x.unsqueeze(1))))
        x = F.relu(self.bn2(self.conv2(self.layer2(self.layer1(x)))))
        return x.flatten(1, 2)


class _Tdnn(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: int, stride: int):
        super().__init__()
        self.linear = nn.Conv1d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False)
        self.nonlinear = _bn_relu(cout)

    def forward(self, x):
        return self.nonlinear(self.linear(x))


class _ContextMask(nn.Module):
    """A local TDNN output scaled by a sigmoid mask from utterance- and segment-level context."""

    def __init__(self, cin: int, cout: int, kernel: int, dilation: int):
        super().__init__()
        self.linear_local = nn.Conv1d(cin, cout, kernel, padding=(kernel - 1) // 2 * dilation, dilation=dilation,
                                      bias=False)
        self.linear1 = nn.Conv1d(cin, cin // 2, 1)
        self.linear2 = nn.Conv1d(cin // 2, cout, 1)

    def forward(self, x):
        frames = x.shape[-1]
        segments = F.avg_pool1d(x, SEGMENT_FRAMES, SEGMENT_FRAMES, ceil_mode=True)
        per_frame = segments.repeat_interleave(SEGMENT_FRAMES, dim=-1)[..., :frames]
        context = x.mean(-1, keepdim=True) + per_frame
        mask = torch.sigmoid(self.linear2(F.relu(self.linear1(context))))
        return self.linear_local(x) * mask


class _DenseLayer(nn.Module):
    def __init__(self, cin: int, kernel: int, dilation: int):
        super().__init__()
        self.nonlinear1 = _bn_relu(cin)
        self.linear1 = nn.Conv1d(cin, BOTTLENECK, 1, bias=False)
        self.nonlinear2 = _bn_relu(BOTTLENECK)
        self.cam_layer = _ContextMask(BOTTLENECK, GROWTH, kernel, dilation)

    def forward(self, x):
        return self.cam_layer(self.nonlinear2(self.linear1(self.nonlinear1(x))))


class _DenseBlock(nn.Module):
    def __init__(self, layers: int, cin: int, kernel: int, dilation: int):
        super().__init__()
        for i in range(layers):
            self.add_module(f"tdnnd{i + 1}", _DenseLayer(cin + i * GROWTH, kernel, dilation))

    def forward(self, x):
        for layer in self.children():
            x = torch.cat([x, layer(x)], dim=1)
        return x


class _Transit(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.nonlinear = _bn_relu(cin)
        self.linear = nn.Conv1d(cin, cout, 1, bias=False)

    def forward(self, x):
        return self.linear(self.nonlinear(x))


class _StatsPool(nn.Module):
    def forward(self, x):
        std = x.std(-1) if x.shape[-1] > 1 else torch.full_like(x[..., 0], 1e-2)
        return torch.cat([x.mean(-1), std], dim=-1)


class _Embedding(nn.Module):
    def __init__(self, cin: int):
        super().__init__()
        self.linear = nn.Conv1d(cin, EMBED_DIM, 1, bias=False)
        self.nonlinear = nn.Sequential()
        self.nonlinear.add_module("batchnorm", nn.BatchNorm1d(EMBED_DIM, affine=False))

    def forward(self, x):  # [B, C] pooled statistics
        return self.nonlinear(self.linear(x.unsqueeze(-1)).squeeze(-1))


class CamPlusPlus(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = _Head()
        channels = self.head.out_channels
        self.xvector = nn.Sequential()
        self.xvector.add_module("tdnn", _Tdnn(channels, INIT_CHANNELS, 5, stride=2))
        channels = INIT_CHANNELS
        for i, (layers, kernel, dilation) in enumerate(BLOCKS, start=1):
            self.xvector.add_module(f"block{i}", _DenseBlock(layers, channels, kernel, dilation))
            channels += layers * GROWTH
            self.xvector.add_module(f"transit{i}", _Transit(channels, channels // 2))
            channels //= 2
        self.xvector.add_module("out_nonlinear", _bn_relu(channels))
        self.xvector.add_module("stats", _StatsPool())
        self.xvector.add_module("dense", _Embedding(channels * 2))

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        """[batch, frames, 80] mean-normalised log-mel frames -> [batch, 192] embeddings (not unit length)."""
        return self.xvector(self.head(feats.transpose(1, 2)))
