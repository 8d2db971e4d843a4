"""Which backend can type on this desktop: X11, Wayland (a helper tool), macOS/Windows, or the
clipboard when none can."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable

from .base import KEEP_TEXT_HINT, TypingError, TypingOptions, TypingUnavailableError, Typist
from .clipboard import ClipboardTypist
from .native import PynputTypist
from .wayland import UINPUT, WtypeTypist, YdotoolTypist
from .x11 import XdotoolTypist

BACKENDS = ("xdotool", "wtype", "ydotool", "pynput", "clipboard")


def session_kind(env=None, platform: str | None = None) -> str:
    """"x11" | "wayland" | "macos" | "windows" | "none" (a Linux console or a headless box)."""
    env = os.environ if env is None else env
    platform = platform or sys.platform
    if platform == "darwin":
        return "macos"
    if platform.startswith("win"):
        return "windows"
    if env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE") == "wayland":
        return "wayland"
    return "x11" if env.get("DISPLAY") else "none"


def make_typist(options: TypingOptions | None = None, copy: Callable[[str], None] | None = None,
                env=None, platform: str | None = None) -> Typist:
    """The backend ``options.backend`` names, or for "auto" the best one this desktop allows, checked.

    ``copy`` puts text on the clipboard for the clipboard fallback (default: a clipboard tool).
    Raises ``TypingUnavailableError`` / ``TypingPermissionError`` saying what is missing."""
    options = options or TypingOptions()
    if options.backend != "auto":
        typist = _named(options, copy)
        typist.check()
        return typist
    kind = session_kind(env, platform)
    candidates = _candidates(kind, options, env)
    problems: list[TypingError] = []
    for typist in candidates:
        try:
            typist.check()
            return typist
        except TypingError as exc:
            problems.append(exc)
    if options.clipboard_fallback and kind != "none":
        fallback = ClipboardTypist(copy)
        try:
            fallback.check()
            fallback.note = f"{fallback.note} ({'; '.join(p.message for p in problems) or 'no typing tool'})"
            return fallback
        except TypingError as exc:
            problems.append(exc)
    if kind == "none":
        raise TypingUnavailableError("There is no desktop session to type into (neither DISPLAY nor "
                                     "WAYLAND_DISPLAY is set)", "run Ferrum inside your desktop session; " + KEEP_TEXT_HINT)
    first = problems[0]
    raise type(first)("; ".join(p.message for p in problems), first.hint)


def _candidates(kind: str, options: TypingOptions, env) -> list[Typist]:
    delay = options.key_delay_ms
    if kind == "x11":
        return [XdotoolTypist(options.display, delay)]
    if kind == "wayland":
        wayland = [YdotoolTypist(delay), WtypeTypist(delay)]
        if not (shutil.which("ydotool") and os.access(UINPUT, os.W_OK)):
            wayland.reverse()  # wtype first unless ydotool can surely work (it works on every compositor)
        return wayland
    if kind in ("macos", "windows"):
        return [PynputTypist()]
    return []


def _named(options: TypingOptions, copy) -> Typist:
    delay = options.key_delay_ms
    makers = {"xdotool": lambda: XdotoolTypist(options.display, delay), "wtype": lambda: WtypeTypist(delay),
              "ydotool": lambda: YdotoolTypist(delay), "pynput": PynputTypist, "clipboard": lambda: ClipboardTypist(copy)}
    if options.backend not in makers:
        from ...core.errors import InvalidParameterError

        raise InvalidParameterError(f"Unknown typing backend {options.backend!r}", f"use auto or one of {', '.join(BACKENDS)}")
    return makers[options.backend]()
