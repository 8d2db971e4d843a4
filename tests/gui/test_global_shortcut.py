"""The global shortcut: chords parsed the way Qt writes them, the X11 key grab on a private Xvfb
display (a real key chord sent through XTest by xdotool), the app's handler starting and stopping
dictation with it, a clear note where the desktop allows none, and ``ferrum-gui --toggle-dictation``
handing the command to the running app."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from ferrum_gui.anywhere.hotkeys import ShortcutError, X11KeyGrab, parse_chord
from tests.audio_fixtures import joined_clips
from tests.x11 import wait_for, xserver  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parents[2]
CHORD = "Ctrl+Alt+Space"


def test_chords_are_parsed_as_qt_writes_them():
    assert parse_chord("Ctrl+Alt+Space") == (frozenset({"ctrl", "alt"}), "Space")
    assert parse_chord("Meta+Shift+D") == (frozenset({"super", "shift"}), "d")
    assert parse_chord("Ctrl+F9") == (frozenset({"ctrl"}), "F9")
    assert parse_chord("Ctrl++") == (frozenset({"ctrl"}), "+")
    for bad in ("", "Space", "Hyper+K", "Ctrl+"):
        with pytest.raises(ShortcutError) as info:
            parse_chord(bad)
        assert info.value.hint


def test_the_x11_grab_sees_the_real_chord_and_refuses_a_taken_one(xserver):
    presses = []
    grab = X11KeyGrab(CHORD, lambda: presses.append(threading.current_thread().name), xserver.display)
    grab.start()
    try:
        xserver.xdotool("key", "ctrl+alt+space")
        assert wait_for(lambda: len(presses) == 1)
        xserver.xdotool("key", "ctrl+alt+d")        # another chord: not ours
        xserver.xdotool("key", "space")
        time.sleep(0.5)
        xserver.xdotool("key", "ctrl+alt+space")
        assert wait_for(lambda: len(presses) == 2)
        time.sleep(0.3)
        assert presses == ["ferrum-global-shortcut"] * 2
        with pytest.raises(ShortcutError) as info:      # a second client cannot have the same chord
            X11KeyGrab(CHORD, lambda: None, xserver.display).start()
        assert "already taken" in info.value.message and "Preferences" in info.value.hint
    finally:
        grab.stop()
    again = X11KeyGrab(CHORD, lambda: None, xserver.display)
    again.start()  # released by stop()
    again.stop()
    assert not any(t.name == "ferrum-global-shortcut" for t in threading.enumerate())


def test_the_shortcut_starts_and_stops_dictation(main_window, xserver, wait_until, listen, tmp_path):
    anywhere = main_window.anywhere
    panel = main_window.panels["dictation"]
    assert anywhere.shortcut.register(CHORD, platform="xcb", display=xserver.display)
    assert CHORD in anywhere.shortcut.status and anywhere.tray.toggle_action.text() == f"Start dictation ({CHORD})"
    states = []
    listen(panel.stateChanged, states.append)
    try:
        # a session running (a file played in real time): the chord stops it long before its end
        wav, _ = joined_clips(tmp_path / "speech.wav")
        panel.start_file(wav, speed=1)
        wait_until(lambda: panel.state == "listening", timeout=120)
        started = time.monotonic()
        xserver.xdotool("key", "ctrl+alt+space")
        wait_until(lambda: panel.state == "idle", timeout=60)
        assert time.monotonic() - started < 15 and "stopping" in states
        # idle: the chord starts a session (on the chosen microphone, if this machine has one)
        states.clear()
        time.sleep(0.5)
        xserver.xdotool("key", "ctrl+alt+space")
        wait_until(lambda: states and states[0] == "starting", timeout=30)
        wait_until(lambda: panel.state in ("idle", "listening"), timeout=60)
        if panel.state == "listening":
            xserver.xdotool("key", "ctrl+alt+space")
            wait_until(lambda: panel.state == "idle", timeout=60)
    finally:
        anywhere.shortcut.unregister()
    assert not anywhere.shortcut.active and anywhere.tray.toggle_action.text() == "Start dictation"


def test_where_no_global_shortcut_is_possible_the_status_says_why(main_window, monkeypatch):
    shortcut = main_window.anywhere.shortcut
    assert not shortcut.register(CHORD, platform="wayland")
    assert "ferrum-gui --toggle-dictation" in shortcut.status
    assert not shortcut.register(CHORD, platform="offscreen")
    assert "not available" in shortcut.status
    assert not shortcut.active


def test_toggle_dictation_goes_to_the_running_app(qtbot, monkeypatch):
    from ferrum_gui.shell.instance import InstanceServer

    name = f"ferrum-test-{uuid.uuid4().hex[:8]}"
    server = InstanceServer(name)
    assert server.listening
    try:
        env = dict(os.environ, FERRUM_INSTANCE_NAME=name, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
        with qtbot.waitSignal(server.commandReceived, timeout=60000) as received:
            process = subprocess.Popen([sys.executable, "-m", "ferrum_gui.app", "--toggle-dictation"], env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert received.args == ["toggle-dictation"]
        assert process.wait(60) == 0, process.stdout.read()
        second = InstanceServer(name)  # a second app does not steal the name from the first
        assert not second.listening
        second.close()
    finally:
        server.close()
        qtbot.wait(100)
