"""``ferrum dictate --type``: committed text is also typed into the focused window.

The JSON events (or the plain text) still go to stdout, so nothing is lost when typing fails;
a failure is reported on stderr when it happens and makes the exit status 1 at the end.
"""

from __future__ import annotations

import sys


def add_arguments(parser) -> None:
    parser.add_argument("--type", action="store_true",
                        help="also type the committed text into the focused window (X11: xdotool; Wayland: "
                             "wtype or ydotool; macOS/Windows: pynput; else it goes to the clipboard)")
    parser.add_argument("--type-backend", default="auto", metavar="NAME",
                        help="auto (default), xdotool, wtype, ydotool, pynput or clipboard")
    parser.add_argument("--type-delay", type=int, default=None, metavar="MS",
                        help="milliseconds between typed keys (default 6)")


def start_typing(args):
    """A running ``TypingSession`` (checked before the model loads, so a desktop that cannot be typed
    into fails at once), or None without ``--type``."""
    if not args.type:
        return None
    from executors.dictation.typing import TypingOptions, TypingSession, make_typist

    options = TypingOptions(backend=args.type_backend)
    if args.type_delay is not None:
        options.key_delay_ms = args.type_delay
    typist = make_typist(options)
    if typist.note:
        print(typist.note, file=sys.stderr)
    return TypingSession(typist, on_error=lambda exc: print(f"ferrum: typing stopped: {exc}", file=sys.stderr,
                                                            flush=True))


def finish_typing(session) -> int:
    """Wait until every committed phrase is typed; 1 when some could not be."""
    if session is None:
        return 0
    session.close(wait=True, timeout=120)
    if session.error is None:
        return 0
    print(f"ferrum: {len(session.untyped)} phrase(s) were not typed; the whole text is in the output above",
          file=sys.stderr)
    return 1
