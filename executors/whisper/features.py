"""Log-mel features (transformers' WhisperFeatureExtractor, torch STFT path) and 30 s windowing.

Windows are cut from the audio at the seek position and their spectrogram is zero-padded to the
model's 3000 frames (padding the spectrogram rather than the audio, as faster-whisper does).
``AudioWindows`` keeps only the audio from the current seek point on, so an hour-long file never
holds more than about two windows in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import torch
import torch.nn.functional as F


class LogMel:
    def __init__(self, feature_extractor, device: torch.device):
        self.fe = feature_extractor
        self.sample_rate = int(feature_extractor.sampling_rate)
        self.hop = int(feature_extractor.hop_length)
        self.n_fft = int(feature_extractor.n_fft)
        self.n_frames = int(feature_extractor.nb_max_frames)
        self.n_samples = int(feature_extractor.n_samples)
        # STFT on the GPU when the model is there; MPS lacks some FFT ops, so it stays on the CPU.
        self.device = "cuda" if device.type == "cuda" else "cpu"

    @property
    def seconds_per_frame(self) -> float:
        return self.hop / self.sample_rate

    def __call__(self, samples: np.ndarray) -> torch.Tensor:
        """[n_mels, len(samples) // hop] log-mel of ``samples`` (no padding to 30 s)."""
        frames = len(samples) // self.hop
        if len(samples) < self.n_fft:  # the STFT's reflect padding needs at least one FFT frame
            samples = np.pad(samples, (0, self.n_fft - len(samples)))
        out = self.fe(np.asarray(samples, dtype=np.float32), sampling_rate=self.sample_rate, padding="longest",
                      truncation=False, return_tensors="pt", device=self.device)
        return out["input_features"][0, :, :frames]

    def window(self, samples: np.ndarray) -> tuple[torch.Tensor, int]:
        """One model window: features of up to 30 s of ``samples`` padded to 3000 frames, and the
        number of frames that hold audio."""
        mel = self(samples[: self.n_samples])
        frames = mel.shape[-1]
        if frames < self.n_frames:
            mel = F.pad(mel, (0, self.n_frames - frames))
        return mel, frames


class AudioWindows:
    """Random access to ``[seek, seek + 30 s)`` over a stream of audio chunks, forward only."""

    def __init__(self, chunks: Iterable[np.ndarray], hop: int, window_samples: int):
        self._chunks: Iterator[np.ndarray] = iter(chunks)
        self._buf = np.zeros(0, dtype=np.float32)
        self._start = 0          # sample index of _buf[0]
        self._hop = hop
        self._window = window_samples
        self.exhausted = False

    @property
    def samples_seen(self) -> int:
        return self._start + len(self._buf)

    def window(self, seek_frame: int) -> np.ndarray:
        begin = seek_frame * self._hop
        end = begin + self._window
        while self.samples_seen < end and not self.exhausted:
            chunk = next(self._chunks, None)
            if chunk is None:
                self.exhausted = True
                break
            self._buf = np.concatenate([self._buf, np.asarray(chunk, dtype=np.float32).reshape(-1)])
        if begin > self._start:  # forget audio before the seek point
            drop = min(begin - self._start, len(self._buf))
            self._buf = self._buf[drop:]
            self._start += drop
        return self._buf[begin - self._start: end - self._start]
