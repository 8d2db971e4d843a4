"""``GlobalShortcut``: a key chord that works while another app has the keyboard (and while our
window is minimised), for starting and stopping dictation.  Where the desktop does not allow one
(Wayland, a headless screen) it says so in ``status`` instead."""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication

from executors.core.errors import FerrumError

DEFAULT_CHORD = "Ctrl+Alt+Space"
WAYLAND_NOTE = ("Wayland does not let an app listen for keys pressed in other apps: bind a shortcut in your "
                "desktop's keyboard settings to the command “ferrum-gui --toggle-dictation” instead.")


class GlobalShortcut(QObject):
    activated = Signal()             # on the GUI thread, once per press
    statusChanged = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.chord = ""
        self.status = "Off"
        self.active = False
        self._backend = None

    def register(self, chord: str, platform: str | None = None, display: str | None = None) -> bool:
        """Listen for ``chord`` system-wide (replacing any earlier one); False with ``status`` saying why."""
        self.unregister()
        self.chord = chord
        platform = platform or QGuiApplication.platformName()
        try:
            self._backend = self._make_backend(chord, platform, display)
            if self._backend is None:
                return False
            self._backend.start()
        except FerrumError as exc:
            self._backend = None
            self._set_status(str(exc))
            return False
        self.active = True
        self._set_status(f"{chord} starts and stops dictation from any app.")
        return True

    def unregister(self) -> None:
        if self._backend is not None:
            self._backend.stop()
            self._backend = None
        if self.active:
            self.active = False
            self._set_status("Off")

    def _make_backend(self, chord: str, platform: str, display: str | None):
        from .hotkeys import PynputHotkey, X11KeyGrab

        emit = self.activated.emit  # from the listener thread: Qt queues it to the GUI thread
        if platform == "xcb":
            return X11KeyGrab(chord, emit, display)
        if platform in ("cocoa", "windows"):
            return PynputHotkey(chord, emit)
        if platform.startswith("wayland") or os.environ.get("WAYLAND_DISPLAY"):
            self._set_status(WAYLAND_NOTE)
        else:
            self._set_status(f"Global shortcuts are not available on the “{platform}” display.")
        return None

    def _set_status(self, text: str) -> None:
        self.status = text
        self.statusChanged.emit(text)
