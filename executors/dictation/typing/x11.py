"""X11: key presses through XTest with xdotool, the keyboard focus watched with python-xlib.

xdotool types the text (keyboard layout, shift levels, modifiers the user still holds cleared
first); python-xlib tells us, before each phrase, whether any window still has the keyboard, so
text never goes to the void.  Characters missing from the keyboard map ("é" on a US layout, "—")
are bound to spare keycodes here, before xdotool runs, and stay bound for the session: xdotool's
own remapping reverts each binding right after the key press, and a busy app that reads the key a
moment later finds the old mapping and drops the character.
"""

from __future__ import annotations

import os
import re
import time

from .base import (
    KEEP_TEXT_HINT,
    TargetLostError,
    TypingPermissionError,
    TypingUnavailableError,
    Typist,
    require_tool,
    run_tool,
)

KEYS_UP_WAIT_S = 3.0   # longest wait for the user to let go of the keys before typing on
_NO_DISPLAY_HINT = "start Ferrum from a desktop session (or set DISPLAY); " + KEEP_TEXT_HINT


class X11Display:
    """One python-xlib connection to ``name`` (default ``$DISPLAY``), for focus queries."""

    def __init__(self, name: str | None = None):
        self.name = name or os.environ.get("DISPLAY") or ""
        if not self.name:
            raise TypingUnavailableError("There is no X display to type into (DISPLAY is not set)", _NO_DISPLAY_HINT)
        try:
            from Xlib import display, error
        except ImportError as exc:
            raise TypingUnavailableError("python-xlib is not installed", "pip install python-xlib") from exc
        try:
            self.display = display.Display(self.name)
        except error.DisplayNameError as exc:
            raise TypingUnavailableError(f"{self.name!r} is not a valid X display name", _NO_DISPLAY_HINT) from exc
        except (error.DisplayConnectionError, ConnectionError, OSError) as exc:
            text = str(exc)
            if "uthoriz" in text or "rotocol" in text:  # "Authorization required", "No protocol specified"
                raise TypingPermissionError(f"The X display {self.name} refused the connection: {text.strip()}",
                                            "run Ferrum as the user who owns the desktop session (XAUTHORITY)") from exc
            raise TypingUnavailableError(f"Cannot connect to the X display {self.name}: {text.strip()}",
                                         _NO_DISPLAY_HINT) from exc
        self.root = self.display.screen().root
        self._spare: list[int] | None = None   # keycodes the keyboard map leaves empty
        self._bound: dict[int, int] = {}        # keysym -> spare keycode bound to it

    def has_xtest(self) -> bool:
        return self.display.has_extension("XTEST")

    def focused_window(self) -> int | None:
        """The window with the keyboard focus, or None when key presses would reach no window."""
        from Xlib import X, error

        try:
            focus = self.display.get_input_focus().focus
            if isinstance(focus, int):  # X.NONE or X.PointerRoot
                if focus != X.PointerRoot:
                    return None
                child = self.root.query_pointer().child
                return child.id if child else None
            return None if focus.id == self.root.id else focus.id
        except (error.ConnectionClosedError, OSError) as exc:
            raise TypingUnavailableError(f"Lost the connection to the X display {self.name}", KEEP_TEXT_HINT) from exc

    def bind_missing(self, text: str) -> None:
        """Give every character of ``text`` that no key produces a spare keycode of its own."""
        wanted = {_keysym(ch) for ch in set(text) if ch.isprintable() and not ch.isspace()}
        missing = [k for k in wanted if k not in self._bound and not any(True for _ in self.display.keysym_to_keycodes(k))]
        if not missing:
            return
        if self._spare is None:
            first = self.display.display.info.min_keycode
            count = self.display.display.info.max_keycode - first + 1
            self._spare = [first + i for i, syms in enumerate(self.display.get_keyboard_mapping(first, count))
                           if not any(syms)]
        for keysym in missing:
            if not self._spare:  # every spare keycode used: recycle the oldest binding
                old_keysym, keycode = next(iter(self._bound.items()))
                del self._bound[old_keysym]
            else:
                keycode = self._spare.pop()
            self.display.change_keyboard_mapping(keycode, [(keysym, keysym)])
            self._bound[keysym] = keycode
        self.display.sync()

    def unbind(self) -> None:
        from Xlib import X

        for keycode in self._bound.values():
            self.display.change_keyboard_mapping(keycode, [(X.NoSymbol, X.NoSymbol)])
        self._bound.clear()
        self.display.sync()

    def wait_for_keys_up(self, timeout: float) -> bool:
        """Wait until no key is held down (True), or ``timeout`` seconds (False)."""
        deadline = time.monotonic() + timeout
        while any(self.display.query_keymap()):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def exists(self, window_id: int) -> bool:
        from Xlib import error

        try:
            self.display.create_resource_object("window", window_id).get_geometry()
            return True
        except (error.BadWindow, error.BadDrawable):
            return False

    def close(self) -> None:
        try:
            if self._bound:
                self.unbind()
            self.display.close()
        except Exception:  # noqa: BLE001 - the server may already be gone
            pass


def _keysym(ch: str) -> int:
    """X keysym of a character: Latin-1 keysyms equal the code point, the rest are 0x1000000 + it."""
    code = ord(ch)
    return code if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF else 0x1000000 + code


class XdotoolTypist(Typist):
    name = "xdotool"

    def __init__(self, display: str | None = None, key_delay_ms: int = 6):
        self.display_name = display
        self.key_delay_ms = key_delay_ms
        self._x: X11Display | None = None
        self._target: int | None = None   # the last window typed into

    def check(self) -> None:
        self._tool = require_tool("xdotool", "Debian/Ubuntu: sudo apt install xdotool")
        if self._x is None:
            self._x = X11Display(self.display_name)
        if not self._x.has_xtest():
            raise TypingUnavailableError(f"The X display {self._x.name} has no XTEST extension, so keys cannot be sent",
                                         "enable XTEST in the X server; " + KEEP_TEXT_HINT)

    def type_text(self, text: str) -> None:
        if self._x is None:
            self.check()
        window = self._x.focused_window()
        if window is None:
            gone = self._target is not None and not self._x.exists(self._target)
            raise TargetLostError("The window you were dictating into has closed" if gone
                                  else "No window has the keyboard focus, so the text cannot be typed",
                                  "click into the window you want to type into and start again; " + KEEP_TEXT_HINT)
        self._target = window
        self._x.bind_missing(text)
        env = dict(os.environ, DISPLAY=self._x.name)
        for word in re.findall(r"\s*\S+\s*", text) or [text]:
            # a key the user holds (the stop shortcut's Ctrl+Alt, say) would turn typed letters into
            # control keys, and while our shortcut's grab is held the keys would not reach the window
            self._x.wait_for_keys_up(KEYS_UP_WAIT_S)
            run_tool([self._tool, "type", "--clearmodifiers", "--delay", str(self.key_delay_ms), "--file", "-"],
                     word, env=env)

    def close(self) -> None:
        if self._x is not None:
            self._x.close()
            self._x = None
