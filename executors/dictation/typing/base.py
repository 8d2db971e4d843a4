"""The ``Typist`` interface every typing backend implements, its options and its errors."""

from __future__ import annotations

import shutil
import subprocess
from abc import ABC, abstractmethod
from dataclasses import dataclass

from ...core.errors import DeviceError

KEEP_TEXT_HINT = "the text stays in the Dictation panel (and its history when saved)"


class TypingError(DeviceError):
    """Typing into the focused window failed (the keyboard is the device here)."""


class TypingUnavailableError(TypingError):
    """No way to type on this desktop: no display, no tool, an unsupported platform."""


class TypingPermissionError(TypingError, PermissionError):
    """The desktop refused to let us send key presses."""


class TargetLostError(TypingError):
    """The window that had the keyboard focus went away mid-session."""


@dataclass
class TypingOptions:
    backend: str = "auto"          # auto | xdotool | wtype | ydotool | pynput | clipboard
    key_delay_ms: int = 6          # between key presses; some apps drop keys sent faster
    display: str | None = None     # X11 display (default: $DISPLAY)
    capitalise_start: bool = True  # the session's first phrase starts a sentence
    clipboard_fallback: bool = True  # no way to type: put the text on the clipboard instead


class Typist(ABC):
    """Sends text to whatever window has the keyboard focus.  Calls come from one thread."""

    name = "typist"
    note = ""          # shown to the user when this backend is chosen (e.g. "paste with Ctrl+V")

    def check(self) -> None:
        """Raise a ``TypingError`` now if typing cannot work (called before a session starts)."""

    @abstractmethod
    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused window (raises ``TypingError``)."""

    def close(self) -> None:
        """Release what the backend holds (display connections)."""


def require_tool(tool: str, install: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise TypingUnavailableError(f"{tool} is not installed, so dictated text cannot be typed",
                                     f"install it ({install}); {KEEP_TEXT_HINT}")
    return path


def run_tool(argv: list[str], text: str | None, env: dict | None = None, timeout: float = 60.0) -> None:
    """Run a typing tool with ``text`` on its standard input; a failure becomes a ``TypingError``."""
    try:
        done = subprocess.run(argv, input=text, env=env, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TypingError(f"{argv[0]} could not type: {exc}", KEEP_TEXT_HINT) from exc
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        raise TypingError(f"{argv[0]} could not type: {why[-1] if why else f'exit status {done.returncode}'}",
                          KEEP_TEXT_HINT)
