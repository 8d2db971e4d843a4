"""Typing dictated text into other apps, Qt-free: the phrase joiner, the typing session's rules
(committed text only, in order, nothing lost on failure), backend detection, and the X11 backend
typing into a real xterm on a private Xvfb display."""

from __future__ import annotations

import os

import pytest

from executors.dictation.events import Committed, Tentative, UtteranceEnd
from executors.dictation.typing import (
    PhraseJoiner,
    TargetLostError,
    TypingError,
    TypingOptions,
    TypingSession,
    TypingUnavailableError,
    Typist,
    make_typist,
    session_kind,
)
from executors.dictation.typing.clipboard import ClipboardTypist
from executors.dictation.typing.x11 import X11Display, XdotoolTypist
from tests.x11 import target, wait_for, wait_for_text, xserver  # noqa: F401 - fixtures


def joined(*phrases: str, **kw) -> str:
    joiner = PhraseJoiner(**kw)
    return "".join(joiner.join(p) for p in phrases)


# ---- PhraseJoiner ----------------------------------------------------------------------------

def test_phrases_are_joined_by_single_spaces():
    assert joined("Hello, my name", "is Anna.", "How are you?") == "Hello, my name is Anna. How are you?"


def test_sentence_starts_are_capitalised_and_the_rest_left_alone():
    assert joined("so we met", "at noon.", "then iPhone sales rose", "in May!", "and then") == \
        "So we met at noon. Then iPhone sales rose in May! And then"
    assert joined("she said “done.”", "okay") == "She said “done.” Okay"
    assert joined("(quietly) yes", capitalise_start=False) == "(quietly) yes"
    assert joined("“well", "yes”") == "“Well yes”"


def test_punctuation_and_brackets_attach_without_spaces():
    assert joined("It costs 10", "%, or so", "(roughly", ") today") == "It costs 10%, or so (roughly) today"
    assert joined("Wait", "...", "what?") == "Wait... What?"


def test_whitespace_inside_and_around_phrases_is_normalised():
    assert joined("  one   two ", "\tthree\n", "", "   ") == "One two three"


def test_a_joiner_can_continue_text_typed_earlier():
    joiner = PhraseJoiner(typed="Dear Sir.")
    assert joiner.join("thank you") == " Thank you"
    assert joiner.typed == "Dear Sir. Thank you"


# ---- TypingSession with a typist that records (the session's rules are under test) ------------

class RecordingTypist(Typist):
    name = "recording"

    def __init__(self, fail_at: int | None = None):
        self.pieces: list[str] = []
        self.fail_at = fail_at
        self.closed = False

    def type_text(self, text: str) -> None:
        if self.fail_at is not None and len(self.pieces) == self.fail_at:
            raise TargetLostError("The window you were dictating into has closed", "click into another window")
        self.pieces.append(text)

    def close(self) -> None:
        self.closed = True


def test_only_committed_text_is_typed_in_order():
    typist = RecordingTypist()
    session = TypingSession(typist)
    for event in [Tentative("hello my"), Committed("Hello, my", 0.0, 0.5), Tentative("name is"),
                  Committed("name is Anna.", 0.5, 1.2), UtteranceEnd(0.3, "Hello, my name is Anna."),
                  Tentative("how"), Committed("How are you?", 2.0, 2.8), Tentative("")]:
        session.feed(event)
    session.close()
    assert session.pending == 0
    assert typist.pieces == ["Hello, my", " name is Anna.", " How are you?"]
    assert session.typed == "Hello, my name is Anna. How are you?"
    assert typist.closed and not session.running and session.error is None


def test_a_failure_is_reported_once_and_later_phrases_are_kept():
    typist = RecordingTypist(fail_at=1)
    errors = []
    session = TypingSession(typist, on_error=errors.append)
    for text in ["One.", "Two.", "Three."]:
        session.phrase(text)
    session.close()
    assert typist.pieces == ["One."]
    assert len(errors) == 1 and isinstance(errors[0], TargetLostError) and errors[0].hint
    assert session.untyped == ["Two.", "Three."]
    assert session.typed == "One."  # the failed phrase is not counted as typed


def test_an_unexpected_exception_becomes_a_ferrum_error():
    class Broken(Typist):
        def type_text(self, text):
            raise OSError("broken pipe")

    errors = []
    session = TypingSession(Broken(), on_error=errors.append)
    session.phrase("hello")
    session.close()
    assert len(errors) == 1 and "typing dictated text" in errors[0].message and errors[0].hint


# ---- detection -------------------------------------------------------------------------------

def test_session_kind_from_the_environment():
    assert session_kind({"DISPLAY": ":0"}, "linux") == "x11"
    assert session_kind({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux") == "wayland"
    assert session_kind({"XDG_SESSION_TYPE": "wayland"}, "linux") == "wayland"
    assert session_kind({}, "linux") == "none"
    assert session_kind({}, "darwin") == "macos"
    assert session_kind({}, "win32") == "windows"


def test_no_desktop_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    with pytest.raises(TypingUnavailableError) as info:
        make_typist(TypingOptions(), env={}, platform="linux")
    assert "no desktop session" in info.value.message and "Dictation panel" in info.value.hint
    with pytest.raises(TypingUnavailableError) as info:
        make_typist(TypingOptions(backend="xdotool"))
    assert "DISPLAY is not set" in info.value.message


def test_an_x_display_that_does_not_answer_is_a_clear_error():
    with pytest.raises(TypingError) as info:
        XdotoolTypist(display=":4242").check()
    assert ":4242" in info.value.message and info.value.hint


def test_wayland_without_a_typing_tool_falls_back_to_the_clipboard(monkeypatch):
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    monkeypatch.setattr("shutil.which", lambda tool: None)  # neither wtype nor ydotool installed
    copied = []
    typist = make_typist(TypingOptions(), copy=copied.append, env={"WAYLAND_DISPLAY": "wayland-test"},
                         platform="linux")
    assert isinstance(typist, ClipboardTypist)
    assert "Ctrl+V" in typist.note and "wtype is not installed" in typist.note
    session = TypingSession(typist)
    for text in ["first words", "and more."]:
        session.phrase(text)
    session.close()
    assert copied == ["First words", "First words and more."]  # the whole text so far, for one paste


def test_an_unknown_backend_is_a_parameter_error():
    from executors.core.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError):
        make_typist(TypingOptions(backend="telepathy"))


# ---- X11: a real xterm on a private Xvfb display ------------------------------------------------

def test_xdotool_types_unicode_into_the_focused_xterm(xserver, target):
    typist = make_typist(TypingOptions(display=xserver.display, backend="auto"),
                         env={"DISPLAY": xserver.display}, platform="linux")
    assert isinstance(typist, XdotoolTypist)
    text = "Naïve café — “quotes”, it’s 42%!"
    typist.type_text(text)
    typist.close()
    assert wait_for_text(target, text) == text


def test_typing_stops_with_a_clear_error_when_the_focused_window_closes(xserver, target):
    errors = []
    session = TypingSession(XdotoolTypist(display=xserver.display), on_error=errors.append)
    session.phrase("before it closed.")
    assert wait_for_text(target, "Before it closed.") == "Before it closed."
    target.close()
    display = X11Display(xserver.display)
    try:
        assert wait_for(lambda: display.focused_window() is None)
    finally:
        display.close()
    session.phrase("after it closed")
    session.close()
    assert len(errors) == 1 and isinstance(errors[0], TargetLostError)
    assert "closed" in errors[0].message and "Dictation panel" in errors[0].hint
    assert session.untyped == ["after it closed"] and session.typed == "Before it closed."


def test_an_x_display_name_comes_from_the_environment(xserver, monkeypatch):
    monkeypatch.setenv("DISPLAY", xserver.display)
    display = X11Display()
    try:
        assert display.name == xserver.display and display.has_xtest()
        assert display.focused_window() is None  # nothing has the focus on a bare display
    finally:
        display.close()
    assert os.environ["DISPLAY"] == xserver.display


def test_typing_waits_while_the_user_holds_keys(xserver, target):
    """Ctrl+Alt still held from the stop shortcut would turn letters into control keys."""
    import time

    session = TypingSession(XdotoolTypist(display=xserver.display))
    xserver.xdotool("keydown", "ctrl+alt")
    try:
        session.phrase("he might even have been made amiable himself.")
        time.sleep(1.0)
        assert target.text() == ""  # nothing typed while the keys are down
    finally:
        xserver.xdotool("keyup", "ctrl+alt")
    session.close()
    assert session.error is None
    typed = "He might even have been made amiable himself."
    assert wait_for_text(target, typed) == typed
