"""macOS and Windows: key presses through pynput (Quartz events / SendInput)."""

from __future__ import annotations

import sys

from .base import KEEP_TEXT_HINT, TypingError, TypingPermissionError, TypingUnavailableError, Typist


class PynputTypist(Typist):
    name = "pynput"

    def check(self) -> None:
        if getattr(self, "_keyboard", None) is not None:
            return
        try:
            from pynput.keyboard import Controller
        except ImportError as exc:
            raise TypingUnavailableError(f"pynput cannot send keys here: {exc}",
                                         "pip install pynput (macOS and Windows); " + KEEP_TEXT_HINT) from exc
        if sys.platform == "darwin" and not _macos_trusted():
            raise TypingPermissionError("macOS does not allow Ferrum to type into other apps",
                                        "System Settings → Privacy & Security → Accessibility: turn on Ferrum "
                                        "(or the terminal that runs it), then start again; " + KEEP_TEXT_HINT)
        self._keyboard = Controller()

    def type_text(self, text: str) -> None:
        self.check()
        try:
            self._keyboard.type(text)
        except Exception as exc:  # noqa: BLE001 - pynput raises its own types per platform
            hint = KEEP_TEXT_HINT
            if sys.platform == "win32":  # UIPI: a normal process cannot type into an elevated window
                hint = "windows of programs run as administrator refuse keys from normal programs; " + hint
            raise TypingError(f"Could not type: {exc}", hint) from exc


def _macos_trusted() -> bool:
    try:
        from ApplicationServices import AXIsProcessTrusted  # pyobjc, installed with pynput on macOS
    except ImportError:
        return True  # cannot tell: let the first phrase show whether keys arrive
    return bool(AXIsProcessTrusted())
