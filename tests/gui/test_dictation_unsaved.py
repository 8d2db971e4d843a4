"""Unsaved dictation is never thrown away silently: Clear, Ctrl+Q and the tray's Quit ask first (Save to
history, Discard, Cancel), and a session a crashed run left unsaved is back on the next start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import soundfile as sf
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.audio_fixtures import DEV_CLIP, SPEECH_DIR

SHORT_CLIP = SPEECH_DIR / "pocketsphinx" / "goforward.flac"
REPO = Path(__file__).resolve().parents[2]


def _dictate(panel, wait_until, clip: Path) -> None:
    panel.start_file(clip, speed=0)
    wait_until(lambda: panel.state == "listening", timeout=120)
    wait_until(lambda: panel.state == "idle", timeout=300)


def _question() -> QMessageBox:
    """The question on screen (a user sees it and answers it)."""
    boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
    assert len(boxes) == 1, f"expected one question on screen, found {len(boxes)}"
    return boxes[0]


def test_clear_and_quit_ask_before_unsaved_dictation_is_discarded(main_window, host, wait_until, run_async):
    panel = main_window.show_panel("dictation")
    _dictate(panel, wait_until, SHORT_CLIP)
    [session] = panel.sessions
    text, recording = panel.committed_text(), session.audio_path
    assert "forward" in text.lower() and recording.is_file()

    QTest.mouseClick(panel.clear_button, Qt.MouseButton.LeftButton)
    QApplication.processEvents()
    assert panel.committed_text() == text and recording.is_file(), "Clear threw the dictation away unasked"
    box = _question()
    assert "Save this dictation" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()  # keeps it
    assert panel.committed_text() == text and panel.save_button.isEnabled()

    main_window.activateWindow()  # shortcuts go to the active window
    QApplication.processEvents()
    QTest.keyClick(main_window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)  # File → Quit
    QApplication.processEvents()
    assert main_window.isVisible(), "Ctrl+Q quit with unsaved dictation"
    _question().button(QMessageBox.StandardButton.Cancel).click()
    assert main_window.isVisible() and panel.committed_text() == text

    quit_item = next(a for a in main_window.anywhere.tray.menu.actions() if a.text() == "Quit")
    quit_item.trigger()  # the tray's Quit
    QApplication.processEvents()
    assert main_window.isVisible()
    QApplication.instance().setQuitOnLastWindowClosed(False)  # the test's event loop outlives the window
    try:
        _question().button(QMessageBox.StandardButton.Save).click()  # saved, then the window closes
        wait_until(lambda: not main_window.isVisible(), timeout=60)
    finally:
        QApplication.instance().setQuitOnLastWindowClosed(True)
    record = run_async(host.load_history(session.record_id))
    assert record.transcript.text.split() == text.split() and Path(record.audio_path).is_file()


# A previous run: dictates a real recording, then dies (SIGKILL) before anyone saves or discards it.
_CRASHING_RUN = """
import os, signal, sys
from executors.dictation import FileSource
from executors.service import EngineService

engine = EngineService()
session = engine.dictation.start(FileSource(sys.argv[1], speed=0)).result(300)
print(session.text, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_unsaved_dictation_survives_a_crash_and_is_restored_on_the_next_start(qtbot, wait_until, run_async):
    from ferrum_gui.host.executor_host import ExecutorHost
    from ferrum_gui.shell.main_window import MainWindow

    crashed = subprocess.run([sys.executable, "-c", _CRASHING_RUN, str(DEV_CLIP)], cwd=REPO, env=dict(os.environ),
                             capture_output=True, text=True, timeout=600)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-2000:]
    heard = crashed.stdout.strip()
    assert "dashwood" in heard.lower(), heard

    fresh = ExecutorHost()  # the next start, on the same data folder
    window = MainWindow(fresh)
    try:
        panel = window.panels["dictation"]
        wait_until(lambda: panel.unsaved_sessions(), timeout=30)
        assert panel.committed_text().split() == heard.split()
        assert panel.view.toPlainText().split() == heard.split()
        assert "Restored 1 unsaved dictation session" in panel.message.text()
        [record_id] = run_async(panel.save())
        record = run_async(fresh.load_history(record_id))
        assert record.kind == "dictation" and record.transcript.text.split() == heard.split()
        assert abs(sf.info(record.audio_path).duration - sf.info(str(DEV_CLIP)).duration) < 0.1
    finally:
        window.close()
        window.deleteLater()
        fresh.close()
