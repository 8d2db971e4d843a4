"""PulseAudio (and PipeWire's PulseAudio server) sources by name.

PortAudio reaches PulseAudio only through ALSA's "pulse" device, which records from the server's
default source; it lists neither the microphones nor the monitors by name. ``pulse_sources`` asks
the server itself (pulsectl, over libpulse), and ``recording_from`` makes the "pulse" device record
from a chosen source: libpulse reads ``PULSE_SOURCE`` when the device is opened.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

log = logging.getLogger(__name__)
_ENV_LOCK = threading.Lock()


@dataclass(frozen=True)
class PulseSource:
    name: str           # e.g. "alsa_input.usb-Blue_Yeti-00.analog-stereo"
    description: str    # e.g. "Yeti Stereo Microphone Analog Stereo"
    is_default: bool = False
    is_monitor: bool = False  # what an output plays (a "Monitor of …" source)


def pulse_sources(timeout: float = 1.0) -> list[PulseSource]:
    """The server's sources, the default first; [] when there is no PulseAudio server (or no libpulse)."""
    try:
        import pulsectl
    except (ImportError, OSError) as exc:  # not installed, or libpulse missing
        log.debug("PulseAudio sources unavailable: %s", exc)
        return []
    try:
        with pulsectl.Pulse("ferrum-desktop", connect=False) as pulse:
            pulse.connect(wait=False, timeout=timeout)
            default = pulse.server_info().default_source_name
            sources = [PulseSource(s.name, s.description or s.name, s.name == default,
                                   s.monitor_of_sink != 0xFFFFFFFF) for s in pulse.source_list()]
    except Exception as exc:  # noqa: BLE001 - no server running, refused, timed out
        log.debug("PulseAudio sources unavailable: %s", exc)
        return []
    return sorted(sources, key=lambda s: (not s.is_default, s.is_monitor, s.description.lower()))


@contextmanager
def recording_from(source_name: str | None) -> Iterator[None]:
    """While opening ALSA's "pulse" device, make it record from ``source_name`` (None: the default)."""
    if source_name is None:
        yield
        return
    with _ENV_LOCK:
        saved = os.environ.get("PULSE_SOURCE")
        os.environ["PULSE_SOURCE"] = source_name
        try:
            yield
        finally:
            if saved is None:
                os.environ.pop("PULSE_SOURCE", None)
            else:
                os.environ["PULSE_SOURCE"] = saved
