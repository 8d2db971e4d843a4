"""The fallback where no key can be sent: the session's text goes to the clipboard, to paste."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable

from .base import KEEP_TEXT_HINT, TypingUnavailableError, Typist, run_tool

# (tool argv, what it needs): the first one present copies
_COPY_TOOLS = (
    (["wl-copy"], "WAYLAND_DISPLAY"),
    (["xclip", "-selection", "clipboard"], "DISPLAY"),
    (["xsel", "--clipboard", "--input"], "DISPLAY"),
    (["pbcopy"], None),
    (["clip.exe"], None),
)


def clipboard_command(env=None) -> list[str] | None:
    env = os.environ if env is None else env
    for argv, needs in _COPY_TOOLS:
        if (needs is None or env.get(needs)) and shutil.which(argv[0]):
            return argv
    return None


class ClipboardTypist(Typist):
    """Keeps the whole session's text on the clipboard (each phrase appended), for one paste.

    ``copy``: a function that puts a string on the clipboard (the app passes Qt's clipboard);
    otherwise the first of wl-copy, xclip, xsel, pbcopy, clip.exe found."""

    name = "clipboard"

    def __init__(self, copy: Callable[[str], None] | None = None):
        self._copy = copy
        self.text = ""
        paste = "⌘V" if sys.platform == "darwin" else "Ctrl+V"
        self.note = f"Typing is not possible here: the dictated text is copied to the clipboard; paste it with {paste}."

    def check(self) -> None:
        if self._copy is None:
            argv = clipboard_command()
            if argv is None:
                raise TypingUnavailableError("No way to type or to reach the clipboard on this desktop",
                                             "install xdotool (X11), wtype or ydotool (Wayland), or wl-clipboard / "
                                             "xclip for the clipboard; " + KEEP_TEXT_HINT)
            self._copy = lambda text: run_tool(argv, text, timeout=10)

    def type_text(self, text: str) -> None:
        if self._copy is None:
            self.check()
        self.text += text
        self._copy(self.text)
