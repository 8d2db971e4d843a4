"""Dictation as a user finishes a session, on the real main window: the text can be corrected before
saving, saving twice keeps one history entry (updated), and the input is offered by the name of the
PulseAudio source and remembered for the next start."""

from __future__ import annotations


import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest

from tests.audio_fixtures import DEV_CLIP
from tests.pulse import pulse_session


def test_correct_then_save_twice_keeps_one_entry(main_window, host, wait_until, run_async):
    panel = main_window.show_panel("dictation")
    panel.start_file(DEV_CLIP, speed=0)
    wait_until(lambda: panel.state == "listening", timeout=120)
    wait_until(lambda: panel.state == "idle", timeout=300)
    assert panel.utterances and not panel.view.isReadOnly()

    panel.view.setFocus()
    panel.view.moveCursor(QTextCursor.MoveOperation.Start)
    QTest.keyClicks(panel.view, "Corrected: ")  # the user fixes the text before saving
    assert panel.committed_text().startswith("Corrected: ")

    QTest.mouseClick(panel.save_button, Qt.MouseButton.LeftButton)
    wait_until(lambda: "Saved" in panel.message.text(), timeout=30)
    assert not panel.save_button.isEnabled()  # nothing new to save
    QTest.mouseClick(panel.save_button, Qt.MouseButton.LeftButton)  # a second click changes nothing

    panel.view.moveCursor(QTextCursor.MoveOperation.End)
    QTest.keyClicks(panel.view, " The end.")
    assert panel.save_button.isEnabled()
    panel.show_message("")
    QTest.mouseClick(panel.save_button, Qt.MouseButton.LeftButton)
    wait_until(lambda: "Saved" in panel.message.text(), timeout=30)

    [session] = panel.sessions
    entries = [e for e in run_async(host.list_history())
               if e.id == session.record_id or e.source == str(session.audio_path)]
    assert len(entries) == 1 and entries[0].kind == "dictation"
    text = run_async(host.load_history(entries[0].id)).transcript.text
    assert text.startswith("Corrected:") and text.endswith("The end.")


@pytest.fixture
def pulse_server():
    with pulse_session() as server:
        yield server


def test_inputs_are_named_sources_and_the_choice_is_remembered(main_window, host, pulse_server, wait_until):
    from ferrum_gui.panels.dictation_panel import DictationPanel

    panel = main_window.show_panel("dictation")
    panel.refresh_devices()
    wait_until(lambda: panel.device.findText("Monitor of Null Output", Qt.MatchFlag.MatchStartsWith) >= 0, timeout=30)
    names = [panel.device.itemText(i) for i in range(panel.device.count())]
    assert names[0] == "Monitor of Null Output  (default)", names
    assert "pulse" in names  # the ALSA devices stay available after the named sources

    index = names.index("pulse")
    panel.device.setCurrentIndex(index)
    panel.device.activated.emit(index)  # what picking it from the list sends

    again = DictationPanel(host, main_window)  # as after a restart with the same settings
    try:
        wait_until(lambda: again.device.count() > 1, timeout=30)
        assert again.device.currentText() == "pulse"
    finally:
        again.shutdown()
        again.deleteLater()
