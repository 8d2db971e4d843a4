"""Wayland: apps may not send keys to other apps, so typing goes through a helper tool.

``wtype`` uses the virtual-keyboard protocol (wlroots compositors: Sway, Hyprland, labwc …);
``ydotool`` writes to the kernel's ``/dev/uinput`` and works on any desktop, given permission.
Which of them exists is detected; with neither, the clipboard fallback takes over.
"""

from __future__ import annotations

import os

from .base import KEEP_TEXT_HINT, TypingPermissionError, TypingUnavailableError, Typist, require_tool, run_tool

UINPUT = "/dev/uinput"


class _ToolTypist(Typist):
    """A command-line tool (the backend's ``name``) that reads the text to type on its stdin."""

    def __init__(self, key_delay_ms: int = 6):
        self.key_delay_ms = key_delay_ms
        self._tool: str | None = None

    def check(self) -> None:
        self._tool = require_tool(self.name, f"Debian/Ubuntu: sudo apt install {self.name}")
        self._can_run()

    def _can_run(self) -> None:
        """Raise when the tool is there but cannot work in this session."""

    def _argv(self) -> list[str]:
        raise NotImplementedError

    def type_text(self, text: str) -> None:
        if self._tool is None:
            self.check()
        run_tool(self._argv(), text)


class WtypeTypist(_ToolTypist):
    name = "wtype"

    def _can_run(self) -> None:
        if not os.environ.get("WAYLAND_DISPLAY"):
            raise TypingUnavailableError("wtype needs a Wayland session (WAYLAND_DISPLAY is not set)", KEEP_TEXT_HINT)
        # GNOME and KDE lack the virtual-keyboard protocol: wtype's own message says so on the first
        # phrase (detection prefers ydotool where /dev/uinput is writable)

    def _argv(self) -> list[str]:
        return [self._tool, "-d", str(self.key_delay_ms), "-"]


class YdotoolTypist(_ToolTypist):
    name = "ydotool"

    def _can_run(self) -> None:
        if not os.access(UINPUT, os.W_OK):
            raise TypingPermissionError(f"ydotool cannot write to {UINPUT}",
                                        "add yourself to the group that owns it (often 'input') or run "
                                        "ydotoold as a service; " + KEEP_TEXT_HINT)

    def _argv(self) -> list[str]:
        # --file works in ydotool 0.1 and 1.x alike; only 1.x reads "-" as standard input
        return [self._tool, "type", "--key-delay", str(self.key_delay_ms), "--file", "/dev/stdin"]
