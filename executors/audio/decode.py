"""Audio decoding: any file, bytes or array -> 16 kHz mono float32, streamed when long.

A file whose decoding breaks off part-way gives the audio before the break and reports a
``Truncation`` (``truncation.py``); only a file without a single decodable sample is refused.

soundfile (libsndfile) decodes WAV/FLAC/OGG/Opus/MP3 and the other formats it knows; PyAV
(FFmpeg) takes container formats (M4A/AAC/MP4/WebM/MKV) and anything soundfile refuses.
Both decoders feed blocks/frames into ``soxr.ResampleStream`` so an hour-long file never sits
in memory at its source rate: ``iter_audio`` holds at most one output chunk plus one block.
"""

from __future__ import annotations

import io
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Union

import numpy as np

from ..core.errors import InvalidFormatError, NotFoundError
from .truncation import Truncation, report_truncation

SAMPLE_RATE = 16000
log = logging.getLogger(__name__)

AudioSource = Union[str, os.PathLike, bytes, bytearray, memoryview, BinaryIO, np.ndarray]

# Containers libsndfile never opens: go to PyAV straight away.
_PYAV_FIRST = {".m4a", ".aac", ".mp4", ".m4v", ".mov", ".webm", ".mkv", ".mka", ".3gp", ".wma", ".amr"}
# Elementary streams without a container index (duration only estimated by FFmpeg).
_RAW_STREAM_FORMATS = {"aac", "mp3", "ac3", "eac3", "amr", "adts"}
_BLOCK_FRAMES = 65536
_FORMAT_HINT = "use a WAV, FLAC, MP3, OGG/Opus, M4A/AAC, MP4, WebM or MKV file that contains audio"


class _Input:
    """A validated source: what to hand to soundfile/PyAV and a name for messages."""

    def __init__(self, source: AudioSource):
        if hasattr(source, "read"):  # an open binary file or BytesIO
            source = source.read()
            if isinstance(source, str):
                raise InvalidFormatError("Got a text-mode file object instead of audio bytes",
                                         "open the file with mode 'rb'")
        if isinstance(source, (bytes, bytearray, memoryview)):
            self.data: bytes | None = bytes(source)
            self.path: Path | None = None
            self.name = f"<{len(self.data)} bytes of audio>"
            if not self.data:
                raise InvalidFormatError("The audio data is empty (0 bytes)", "send a non-empty audio file")
            return
        if not isinstance(source, (str, os.PathLike)):
            raise InvalidFormatError(f"Cannot read audio from a {type(source).__name__}",
                                     "pass a file path, the file's bytes, a binary file object "
                                     "or a float32 numpy array")
        self.data = None
        self.path = Path(source)
        self.name = str(self.path)
        if not self.path.exists():
            raise NotFoundError(f"Audio file {self.name} not found", "check the path and the file name")
        if self.path.is_dir():
            raise InvalidFormatError(f"{self.name} is a directory, not an audio file", "pass the audio file inside it")
        if self.path.stat().st_size == 0:
            raise InvalidFormatError(f"{self.name} is empty (0 bytes)",
                                     "the recording may have failed; pick another file")

    def open_arg(self):
        """A fresh handle for one decoder attempt (BytesIO positions are not shared)."""
        return io.BytesIO(self.data) if self.data is not None else str(self.path)

    @property
    def suffix(self) -> str:
        return self.path.suffix.lower() if self.path is not None else ""

    def cut_short(self, decoded_seconds: float, expected_seconds: float | None) -> None:
        report_truncation(Truncation(self.name, decoded_seconds, expected_seconds))

    def fail(self, reason: str) -> InvalidFormatError:
        return InvalidFormatError(f"Cannot decode {self.name}: {reason}", _FORMAT_HINT)

    def decoder_failure(self, exc: BaseException, doing: str = "") -> InvalidFormatError:
        """A decoder's error in words (FFmpeg's "[Errno 1094995529] Invalid data found when processing
        input: '…'" says nothing to a reader); the decoder's own text goes to the log."""
        log.info("decoding %s failed%s: %s", self.name, f" ({doing})" if doing else "", exc)
        return self.fail(_decoder_reason(exc, self.suffix))


def _decoder_reason(exc: BaseException, suffix: str) -> str:
    import errno as errno_codes

    code = getattr(exc, "errno", None)
    kind = type(exc).__name__
    if kind == "InvalidDataError" or "Invalid data" in str(exc) or "Format not recognised" in str(exc):
        what = f"a {suffix} file" if suffix else "an audio file"
        return (f"its contents are not audio or video that can be decoded (the file may be damaged, "
                f"incomplete, or not really {what})")
    if kind == "EOFError" or "End of file" in str(exc):
        return "the file ends before any audio could be read (it may be incomplete)"
    if code in (errno_codes.EACCES, errno_codes.EPERM):
        return "the file cannot be read (permission denied)"
    if code == errno_codes.ENOENT:
        return "the file no longer exists"
    if kind in ("DecoderNotFoundError", "ProtocolNotFoundError", "PatchWelcomeError") or "not implemented" in str(exc):
        return "it uses an audio codec this app cannot decode"
    text = getattr(exc, "strerror", None) or str(exc)
    return re.sub(r"\[Errno -?\d+\]\s*", "", str(text)).split(": '")[0].strip() or "the decoder gave up"


def _to_mono(block: np.ndarray) -> np.ndarray:
    """(frames, channels) -> (frames,), averaging channels."""
    if block.ndim == 1:
        return block
    return block[:, 0].copy() if block.shape[1] == 1 else block.mean(axis=1, dtype=np.float32)


class _Resampler:
    """Incremental resampling of mono float32 blocks (identity when the rates agree)."""

    def __init__(self, in_rate: int, out_rate: int):
        self._stream = None
        if in_rate != out_rate:
            import soxr

            self._stream = soxr.ResampleStream(in_rate, out_rate, 1, dtype="float32", quality="HQ")

    def push(self, block: np.ndarray, last: bool = False) -> np.ndarray:
        if self._stream is None:
            return block
        return self._stream.resample_chunk(np.ascontiguousarray(block, dtype=np.float32), last=last)


def _soundfile_blocks(src: _Input, out_rate: int) -> Iterator[np.ndarray] | None:
    """Resampled mono blocks from libsndfile, or None if libsndfile does not know the format."""
    import soundfile as sf

    try:
        f = sf.SoundFile(src.open_arg())
    except (sf.LibsndfileError, RuntimeError, TypeError):
        return None

    def gen() -> Iterator[np.ndarray]:
        with f:
            resampler = _Resampler(f.samplerate, out_rate)
            decoded, broke_off = 0, False
            # read() until it comes back empty: blocks() trusts the header's frame count and
            # pads a truncated MP3 with stale buffer contents.
            while True:
                try:
                    block = f.read(_BLOCK_FRAMES, dtype="float32", always_2d=True)
                except (sf.LibsndfileError, RuntimeError) as exc:
                    if decoded == 0:  # libsndfile knew the header but not the data: let FFmpeg try
                        yield from _pyav_blocks(src, out_rate)
                        return
                    log.info("decoding %s stopped: %s", src.name, exc)
                    broke_off = True
                    break
                if not len(block):
                    break
                decoded += len(block)
                yield resampler.push(_to_mono(block))
            if decoded == 0 and f.frames > 0:
                raise src.fail(f"the file is truncated: its header says {f.frames / f.samplerate:.2f} s "
                               "but no audio could be decoded")
            if broke_off or (f.frames > 0 and f.frames - decoded > f.samplerate * 0.1 + f.frames * 0.01):
                src.cut_short(decoded / f.samplerate, f.frames / f.samplerate if f.frames > 0 else None)
            yield resampler.push(np.zeros(0, np.float32), last=True)

    return gen()


def _open_av(src: _Input):
    """An FFmpeg input container that has at least one audio stream."""
    import av

    try:
        container = av.open(src.open_arg(), mode="r")
    except (av.FFmpegError, ValueError, OSError) as exc:
        raise src.decoder_failure(exc, "opening") from exc
    if not container.streams.audio:
        container.close()
        raise src.fail("the file has no audio stream")
    return container


def _header_seconds(container, stream) -> float | None:
    """The duration FFmpeg read from the headers (None when they do not say)."""
    if stream.duration and stream.time_base:
        return float(stream.duration * stream.time_base)
    if container.duration:
        return container.duration / 1_000_000  # AV_TIME_BASE units
    return None


def _pyav_blocks(src: _Input, out_rate: int) -> Iterator[np.ndarray]:
    """Resampled mono blocks from FFmpeg: frames converted to planar float, then soxr."""
    import av

    container = _open_av(src)

    def gen() -> Iterator[np.ndarray]:
        with container:
            stream = container.streams.audio[0]
            to_float = av.AudioResampler(format="fltp")  # keeps layout and rate; just the sample format
            resampler: _Resampler | None = None
            decoded = 0.0
            try:
                for frame in container.decode(stream):
                    decoded += frame.samples / frame.sample_rate
                    for converted in to_float.resample(frame):
                        if resampler is None:
                            resampler = _Resampler(converted.sample_rate, out_rate)
                        yield resampler.push(converted.to_ndarray().mean(axis=0, dtype=np.float32))
                for converted in to_float.resample(None):
                    if resampler is None:
                        resampler = _Resampler(converted.sample_rate, out_rate)
                    yield resampler.push(converted.to_ndarray().mean(axis=0, dtype=np.float32))
            except av.FFmpegError as exc:
                if not decoded:
                    raise src.decoder_failure(exc, "decoding") from exc
                log.info("decoding %s stopped: %s", src.name, exc)
                src.cut_short(decoded, _header_seconds(container, stream))
            if resampler is not None:
                yield resampler.push(np.zeros(0, np.float32), last=True)

    return gen()


def _decoded_blocks(src: _Input, out_rate: int) -> Iterator[np.ndarray]:
    blocks = None if src.suffix in _PYAV_FIRST else _soundfile_blocks(src, out_rate)
    return blocks if blocks is not None else _pyav_blocks(src, out_rate)


def _check_array(audio: np.ndarray) -> np.ndarray:
    if audio.ndim != 1:
        raise InvalidFormatError(f"Expected a 1-D mono array, got shape {audio.shape}",
                                 "mix the channels down (e.g. audio.mean(axis=1)) before passing the array")
    if not np.issubdtype(audio.dtype, np.floating):
        raise InvalidFormatError(f"Expected float samples in [-1, 1], got {audio.dtype}",
                                 "convert integer PCM first, e.g. pcm.astype(np.float32) / 32768")
    if audio.size == 0:
        raise InvalidFormatError("The audio array is empty", "pass at least a few milliseconds of audio")
    audio = np.ascontiguousarray(audio, dtype=np.float32)
    if not np.isfinite(audio).all():
        raise InvalidFormatError("The audio array contains NaN or infinite samples", "check how it was produced")
    return audio


def iter_audio(source: AudioSource, chunk_seconds: float = 30.0,
               sample_rate: int = SAMPLE_RATE) -> Iterator[np.ndarray]:
    """Yield consecutive mono float32 chunks of ``chunk_seconds`` at ``sample_rate`` (the last may be shorter).

    Opening and probing happen on the first ``next()``; errors are ``InvalidFormatError`` /
    ``NotFoundError`` naming the file. A source without a single sample raises too.
    """
    if chunk_seconds <= 0:
        raise InvalidFormatError(f"chunk_seconds must be positive, got {chunk_seconds}", "use e.g. 30.0")
    chunk = max(1, int(round(chunk_seconds * sample_rate)))
    if isinstance(source, np.ndarray):
        audio = _check_array(source)
        for start in range(0, audio.size, chunk):
            yield audio[start:start + chunk]
        return

    src = _Input(source)
    pending: list[np.ndarray] = []
    pending_len = 0
    total = 0
    for block in _decoded_blocks(src, sample_rate):
        if block.size == 0:
            continue
        pending.append(block)
        pending_len += block.size
        while pending_len >= chunk:
            joined = np.concatenate(pending) if len(pending) > 1 else pending[0]
            yield joined[:chunk]
            total += chunk
            rest = joined[chunk:]
            pending, pending_len = ([rest] if rest.size else []), rest.size
    if pending_len:
        total += pending_len
        yield np.concatenate(pending)
    if total == 0:
        raise src.fail("it contains no audio samples (zero-length audio)")


def load_audio(source: AudioSource, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """The whole source as one mono float32 array at ``sample_rate``.

    A numpy array is taken as already being mono at ``sample_rate`` and only validated.
    """
    if isinstance(source, np.ndarray):
        return _check_array(source)
    return np.concatenate(list(iter_audio(source, chunk_seconds=600.0, sample_rate=sample_rate)))


def audio_duration(source: AudioSource) -> float:
    """Duration in seconds, from the headers when the format has them, else by decoding."""
    if isinstance(source, np.ndarray):
        return _check_array(source).size / SAMPLE_RATE
    src = _Input(source)
    if src.suffix not in _PYAV_FIRST:
        import soundfile as sf

        try:
            info = sf.info(src.open_arg())
            if info.frames > 0 and info.samplerate > 0:
                return info.frames / info.samplerate
        except (sf.LibsndfileError, RuntimeError, TypeError):
            pass
    with _open_av(src) as container:
        stream = container.streams.audio[0]
        if container.format.name in _RAW_STREAM_FORMATS:
            # FFmpeg only guesses these from the bit rate; packet durations are exact and need no decoding.
            packets = sum(p.duration or 0 for p in container.demux(stream))
            if packets and stream.time_base:
                return float(packets * stream.time_base)
        seconds = _header_seconds(container, stream)
        if seconds is not None:
            return seconds
    return sum(c.size for c in iter_audio(source, chunk_seconds=60.0)) / SAMPLE_RATE
