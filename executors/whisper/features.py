"""Log-mel features (Whisper's: Slaney mel filters over a Hann-window STFT, log10, an 8-decade floor)
and 30 s windowing.

``LogMel`` computes exactly what transformers' ``WhisperFeatureExtractor`` computes on its torch path
(the same operations in the same order, so the same bits: ``tests/test_whisper_model_files.py``)
without importing transformers. Windows are cut from the audio at the seek position and their
spectrogram is zero-padded to the model's 3000 frames (padding the spectrogram rather than the audio,
as faster-whisper does). ``AudioWindows`` keeps only the audio from the current seek point on, so an
hour-long file never holds more than about two windows in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import torch
import torch.nn.functional as F

_MEL_BREAK_HZ = 1000.0      # Slaney's mel scale: linear below, logarithmic above
_MEL_BREAK = 15.0           # the mel value at the break
_MEL_MAX_HZ = 8000.0


def _hz_to_mel(hz: float) -> float:
    if hz < _MEL_BREAK_HZ:
        return 3.0 * hz / 200.0
    return _MEL_BREAK + np.log(hz / _MEL_BREAK_HZ) * (27.0 / np.log(6.4))


def _mel_to_hz(mels: np.ndarray) -> np.ndarray:
    hz = 200.0 * mels / 3.0
    high = mels >= _MEL_BREAK
    hz[high] = _MEL_BREAK_HZ * np.exp(np.log(6.4) / 27.0 * (mels[high] - _MEL_BREAK))
    return hz


def mel_filters(n_fft: int, n_mels: int, sample_rate: int) -> np.ndarray:
    """[n_fft // 2 + 1, n_mels] triangular filters, 0-8 kHz, equally spaced on Slaney's mel scale, each
    scaled to unit area (float64)."""
    edges = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(_MEL_MAX_HZ), n_mels + 2))
    bins = np.linspace(0, sample_rate // 2, n_fft // 2 + 1)
    widths = np.diff(edges)
    offsets = edges[None, :] - bins[:, None]
    rising = -offsets[:, :-2] / widths[:-1]
    falling = offsets[:, 2:] / widths[1:]
    filters = np.maximum(np.zeros(1), np.minimum(rising, falling))
    return filters * (2.0 / (edges[2:n_mels + 2] - edges[:n_mels]))[None, :]


class LogMel:
    def __init__(self, settings, device: torch.device):
        """``settings``: a ``model_files.MelSettings`` (or anything with its attributes)."""
        self.settings = settings
        self.sample_rate = int(settings.sampling_rate)
        self.hop = int(settings.hop_length)
        self.n_fft = int(settings.n_fft)
        self.n_frames = int(settings.nb_max_frames)
        self.n_samples = int(settings.n_samples)
        # STFT on the GPU when the model is there; MPS lacks some FFT ops, so it stays on the CPU.
        self.device = "cuda" if device.type == "cuda" else "cpu"
        filters = mel_filters(self.n_fft, int(settings.feature_size), self.sample_rate)
        self._filters = torch.from_numpy(filters).to(self.device, torch.float32)
        self._window = torch.hann_window(self.n_fft, device=self.device)

    @property
    def seconds_per_frame(self) -> float:
        return self.hop / self.sample_rate

    def __call__(self, samples: np.ndarray) -> torch.Tensor:
        """[n_mels, len(samples) // hop] log-mel of ``samples`` (no padding to 30 s)."""
        frames = len(samples) // self.hop
        if len(samples) < self.n_fft:  # the STFT's reflect padding needs at least one FFT frame
            samples = np.pad(samples, (0, self.n_fft - len(samples)))
        wave = torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32)).to(self.device)[None]
        stft = torch.stft(wave, self.n_fft, self.hop, window=self._window, return_complex=True)
        power = (stft[..., :-1].abs() ** 2).contiguous()
        log_spec = torch.clamp(self._filters.T @ power, min=1e-10).log10()
        peak = log_spec.max(dim=2, keepdim=True)[0].max(dim=1, keepdim=True)[0]
        log_spec = (torch.maximum(log_spec, peak - 8.0) + 4.0) / 4.0
        return log_spec[0, :, :frames].cpu()

    def window(self, samples: np.ndarray) -> tuple[torch.Tensor, int]:
        """One model window: features of up to 30 s of ``samples`` padded to 3000 frames, and the
        number of frames that hold audio."""
        mel = self(samples[: self.n_samples])
        frames = mel.shape[-1]
        if frames < self.n_frames:
            mel = F.pad(mel, (0, self.n_frames - frames))
        return mel, frames

    def short_window(self, samples: np.ndarray, min_seconds: float = 1.0,
                     pad_seconds: float = 0.0) -> tuple[torch.Tensor, int]:
        """Features of only the audio there is (up to 30 s), followed by ``pad_seconds`` of padding, at
        least ``min_seconds`` long, with an even frame count (the encoder halves it); and the number of
        frames that hold audio."""
        mel = self(samples[: self.n_samples])
        frames = mel.shape[-1]
        per_second = self.sample_rate / self.hop
        want = max(frames + int(pad_seconds * per_second), int(min_seconds * per_second))
        want = min(want + (want % 2), self.n_frames)
        if want > frames:
            mel = F.pad(mel, (0, want - frames))
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
