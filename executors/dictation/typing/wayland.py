"""Wayland: apps may not send keys to other apps, so typing goes through a helper tool.

``wtype`` uses the virtual-keyboard protocol (wlroots compositors: Sway, Hyprland, labwc …);
``ydotool`` writes to the kernel's ``/dev/uinput`` and works on any desktop, given permission.
Which of them exists is detected; with neither, the clipboard fallback takes over.
"""

from __future__ import annotations

import os

from .base import KEEP_TEXT_HINT, Typist, TypingPermissionError, TypingUnavailableError, require_tool, run_tool

UINPUT = "/dev/uinput"


class WtypeTypist(Typist):
    name = "wtype"

    def __init__(self, key_delay_ms: int = 6):
        self.key_delay_ms = key_delay_ms

    def check(self) -> None:
        self._tool = require_tool("wtype", "Debian/Ubuntu: sudo apt install wtype")
        if not os.environ.get("WAYLAND_DISPLAY"):
            raise TypingUnavailableError("wtype needs a Wayland session (WAYLAND_DISPLAY is not set)", KEEP_TEXT_HINT)
        # GNOME and KDE lack the virtual-keyboard protocol: wtype's own message says so on the first
        # phrase (detection prefers ydotool where /dev/uinput is writable)

    def type_text(self, text: str) -> None:
        run_tool([self._tool, "-d", str(self.key_delay_ms), "-"], text)


class YdotoolTypist(Typist):
    name = "ydotool"

    def __init__(self, key_delay_ms: int = 6):
        self.key_delay_ms = key_delay_ms

    def check(self) -> None:
        self._tool = require_tool("ydotool", "Debian/Ubuntu: sudo apt install ydotool")
        if not os.access(UINPUT, os.W_OK):
            raise TypingPermissionError(f"ydotool cannot write to {UINPUT}",
                                        "add yourself to the group that owns it (often 'input') or run "
                                        "ydotoold as a service; " + KEEP_TEXT_HINT)

    def type_text(self, text: str) -> None:
        # --file works in ydotool 0.1 and 1.x alike; only 1.x reads "-" as standard input
        run_tool([self._tool, "type", "--key-delay", str(self.key_delay_ms), "--file", "/dev/stdin"], text)
