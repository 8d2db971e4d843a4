"""The speaker encoder: Resemblyzer's GE2E network, with the weights its PyPI wheel ships.

The network (Wan et al., "Generalized End-to-End Loss for Speaker Verification") reads 1.6 s of
40-band mel *power* frames (25 ms window, 10 ms hop) through a 3-layer LSTM; the last layer's final
hidden state goes through Linear(256) and ReLU and is L2-normalised, so two windows of one voice
have a high cosine similarity. The wheel's pickle checkpoint is read once with
``torch.load(weights_only=True)`` and written to safetensors in the cache; only that file is loaded
afterwards. The resemblyzer package itself is never imported (it pulls librosa and webrtcvad).
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import numpy as np

from ..core.types import CancelToken
from ..models import cache as model_cache
from .errors import SpeakerModelMissing

SAMPLE_RATE = 16000
N_FFT = 400            # 25 ms
HOP = 160              # 10 ms
N_MELS = 40
WINDOW_FRAMES = 160    # 1.6 s: the length the network was trained on
HIDDEN = 256
LAYERS = 3
CONVERTER = "ge2e-safetensors-1"
WEIGHTS_FILE = "model.safetensors"

_lock = threading.Lock()
_loaded: "SpeakerEncoder | None" = None


def checkpoint_path() -> Path:
    """``resemblyzer/pretrained.pt`` of the installed wheel (found without importing the package)."""
    try:
        spec = importlib.util.find_spec("resemblyzer")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise SpeakerModelMissing("the 'resemblyzer' package that ships its weights is missing")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "pretrained.pt"
        if path.is_file():
            return path
    raise SpeakerModelMissing("resemblyzer is installed without its pretrained.pt")


def _convert(checkpoint: Path, out_dir: Path) -> None:
    import torch
    from safetensors.torch import save_file

    state = torch.load(checkpoint, map_location="cpu", weights_only=True)["model_state"]
    # The checkpoint also holds GE2E's training-only similarity scale/bias; keep the network.
    tensors = {k: v.contiguous() for k, v in state.items() if k.startswith(("lstm.", "linear."))}
    save_file(tensors, str(out_dir / WEIGHTS_FILE), metadata={"source": "resemblyzer pretrained.pt"})


def weights_path() -> Path:
    """The safetensors weights in the cache, converted from the wheel's checkpoint on first use."""
    source = checkpoint_path()
    key = model_cache.content_key([source], salt=CONVERTER)
    target = model_cache.models_root() / "speaker" / f"ge2e-{key[:16]}"
    if not (target / WEIGHTS_FILE).is_file():
        model_cache.build_atomically(target, lambda tmp: _convert(source, tmp),
                                     {"name": "ge2e", "source": str(source), "key": key, "converter": CONVERTER})
        model_cache.prune_siblings(target, "ge2e-")
    return target / WEIGHTS_FILE


def _network():
    import torch
    from torch import nn

    class GE2E(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(N_MELS, HIDDEN, LAYERS, batch_first=True)
            self.linear = nn.Linear(HIDDEN, HIDDEN)

        def forward(self, mels: torch.Tensor) -> torch.Tensor:
            _, (hidden, _) = self.lstm(mels)
            raw = torch.relu(self.linear(hidden[-1]))
            return raw / raw.norm(dim=1, keepdim=True).clamp_min(1e-8)

    return GE2E()


class SpeakerEncoder:
    """Mel frames of a recording, and one 256-d voice embedding per 1.6 s window of them."""

    def __init__(self, weights: Path):
        import torch
        from safetensors.torch import load_file
        from transformers.audio_utils import mel_filter_bank

        self._torch = torch
        self.model = _network()
        self.model.load_state_dict(load_file(str(weights)))
        self.model.eval()
        filters = mel_filter_bank(num_frequency_bins=N_FFT // 2 + 1, num_mel_filters=N_MELS, min_frequency=0.0,
                                  max_frequency=SAMPLE_RATE / 2, sampling_rate=SAMPLE_RATE, norm="slaney",
                                  mel_scale="slaney")
        self._filters = torch.from_numpy(np.ascontiguousarray(filters.T, dtype=np.float32))  # [mels, bins]
        self._window = torch.hann_window(N_FFT, periodic=True)

    @classmethod
    def shared(cls) -> "SpeakerEncoder":
        """One encoder per process (17 MB of weights; forward passes hold no state)."""
        global _loaded
        with _lock:
            if _loaded is None:
                _loaded = cls(weights_path())
            return _loaded

    def mel_frames(self, samples: np.ndarray) -> np.ndarray:
        """[n_frames, 40] mel power frames; frame ``i`` is centred at ``i * 10 ms``."""
        torch = self._torch
        x = torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32))
        if x.numel() < N_FFT:
            x = torch.nn.functional.pad(x, (0, N_FFT - x.numel()))
        spec = torch.stft(x, N_FFT, HOP, window=self._window, center=True, pad_mode="constant",
                          return_complex=True).abs().pow(2)
        return (self._filters @ spec).T.contiguous().numpy()

    def embed(self, windows: np.ndarray, cancel: CancelToken | None = None, batch: int = 64) -> np.ndarray:
        """[n, 256] unit-length embeddings of ``windows`` ([n, 160, 40] mel frames)."""
        torch = self._torch
        out = np.zeros((len(windows), HIDDEN), np.float32)
        with torch.inference_mode():
            for i in range(0, len(windows), batch):
                if cancel is not None:
                    cancel.raise_if_cancelled("speaker diarization")
                out[i:i + batch] = self.model(torch.from_numpy(windows[i:i + batch])).numpy()
        return out
