"""The real audio stack: a private PulseAudio server plays a dev-set recording into a null sink,
sounddevice captures the sink's monitor through ALSA's "pulse" device, and the dictation engine
transcribes it.  Skipped (with the reason printed) only where PulseAudio cannot start."""

from __future__ import annotations

import threading
import time

import pytest

from tests.audio_fixtures import DEV_CLIP, SPEECH_DIR, read_reference
from tests.pulse import pulse_session
from tests.speech_eval import corpus_wer


@pytest.fixture(scope="module")
def pulse():
    with pulse_session() as server:
        yield server


def _run_in_thread(engine, source):
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(_capture(engine, source)), daemon=True)
    thread.start()
    return thread, outcome


def _capture(engine, source):
    try:
        return engine.run(source)
    except BaseException as exc:  # noqa: BLE001 - inspected by the test
        return exc


def _wait(predicate, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_pulse_device_is_listed(pulse):
    from executors.dictation import find_input_device, list_input_devices

    names = [d.name for d in list_input_devices()]
    assert "pulse" in names, names
    assert find_input_device("pulse").name == "pulse"


SHORT_CLIP = SPEECH_DIR / "asterisk" / "activated.flac"   # 1 s of loud speech


def _peak_while_playing(pulse, device) -> float:
    """The loudest sample captured from ``device`` while a short clip plays into the null sink."""
    import numpy as np

    from executors.dictation import MicrophoneSource

    source = MicrophoneSource(device)
    ring = source.ring_for(30.0)
    source.start(ring)
    try:
        played = pulse.play(SHORT_CLIP)
        assert played.returncode == 0, played.stderr
    finally:
        source.stop()
    frames, _ = ring.get()
    return float(np.abs(frames).max()) if frames.size else 0.0


def test_pulse_sources_are_listed_by_name_and_record_what_they_name(pulse):
    """Each PulseAudio source is an input of its own (not only "pulse"/"default"), and choosing one
    records from it even when the server's default source is another."""
    import subprocess

    from executors.dictation import list_input_devices

    other = subprocess.run(["pactl", "load-module", "module-null-sink", "sink_name=ferrum_quiet",
                            "sink_properties=device.description=Quiet"], env=pulse.env, capture_output=True, check=False,
                           text=True, timeout=20)
    assert other.returncode == 0, other.stderr
    subprocess.run(["pactl", "set-default-source", "ferrum_quiet.monitor"], env=pulse.env, check=True, timeout=20)
    try:
        devices = list_input_devices()
        named = {d.pulse_source: d for d in devices if d.pulse_source}
        assert {"ferrum_null.monitor", "ferrum_quiet.monitor"} <= set(named), [d.name for d in devices]
        assert named["ferrum_null.monitor"].name == "Monitor of Null Output"
        assert named["ferrum_quiet.monitor"].is_default and devices[0].pulse_source == "ferrum_quiet.monitor"
        assert sum(d.is_default for d in devices) == 1
        assert _peak_while_playing(pulse, named["ferrum_null.monitor"]) > 0.05  # the chosen source
        assert _peak_while_playing(pulse, "pulse") < 0.01  # the default (quiet) one hears nothing
    finally:
        subprocess.run(["pactl", "set-default-source", "ferrum_null.monitor"], env=pulse.env, timeout=20, check=False)
        subprocess.run(["pactl", "unload-module", other.stdout.strip()], env=pulse.env, timeout=20, check=False)


def test_microphone_capture_transcribes_played_clip(pulse, whisper_tiny, tmp_path):
    import soundfile as sf

    from executors.dictation import (
        Committed,
        DictationEngine,
        DictationOptions,
        Level,
        MicrophoneSource,
    )

    events = []
    record = tmp_path / "session.flac"
    engine = DictationEngine(whisper_tiny, DictationOptions(step_s=1.0, record_path=record), on_event=events.append)
    source = MicrophoneSource("pulse")
    thread, outcome = _run_in_thread(engine, source)
    _wait(lambda: any(isinstance(e, Level) for e in events), 20)
    played = pulse.play(DEV_CLIP)
    assert played.returncode == 0, played.stderr
    _wait(lambda: not engine._in_utt and any(isinstance(e, Committed) for e in events), 60)
    time.sleep(1.0)
    engine.stop()
    thread.join(120)
    assert not isinstance(outcome[0], BaseException), outcome[0]
    levels = [e.rms for e in events if isinstance(e, Level)]
    assert max(levels) > 0.01, "nothing was captured from the null sink's monitor"
    wer = corpus_wer([read_reference()], [engine.text])
    print(f"\ncaptured transcript (WER {wer:.1f} %): {engine.text}")
    assert wer <= 20.0, engine.text
    audio, rate = sf.read(str(record), dtype="float32")
    assert rate == 16000 and len(audio) / rate >= sf.info(str(DEV_CLIP)).duration


def test_server_vanishing_mid_stream_is_a_device_error(pulse, whisper_tiny, tmp_path):
    from executors.core.errors import DeviceError
    from executors.dictation import (
        DictationEngine,
        DictationOptions,
        Level,
        MicrophoneSource,
    )

    events = []
    engine = DictationEngine(whisper_tiny, DictationOptions(step_s=1.0, stall_s=2.0,
                                                            record_path=tmp_path / "cut.flac"),
                             on_event=events.append)
    thread, outcome = _run_in_thread(engine, MicrophoneSource("pulse"))
    _wait(lambda: sum(isinstance(e, Level) for e in events) > 5, 20)
    pulse.kill()
    thread.join(60)
    assert not thread.is_alive()
    assert isinstance(outcome[0], DeviceError), outcome[0]
    assert outcome[0].hint
    assert (tmp_path / "cut.flac").stat().st_size > 0  # the recording so far is kept
