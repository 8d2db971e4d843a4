"""Helpers for the audio tests: real speech clips (tests/data) and encoders for every supported format."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from fixture_data import SPEECH as SPEECH_DIR

# A 7.1 s LibriVox sentence (full-band speech, 16 kHz mono FLAC).
DEV_CLIP = SPEECH_DIR / "pocketsphinx" / "librivox_sense_and_sensibility_01_austen_64kb-0870.flac"


def read_reference(clip: Path = DEV_CLIP) -> str:
    rel = clip.relative_to(SPEECH_DIR).as_posix()
    for line in (SPEECH_DIR / "transcripts.tsv").read_text(encoding="utf-8").splitlines():
        path, _, ref = line.partition("\t")
        if path == rel:
            return ref
    raise KeyError(rel)


def read_clip(clip: Path = DEV_CLIP) -> np.ndarray:
    import soundfile as sf

    audio, rate = sf.read(str(clip), dtype="float32")
    assert rate == 16000 and audio.ndim == 1
    return audio


def resample(audio: np.ndarray, in_rate: int, out_rate: int) -> np.ndarray:
    import soxr

    return soxr.resample(audio, in_rate, out_rate).astype(np.float32)


def write_soundfile(path: Path, audio: np.ndarray, rate: int, fmt: str, subtype: str | None = None) -> Path:
    import soundfile as sf

    sf.write(str(path), audio, rate, format=fmt, subtype=subtype)
    return path


def write_pyav(path: Path, audio: np.ndarray, rate: int, codec: str, container: str | None = None) -> Path:
    """Encode (frames,) or (frames, channels) float audio with FFmpeg into ``path``."""
    import av

    planar = np.atleast_2d(audio.T if audio.ndim == 2 else audio).astype(np.float32)
    layout = "mono" if planar.shape[0] == 1 else "stereo"
    with av.open(str(path), "w", format=container) as out:
        stream = out.add_stream(codec, rate=rate, layout=layout)
        step = 4096
        for start in range(0, planar.shape[1], step):
            frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(planar[:, start:start + step]),
                                               format="fltp", layout=layout)
            frame.sample_rate = rate
            frame.pts = start
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return path


def best_correlation(decoded: np.ndarray, original: np.ndarray, max_lag: int = 4000) -> tuple[float, int]:
    """Highest normalised correlation of ``decoded`` against ``original`` within +-max_lag samples.

    Lossy codecs add a small delay, so the best lag is searched (FFT cross-correlation).
    """
    n = decoded.size + original.size
    spec = np.fft.rfft(decoded, n) * np.conj(np.fft.rfft(original, n))
    xcorr = np.fft.irfft(spec, n)
    lags = np.r_[np.arange(0, max_lag + 1), np.arange(-max_lag, 0)]
    values = xcorr[lags]
    i = int(np.argmax(values))
    norm = float(np.linalg.norm(decoded) * np.linalg.norm(original)) + 1e-12
    return float(values[i]) / norm, int(lags[i])


def speech_with_silence(lead_s: float = 3.0, gap_s: float = 4.0,
                        tail_s: float = 3.0) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """Dev clip twice with silence around: returns the audio and where the clips sit (seconds)."""
    clip = read_clip()
    sr = 16000
    parts = [np.zeros(int(lead_s * sr), np.float32), clip, np.zeros(int(gap_s * sr), np.float32), clip,
             np.zeros(int(tail_s * sr), np.float32)]
    first = (lead_s, lead_s + clip.size / sr)
    second = (first[1] + gap_s, first[1] + gap_s + clip.size / sr)
    return np.concatenate(parts), [first, second]


# Three LibriVox sentences (about 20 s with the pauses): a short dictation session.
JOINED_CLIPS = ["librivox_sense_and_sensibility_01_austen_64kb-0880.flac",
                "librivox_sense_and_sensibility_01_austen_64kb-0890.flac",
                "librivox_sense_and_sensibility_01_austen_64kb-0930.flac"]


def joined_clips(path: Path, gap_s: float = 1.2) -> tuple[Path, str]:
    """Three LibriVox sentences with pauses between them, as one 16 kHz WAV, and their reference."""
    import soundfile as sf

    pieces, refs = [np.zeros(int(0.5 * 16000), np.float32)], []
    for name in JOINED_CLIPS:
        audio, rate = sf.read(str(SPEECH_DIR / "pocketsphinx" / name), dtype="float32")
        assert rate == 16000
        pieces += [audio, np.zeros(int(gap_s * rate), np.float32)]
        refs.append(read_reference(SPEECH_DIR / "pocketsphinx" / name))
    sf.write(str(path), np.concatenate(pieces), 16000)
    return path, " ".join(refs)


def cut_short(source: Path, dest: Path, keep: float = 0.6) -> Path:
    """``dest``: the first ``keep`` of ``source``'s bytes, as an interrupted copy or recording leaves a file."""
    data = source.read_bytes()
    dest.write_bytes(data[: int(len(data) * keep)])
    return dest


def copy_slowly(source: Path, dest: Path, pieces: int = 6, pause_s: float = 0.15) -> Path:
    """Write ``source`` to ``dest`` a piece at a time, pausing between pieces, as a slow copy does."""
    import time

    data = source.read_bytes()
    step = len(data) // pieces + 1
    with open(dest, "wb") as out:
        for start in range(0, len(data), step):
            out.write(data[start:start + step])
            out.flush()
            time.sleep(pause_s)
    return dest
