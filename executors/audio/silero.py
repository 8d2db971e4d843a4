"""Silero VAD's network, run over many 32 ms windows per call.

Silero's own wrappers step the network one window at a time (each step: the window's spectrum, four
convolutions, one LSTM cell), so a recording costs a model call per 32 ms: ten minutes took 5.3 s at one
thread.  Only the LSTM carries anything from one window to the next, so here the spectrum and the
convolutions run over a block of windows in one call each, and the LSTM cell's weights run as a
``torch.nn.LSTM`` over the block's sequence, its state carried from block to block.  The probabilities
are those of stepping the model window by window (to ~1e-5, float rounding; ``tests/test_vad.py``
checks them against silero's own ONNX model), and ten minutes take ~0.5 s (silero's batched "sequence"
ONNX model: 1.0 s; faster-whisper's VAD: 1.15 s; ``bench/vad.py``).

The parts are taken from silero's TorchScript model (``silero_vad.jit``, shipped in the ``silero-vad``
package), whose submodules are named; a release that renames them fails at load with a message that says so.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import ModelError, wrap_unexpected

SAMPLE_RATE = 16000
WINDOW = 512        # samples per Silero step at 16 kHz (32 ms)
CONTEXT = 64        # samples of the previous window each step also hears
HIDDEN = 128        # the LSTM's width
BLOCK = 512         # windows per call (16 s of audio): the convolutions' activations stay in the caches

_lock = threading.Lock()
_network: SileroNetwork | None = None


@dataclass
class SileroState:
    """What a stream carries from one window to the next: the last ``CONTEXT`` samples it heard and the
    LSTM's hidden and cell state (None before the first window, as silero's ``reset_states`` leaves it)."""
    context: np.ndarray = field(default_factory=lambda: np.zeros(CONTEXT, np.float32))
    lstm: tuple | None = None


class SileroNetwork:
    """The three parts of Silero's 16 kHz network; one instance serves every thread (no state inside)."""

    def __init__(self, jit_model):
        import torch

        try:
            core = jit_model._model
            self._spectrum, self._convolutions = core.stft, core.encoder
            cell, self._head = core.decoder.rnn, core.decoder.decoder
            weights = (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
        except AttributeError as exc:
            raise ModelError(f"The installed silero-vad's model lacks a part Ferrum runs ({exc})",
                             "install the silero-vad version pyproject.toml names") from exc
        self._lstm = torch.nn.LSTM(HIDDEN, HIDDEN)
        with torch.no_grad():
            for name, value in zip(("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"), weights):
                getattr(self._lstm, name).copy_(value)
        self._lstm.eval()

    def probabilities(self, samples: np.ndarray, state: SileroState, cancel=None) -> np.ndarray:
        """Speech probability of each ``WINDOW`` of ``samples`` (a stream's next audio; a last partial window is
        heard padded with silence), continuing from ``state``, which is updated in place.  The audio is read a
        block at a time: an hour costs no second copy of itself."""
        import torch

        count = -(-samples.size // WINDOW)
        out = np.empty(count, np.float32)
        with torch.inference_mode():
            for at in range(0, count, BLOCK):
                if cancel is not None:
                    cancel.raise_if_cancelled("voice activity detection")
                n = min(BLOCK, count - at)
                block = samples[at * WINDOW:(at + n) * WINDOW]
                if block.size < n * WINDOW:  # the last window of the audio, padded with silence
                    block = np.pad(block, (0, n * WINDOW - block.size))
                block = block.reshape(n, WINDOW)
                heard = np.empty((n, CONTEXT + WINDOW), np.float32)
                heard[0, :CONTEXT] = state.context
                heard[1:, :CONTEXT] = block[:-1, -CONTEXT:]
                heard[:, CONTEXT:] = block
                state.context = block[-1, -CONTEXT:].copy()
                features = self._convolutions(self._spectrum(torch.from_numpy(heard)))  # [n, HIDDEN, 1]
                hidden, state.lstm = self._lstm(features.view(-1, 1, HIDDEN), state.lstm)     # [n, 1, HIDDEN]
                probs = self._head(hidden.view(-1, HIDDEN, 1))                         # [n, 1, 1]
                out[at:at + n] = probs.view(-1).numpy()
        return out


def network() -> SileroNetwork:
    """The process's Silero network, loaded on first use."""
    global _network
    with _lock:
        if _network is None:
            try:
                _network = SileroNetwork(_silero().load_silero_vad(onnx=False))
            except Exception as exc:  # noqa: BLE001 - reported as a FerrumError (a ModelError as it is)
                raise wrap_unexpected(exc, "loading the Silero VAD model") from exc
        return _network


def _silero():
    """The silero_vad module; importing it sets torch to one thread process-wide, so undo that."""
    import torch

    threads = torch.get_num_threads()
    import silero_vad

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return silero_vad


def timestamps_from_probabilities(probs: np.ndarray, **options) -> list[dict]:
    """silero's own state machine from per-window probabilities to speech spans (in samples)."""
    return _silero().get_speech_timestamps_from_probs(probs.tolist(), sampling_rate=SAMPLE_RATE, **options)
