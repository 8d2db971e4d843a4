"""Dictating into other apps from the real main window: the panel's "Type into the focused app"
switch types a file-fed session's committed text into an xterm on a private Xvfb display; a
typing failure keeps the text; the caption overlay and the tray icon follow the session; the
choices persist in QSettings."""

from __future__ import annotations

import difflib

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QToolButton

from tests.audio_fixtures import DEV_CLIP, joined_clips
from tests.speech_eval import normalize
from tests.x11 import target, xserver  # noqa: F401 - fixtures


def words(text: str) -> list[str]:
    return normalize(text).split()


@pytest.fixture
def dictation(main_window):
    return main_window.show_panel("dictation")


@pytest.fixture
def x11_desktop(xserver, monkeypatch):
    """Typing goes to the private Xvfb display (the Qt windows themselves stay offscreen)."""
    monkeypatch.setenv("DISPLAY", xserver.display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    return xserver


def committed_events(panel, listen) -> list[str]:
    from executors.dictation import Committed

    phrases: list[str] = []
    listen(panel.eventReceived, lambda e: phrases.append(e.text) if isinstance(e, Committed) else None)
    return phrases


def test_the_switch_types_committed_text_into_the_focused_app(dictation, x11_desktop, target, wait_until, listen,
                                                              host):
    from executors.dictation import Tentative

    failures = []
    listen(host.failure, failures.append)
    phrases = committed_events(dictation, listen)
    tentatives: list[str] = []
    listen(dictation.eventReceived, lambda e: tentatives.append(e.text) if isinstance(e, Tentative) else None)
    dictation.typing.switch.click()
    assert dictation.typing.enabled
    dictation.start_file(DEV_CLIP, speed=0)
    wait_until(lambda: dictation.state == "listening", timeout=120)
    wait_until(lambda: dictation.state == "idle", timeout=300)
    assert dictation.typing.session is None  # closed (and drained) with the session
    typed = target.text()
    panel_text = dictation.committed_text()
    assert len(phrases) >= 2 and any(tentatives)
    ratio = difflib.SequenceMatcher(None, words(typed), words(panel_text), autojunk=False).ratio()
    assert ratio >= 0.98, (typed, panel_text)
    assert set(words(typed)) <= set(words(" ".join(phrases)))  # no tentative-only word arrived
    assert not failures and "Typing stopped" not in dictation.message.text()


def test_a_typing_failure_is_reported_and_the_text_kept(dictation, x11_desktop, wait_until, listen, host):
    failures = []
    listen(host.failure, failures.append)
    errors = []
    listen(dictation.typing.typingFailed, errors.append)
    dictation.typing.set_enabled(True)
    dictation.start_file(DEV_CLIP, speed=0)  # no window has the keyboard on the bare display
    wait_until(lambda: dictation.state == "idle" and dictation.committed_text(), timeout=300)
    wait_until(lambda: errors, timeout=30)
    from executors.dictation.typing import TargetLostError

    assert isinstance(errors[0], TargetLostError) and "keyboard focus" in errors[0].message
    assert errors[0] in failures  # the app's one notification path
    assert "Typing stopped" in dictation.message.text()
    assert len(dictation.committed_text().split()) >= 10  # every word still in the panel


def test_overlay_and_tray_follow_the_session(main_window, dictation, wait_until, listen, tmp_path):
    from executors.dictation import Tentative

    anywhere = main_window.anywhere
    overlay, tray = anywhere.overlay, anywhere.tray
    assert not overlay.isVisible()
    flags = overlay.windowFlags()
    for flag in (Qt.WindowType.FramelessWindowHint, Qt.WindowType.WindowStaysOnTopHint,
                 Qt.WindowType.WindowDoesNotAcceptFocus):
        assert flags & flag
    assert overlay.testAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
    anywhere.captions_switch.click()
    assert overlay.isVisible() and tray.captions_action.isChecked()

    seen = []

    def snapshot(event):
        if isinstance(event, Tentative) and event.text:
            seen.append((overlay.state_label.text(), overlay.caption_text(), tray.status_action.text(),
                         tray.toggle_action.text()))

    listen(dictation.eventReceived, snapshot)
    wav, _ = joined_clips(tmp_path / "speech.wav")
    dictation.start_file(wav, speed=0)
    wait_until(lambda: dictation.state == "idle" and dictation.committed_text(), timeout=300)
    state_text, caption, tray_status, tray_toggle = seen[0]
    assert "Listening" in state_text and "<i>" in caption and "#a8a8a8" in caption  # the tentative tail, greyed
    assert tray_status == "Dictation: listening" and tray_toggle.startswith("Stop dictation")
    assert "Not listening" in overlay.state_label.text() and overlay.tentative_text() == ""
    assert words(overlay.committed_text()) == words(dictation.committed_text())
    last_words = dictation.committed_text().split()[-3:]
    assert " ".join(last_words) in overlay.caption_text()
    assert tray.status_action.text() == "Dictation: not listening" and tray.toggle_action.text().startswith("Start")
    assert "not listening" in tray.icon.toolTip()

    overlay.findChild(QToolButton).click()  # the overlay's × hides it and turns the switch off
    assert not overlay.isVisible() and not anywhere.captions_switch.isChecked()


def test_the_overlay_shows_the_tail_of_a_long_session(qtbot):
    from executors.dictation import Committed, Tentative
    from ferrum_gui.anywhere.overlay import TAIL_CHARS, CaptionOverlay

    overlay = CaptionOverlay()
    qtbot.addWidget(overlay)
    overlay.set_state("starting")
    for i in range(40):
        overlay.on_event(Committed(f"phrase number {i} of the talk", i, i + 1))
    overlay.on_event(Tentative("and the next words"))
    shown = overlay.caption_text()
    assert shown.startswith("…") and "phrase number 39 of the talk" in shown and "and the next words" in shown
    assert len(shown) < TAIL_CHARS + 120 and "phrase number 0 " not in shown
    overlay.set_state("listening")
    overlay.set_state("idle")
    overlay.set_state("starting")  # a new session starts with an empty strip
    assert overlay.committed_text() == "" and "Captions appear here" in overlay.caption_text()


def test_the_tray_menu_stops_a_running_session(main_window, dictation, wait_until, tmp_path):
    tray = main_window.anywhere.tray
    wav, _ = joined_clips(tmp_path / "speech.wav")
    dictation.start_file(wav, speed=1)
    wait_until(lambda: dictation.state == "listening", timeout=120)
    assert tray.toggle_action.text().startswith("Stop dictation")
    tray.toggle_action.trigger()
    assert dictation.state == "stopping"
    wait_until(lambda: dictation.state == "idle", timeout=60)
    assert tray.toggle_action.text().startswith("Start dictation")


def test_choices_persist_in_qsettings(main_window, dictation, host, run_async):
    import asyncio

    from ferrum_gui.anywhere.controller import AnywhereSettings
    from ferrum_gui.shell.main_window import MainWindow

    anywhere = main_window.anywhere
    assert anywhere.settings == AnywhereSettings()  # a fresh settings file: the defaults
    dictation.typing.switch.click()
    anywhere.tray.captions_action.trigger()
    saved = AnywhereSettings.load(main_window.qsettings)
    assert saved.type_into_focused and saved.captions
    assert anywhere.tray.typing_action.isChecked() and anywhere.captions_switch.isChecked()

    path = main_window.qsettings.fileName()
    again = MainWindow(host, QSettings(path, QSettings.Format.IniFormat))
    try:
        assert again.panels["dictation"].typing.enabled and again.anywhere.overlay.isVisible()
        run_async(asyncio.sleep(0.5))  # let its start-up tasks (history, devices) finish
    finally:
        again.close()
        again.deleteLater()
