"""System-wide key chords without Qt: an X11 key grab on its own thread, and pynput's hotkeys on
macOS and Windows.  ``ferrum_gui.anywhere.global_shortcut`` wraps them for the app.

Chords are written the way Qt writes them ("Ctrl+Alt+Space", "Meta+F9").
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable

from executors.core.errors import ConfigError, DeviceError, UnsupportedError

_MODIFIERS = {"ctrl": "ctrl", "control": "ctrl", "alt": "alt", "shift": "shift", "meta": "super",
              "super": "super", "win": "super", "cmd": "super"}
_QT_TO_X = {"esc": "Escape", "ins": "Insert", "del": "Delete", "pgup": "Prior", "pgdown": "Next",
            "backspace": "BackSpace", "enter": "Return", "return": "Return", "space": "space", "tab": "Tab",
            "print": "Print", "pause": "Pause", "scrolllock": "Scroll_Lock", "home": "Home", "end": "End",
            "left": "Left", "right": "Right", "up": "Up", "down": "Down"}
_QT_TO_PYNPUT = {"esc": "esc", "ins": "insert", "del": "delete", "pgup": "page_up", "pgdown": "page_down",
                 "return": "enter", "scrolllock": "scroll_lock", "print": "print_screen"}
REPEAT_S = 0.35   # presses closer than this are the key's auto-repeat, not a second press


class ShortcutError(ConfigError):
    """The chord cannot be used (unknown key, taken by another app)."""


def parse_chord(text: str) -> tuple[frozenset[str], str]:
    """"Ctrl+Alt+Space" -> ({"ctrl", "alt"}, "space"); the key is lower-case (letters) or Qt's name."""
    parts = [p.strip() for p in text.replace(" ", "").split("+")]
    if text.endswith("++"):  # "Ctrl++": the plus key itself
        parts = parts[:-2] + ["+"]
    *mods, key = parts if parts else [""]
    unknown = [m for m in mods if m.lower() not in _MODIFIERS]
    if not key or unknown or not mods:
        raise ShortcutError(f"{text!r} is not a usable global shortcut",
                            "use one or more of Ctrl, Alt, Shift, Meta plus one key, e.g. Ctrl+Alt+Space")
    return frozenset(_MODIFIERS[m.lower()] for m in mods), key.lower() if len(key) == 1 else key


class X11KeyGrab:
    """Grabs ``chord`` on the X root window; ``on_press()`` runs on the grab's thread for each press."""

    def __init__(self, chord: str, on_press: Callable[[], None], display: str | None = None):
        self.chord = chord
        self.on_press = on_press
        self.display_name = display or os.environ.get("DISPLAY", "")
        self._thread: threading.Thread | None = None
        self._wake_r = self._wake_w = -1

    def start(self) -> None:
        from Xlib import XK, X, display, error

        mods, key = parse_chord(self.chord)
        try:
            self._display = display.Display(self.display_name or None)
        except (error.DisplayError, ConnectionError, OSError) as exc:
            raise DeviceError(f"Cannot reach the X display {self.display_name or '(none)'}: {exc}",
                              "global shortcuts need a desktop session") from exc
        keysym = XK.string_to_keysym(_QT_TO_X.get(key.lower(), key)) or (ord(key) if len(key) == 1 else 0)
        self._keycode = self._display.keysym_to_keycode(keysym) if keysym else 0
        if not self._keycode:
            self._display.close()
            raise ShortcutError(f"No key on this keyboard gives {key!r}", "choose another key for the shortcut")
        mask = 0
        for mod in mods:
            mask |= {"ctrl": X.ControlMask, "alt": X.Mod1Mask, "shift": X.ShiftMask, "super": X.Mod4Mask}[mod]
        root = self._display.screen().root
        caught = error.CatchError(error.BadAccess)
        self._masks = [mask | extra for extra in (0, X.LockMask, X.Mod2Mask, X.LockMask | X.Mod2Mask)]  # Caps/NumLock
        for m in self._masks:
            root.grab_key(self._keycode, m, True, X.GrabModeAsync, X.GrabModeAsync, onerror=caught)
        self._display.sync()
        if caught.get_error() is not None:
            self._ungrab()
            self._display.close()
            raise ShortcutError(f"{self.chord} is already taken by another application",
                                "choose another shortcut in Preferences → Dictation")
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._listen, name="ferrum-global-shortcut", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        os.write(self._wake_w, b"x")
        self._thread.join(5)
        self._thread = None
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        try:
            self._ungrab()
            self._display.close()
        except Exception:  # noqa: BLE001 - the X server may be gone already
            pass

    def _ungrab(self) -> None:
        root = self._display.screen().root
        for m in self._masks:
            root.ungrab_key(self._keycode, m)
        self._display.sync()

    def _listen(self) -> None:
        from Xlib import X

        last = 0.0
        fd = self._display.fileno()
        while True:
            ready, _, _ = select.select([fd, self._wake_r], [], [])
            if self._wake_r in ready:
                return
            try:
                pending = self._display.pending_events()
            except Exception:  # noqa: BLE001 - connection lost: the shortcut simply stops
                return
            for _ in range(pending):
                event = self._display.next_event()
                if event.type == X.KeyPress and event.detail == self._keycode:
                    now = time.monotonic()
                    if now - last > REPEAT_S:
                        self.on_press()
                    last = now


class PynputHotkey:
    """macOS / Windows: pynput's ``GlobalHotKeys`` (a listener thread; macOS asks for Input Monitoring)."""

    def __init__(self, chord: str, on_press: Callable[[], None]):
        self.chord = chord
        self.on_press = on_press
        self._listener = None

    def start(self) -> None:
        try:
            from pynput import keyboard
        except ImportError as exc:
            raise UnsupportedError(f"Global shortcuts need pynput here: {exc}", "pip install pynput") from exc
        mods, key = parse_chord(self.chord)
        names = {"ctrl": "<ctrl>", "alt": "<alt>", "shift": "<shift>", "super": "<cmd>"}
        pynput_key = key if len(key) == 1 else f"<{_QT_TO_PYNPUT.get(key.lower(), key.lower())}>"
        combo = "+".join([names[m] for m in sorted(mods)] + [pynput_key])
        self._listener = keyboard.GlobalHotKeys({combo: self.on_press})
        self._listener.start()

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.stop()
            self._listener = None
