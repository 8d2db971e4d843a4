"""Audio sources for dictation: a live input device (sounddevice) or a file played through the
same path at real-time pace, faster, or as fast as the consumer takes it.

Sources deliver raw frames at their native rate and channel count into an ``AudioRing``; mixing
to mono and resampling to 16 kHz happen in the engine's consumer thread, never in the callback.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..core.errors import (
    DeviceError,
    FerrumError,
    InvalidParameterError,
    NotFoundError,
    wrap_unexpected,
)
from .pulse_sources import pulse_sources, recording_from
from .ring import AudioRing

_PORTAUDIO_HINT = "install PortAudio (Debian/Ubuntu: apt install libportaudio2; macOS: brew install portaudio)"


def sounddevice():
    """The sounddevice module; a missing PortAudio library becomes a DeviceError with a hint."""
    try:
        import sounddevice as sd
    except OSError as exc:  # sounddevice raises OSError when libportaudio cannot be loaded
        raise DeviceError(f"Audio input is unavailable: the PortAudio library could not be loaded ({exc})",
                          _PORTAUDIO_HINT) from exc
    return sd


@dataclass(frozen=True)
class InputDevice:
    index: int
    name: str
    hostapi: str
    channels: int
    default_samplerate: float
    is_default: bool = False
    pulse_source: str | None = None  # a PulseAudio source, recorded through PortAudio's "pulse" device

    @property
    def key(self) -> str:
        """A name that stays the same across restarts (to remember the user's choice)."""
        return f"pulse:{self.pulse_source}" if self.pulse_source else self.name


def list_input_devices() -> list[InputDevice]:
    """Every device with at least one input channel, the system default marked; with a PulseAudio
    server, its sources by name first (the server's default source is then the default)."""
    sd = sounddevice()
    try:
        devices = sd.query_devices()
        hostapis = sd.query_hostapis()
        default = sd.default.device[0] if sd.default.device is not None else -1
    except Exception as exc:
        raise DeviceError(f"Could not list audio devices: {exc}", "check that the audio system is running") from exc
    out = []
    for d in devices:
        if d["max_input_channels"] > 0:
            out.append(InputDevice(int(d["index"]), str(d["name"]), str(hostapis[d["hostapi"]]["name"]),
                                   int(d["max_input_channels"]), float(d["default_samplerate"]),
                                   int(d["index"]) == default))
    pulse = next((d for d in out if d.name == "pulse"), None)
    sources = pulse_sources() if pulse is not None else []
    if sources:
        named = [replace(pulse, name=s.description, pulse_source=s.name, is_default=s.is_default) for s in sources]
        out = named + [replace(d, is_default=False) for d in out]
    return out


def find_input_device(spec: int | str | None = None) -> InputDevice:
    """The device for an index, an exact or partial (case-insensitive) name, or the default (None)."""
    devices = list_input_devices()
    if not devices:
        raise NotFoundError("No microphone or other audio input device was found",
                            "connect a microphone, check it is enabled in the system sound settings, "
                            "or dictate from a file (--from-file)")
    names = ", ".join(f"{d.index}: {d.name}" for d in devices)
    if spec is None or spec == "":
        return next((d for d in devices if d.is_default), devices[0])
    if isinstance(spec, int) or (isinstance(spec, str) and spec.strip().isdigit()):
        index = int(spec)
        for d in devices:
            if d.index == index:
                return d
        raise NotFoundError(f"No audio input device with index {index}", f"choose one of: {names}")
    wanted = str(spec).lower()
    exact = [d for d in devices if wanted in (d.name.lower(), d.key.lower())]
    partial = exact or [d for d in devices if wanted in d.name.lower()]
    if partial:
        return partial[0]
    raise NotFoundError(f"No audio input device named '{spec}'", f"choose one of: {names}")


class AudioSource:
    """Base: ``start(ring)`` begins delivering frames; ``stop()``; ``done`` once a file ran out."""

    sample_rate: int = 16000
    channels: int = 1
    live: bool = False          # a device: never blocks, frames may be lost when the ring is full
    name: str = "audio"

    def __init__(self) -> None:
        self.error: FerrumError | None = None
        self.done = False
        self.last_frame_wall = 0.0

    def ring_for(self, seconds: float) -> AudioRing:
        return AudioRing(max(1, int(seconds * self.sample_rate)), self.channels)

    def start(self, ring: AudioRing) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class MicrophoneSource(AudioSource):
    live = True

    def __init__(self, device: InputDevice | int | str | None = None, blocksize_s: float = 0.02):
        super().__init__()
        self.device = device if isinstance(device, InputDevice) else find_input_device(device)
        self.name = self.device.name
        self.sample_rate = int(self.device.default_samplerate)
        self.channels = min(self.device.channels, 2)
        self._blocksize = max(1, int(blocksize_s * self.sample_rate))
        self._stream = None
        self._stopping = False
        self.overflows = 0

    def start(self, ring: AudioRing) -> None:
        sd = sounddevice()

        def callback(indata, frames, time_info, status):  # PortAudio thread: copy and return
            if status.input_overflow:
                self.overflows += 1
            ring.put(indata)
            self.last_frame_wall = time.monotonic()

        def finished():
            if not self._stopping:
                self.error = DeviceError(f"The audio input '{self.name}' stopped delivering audio",
                                         "the device may have been unplugged or taken by another program; "
                                         "reconnect it and start dictation again")
            ring.close()

        try:
            with recording_from(self.device.pulse_source):
                self._stream = sd.InputStream(device=self.device.index, channels=self.channels,
                                              samplerate=self.sample_rate, dtype="float32",
                                              blocksize=self._blocksize, callback=callback,
                                              finished_callback=finished)
                self.last_frame_wall = time.monotonic()
                self._stream.start()
        except Exception as exc:
            raise DeviceError(f"Could not open the audio input '{self.name}': {exc}",
                              "check the device is connected and not in exclusive use, or pick another") from exc

    @property
    def active(self) -> bool:
        return self._stream is not None and bool(self._stream.active)

    def stop(self) -> None:
        self._stopping = True
        if self._stream is not None:
            with contextlib.suppress(Exception):  # a vanished device may fail to close; nothing to keep
                self._stream.stop()
                self._stream.close()
            self._stream = None


class FileSource(AudioSource):
    """A file (any format ``executors.audio.decode`` reads), an array, or an iterable of chunks, played into
    the ring in blocks of ``block_s``.  ``speed`` 1.0 = real time, 2.0 = twice as fast, 0 = as fast
    as the consumer takes it (the source then waits for room instead of dropping audio)."""

    def __init__(self, source: str | Path | np.ndarray | Iterable[np.ndarray], sample_rate: int | None = None,
                 speed: float = 1.0, block_s: float = 0.02):
        super().__init__()
        if speed < 0:
            raise InvalidParameterError(f"speed must be 0 (unpaced) or positive, got {speed}", "use 1.0 for real time")
        self.speed = speed
        self._block_s = block_s
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._chunks: Iterable[np.ndarray]
        if isinstance(source, (str, Path)):
            path = Path(source)
            self.name = path.name
            self._chunks, self.sample_rate, self.channels = _open_file(path, block_s)
        elif isinstance(source, np.ndarray):
            self.name = "array"
            self.sample_rate = int(sample_rate or 16000)
            self.channels = 1 if source.ndim == 1 else source.shape[1]
            self._chunks = [source]
        else:
            self.name = "stream"
            self.sample_rate = int(sample_rate or 16000)
            self._chunks = source

    def start(self, ring: AudioRing) -> None:
        self._thread = threading.Thread(target=self._play, args=(ring,), name=f"ferrum-file-{self.name}",
                                         daemon=True)
        self._thread.start()

    def _play(self, ring: AudioRing) -> None:
        block = max(1, int(self._block_s * self.sample_rate))
        played = 0
        t0 = time.monotonic()
        try:
            for chunk in self._chunks:
                chunk = np.asarray(chunk, np.float32).reshape(len(chunk), -1)
                for i in range(0, len(chunk), block):
                    if self._stop.is_set():
                        return
                    frames = chunk[i:i + block]
                    if self.speed > 0:
                        due = t0 + played / self.sample_rate / self.speed
                        delay = due - time.monotonic()
                        if delay > 0:
                            time.sleep(delay)
                    else:
                        while not ring.wait_for_space(len(frames)):
                            if self._stop.is_set():
                                return
                    ring.put(frames)
                    played += len(frames)
                    self.last_frame_wall = time.monotonic()
        except FerrumError as exc:
            self.error = exc
        except Exception as exc:  # noqa: BLE001 - reported to the engine as a FerrumError
            self.error = wrap_unexpected(exc, f"reading {self.name}")
        finally:
            self.done = True
            ring.close()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)


def _open_file(path: Path, block_s: float):
    """(chunks at the native rate, rate, channels): soundfile where it can, else executors.audio.decode."""
    import soundfile as sf

    if not path.is_file():
        raise NotFoundError(f"Audio file {path} not found", "check the path")
    try:
        info = sf.info(str(path))
    except Exception:  # noqa: BLE001 - not a libsndfile format: decode with PyAV at 16 kHz mono
        from .decode import SAMPLE_RATE, iter_audio

        return iter_audio(path, chunk_seconds=1.0), SAMPLE_RATE, 1
    blocks = sf.blocks(str(path), blocksize=max(1, int(info.samplerate)), dtype="float32", always_2d=True)
    return blocks, int(info.samplerate), int(info.channels)
