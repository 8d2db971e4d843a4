"""A private PulseAudio server for audio-stack tests: a null sink whose monitor is the default
input, so what ``paplay --device=ferrum_null`` plays can be captured through PortAudio's ALSA
"pulse" device.  ``start_pulse`` returns None (with the reason) where PulseAudio cannot start."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SINK = "ferrum_null"


@dataclass
class PulseServer:
    runtime_dir: Path
    env: dict

    def play(self, path: Path, timeout: float = 60.0) -> subprocess.CompletedProcess:
        return subprocess.run(["paplay", f"--device={SINK}", str(path)], env=self.env, capture_output=True,
                              text=True, timeout=timeout, check=False)

    def play_async(self, path: Path) -> subprocess.Popen:
        return subprocess.Popen(["paplay", f"--device={SINK}", str(path)], env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def kill(self) -> None:
        subprocess.run(["pulseaudio", "--kill"], env=self.env, capture_output=True, timeout=20, check=False)
        for _ in range(50):
            if subprocess.run(["pulseaudio", "--check"], env=self.env, capture_output=True, check=False).returncode != 0:
                break
            time.sleep(0.1)


def start_pulse() -> tuple[PulseServer | None, str]:
    """(server, "") or (None, why it could not start)."""
    for tool in ("pulseaudio", "pactl", "paplay"):
        if shutil.which(tool) is None:
            return None, f"{tool} is not installed (Debian: pulseaudio pulseaudio-utils)"
    runtime = Path(tempfile.mkdtemp(prefix="ferrum-pulse-"))
    runtime.chmod(0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), PULSE_RUNTIME_PATH=str(runtime / "pulse"))
    cmd = ["pulseaudio", "--daemonize=yes", "--exit-idle-time=-1", "-n",
           f"--load=module-null-sink sink_name={SINK}", "--load=module-native-protocol-unix",
           "--load=module-always-sink"]
    started = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30, check=False)
    if started.returncode != 0:
        return None, f"pulseaudio did not start: {started.stderr.strip()[-300:]}"
    for _ in range(50):
        if subprocess.run(["pactl", "info"], env=env, capture_output=True, check=False).returncode == 0:
            break
        time.sleep(0.1)
    else:
        server = PulseServer(runtime, env)
        server.kill()
        return None, "pulseaudio started but pactl cannot reach it"
    subprocess.run(["pactl", "set-default-source", f"{SINK}.monitor"], env=env, capture_output=True, timeout=10, check=False)
    return PulseServer(runtime, env), ""


@contextlib.contextmanager
def pulse_session():
    """A private PulseAudio server that this process's audio stack uses while inside; skips the test
    (with the reason) where PulseAudio cannot start."""
    import pytest

    server, why = start_pulse()
    if server is None:
        print(f"\nSKIP: PulseAudio cannot start here: {why}")
        pytest.skip(f"PulseAudio cannot start here: {why}")
    saved = {k: os.environ.get(k) for k in ("XDG_RUNTIME_DIR", "PULSE_RUNTIME_PATH")}
    os.environ.update({k: server.env[k] for k in saved})
    from executors.audio.capture import sounddevice

    sd = sounddevice()
    sd._terminate()  # PortAudio enumerates ALSA devices at initialisation: see the new server
    sd._initialize()
    try:
        yield server
    finally:
        server.kill()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        sd._terminate()
        sd._initialize()
