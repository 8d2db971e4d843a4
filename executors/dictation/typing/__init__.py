"""Typing dictated text into whichever window has the keyboard focus (Qt-free).

``make_typist(TypingOptions)`` picks and checks a backend (X11: xdotool; Wayland: wtype or
ydotool; macOS/Windows: pynput; else the clipboard); ``TypingSession(typist)`` types the
committed phrases of a session, joined by ``PhraseJoiner`` (spacing, sentence capitals).
"""

from .base import (
    TargetLostError,
    TypingError,
    TypingOptions,
    TypingPermissionError,
    TypingUnavailableError,
    Typist,
)
from .detect import BACKENDS, make_typist, session_kind
from .joiner import PhraseJoiner
from .session import TypingSession

__all__ = [
    "BACKENDS",
    "PhraseJoiner",
    "TargetLostError",
    "TypingError",
    "TypingOptions",
    "TypingPermissionError",
    "TypingSession",
    "TypingUnavailableError",
    "Typist",
    "make_typist",
    "session_kind",
]
