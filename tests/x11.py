"""A private Xvfb display and a real target window (an xterm whose ``cat`` writes every key it gets
to a file) for the tests that type into other apps or grab global keys.  Every process started
here is ended by the fixture that started it."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class XServer:
    display: str
    process: subprocess.Popen

    @property
    def env(self) -> dict:
        return dict(os.environ, DISPLAY=self.display, LANG="C.UTF-8", LC_ALL="C.UTF-8")

    def xdotool(self, *args: str, timeout: float = 20.0) -> str:
        done = subprocess.run(["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=timeout,
                              check=True)
        return done.stdout.strip()

    def stop(self) -> None:
        stop_process(self.process)


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def start_xvfb() -> tuple[XServer | None, str]:
    """(server, "") or (None, why not): Xvfb picks a free display number itself (-displayfd)."""
    for tool in ("Xvfb", "xdotool", "xterm"):
        if shutil.which(tool) is None:
            return None, f"{tool} is not installed (Debian: xvfb xdotool xterm)"
    read, write = os.pipe()
    process = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp",
                                "-noreset"],  # no server reset when the last client leaves between steps
                               pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    number = b""
    with os.fdopen(read, "rb") as pipe:
        while not number.endswith(b"\n"):
            chunk = pipe.read(1)
            if not chunk:
                break
            number += chunk
    if not number.strip().isdigit():
        stop_process(process)
        return None, "Xvfb did not report a display number"
    return XServer(f":{int(number)}", process), ""


@dataclass
class Target:
    """An xterm running ``cat > path`` with the keyboard focus: what it is typed, ``path`` holds."""
    server: XServer
    process: subprocess.Popen
    window: str
    path: Path

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8", errors="replace") if self.path.exists() else ""

    def focus(self) -> None:
        self.server.xdotool("windowfocus", "--sync", self.window)

    def close(self) -> None:
        stop_process(self.process)


def open_target(server: XServer, path: Path, geometry: str = "100x20+10+10", font_size: int = 0) -> Target:
    # -icanon: cat gets each key as it is typed (no line buffering, no 4 KiB line limit)
    font = ["-fa", "DejaVu Sans Mono", "-fs", str(font_size)] if font_size else []
    process = subprocess.Popen(["xterm", "-u8", *font, "-geometry", geometry, "-e", "sh", "-c",
                                f"stty -icanon; exec cat > '{path}'"], env=server.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    window = server.xdotool("search", "--sync", "--onlyvisible", "--pid", str(process.pid), timeout=30).splitlines()[0]
    target = Target(server, process, window, path)
    target.focus()
    wait_for(path.exists, 10)
    return target


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def wait_for_text(target: Target, expected: str, timeout: float = 20.0) -> str:
    """What ``target`` holds once it has as many characters as ``expected`` (or at the timeout)."""
    wait_for(lambda: len(target.text()) >= len(expected), timeout)
    return target.text()


# ---- fixtures: import them into a test module (``from tests.x11 import xserver, target``) ----

import pytest  # noqa: E402


@pytest.fixture(scope="module")
def xserver():
    server, why = start_xvfb()
    if server is None:
        pytest.fail(f"cannot start the X tests: {why} (make system-deps installs what they need)")
    yield server
    server.stop()


@pytest.fixture
def target(xserver, tmp_path):
    window = open_target(xserver, tmp_path / "typed.txt")
    yield window
    window.close()
