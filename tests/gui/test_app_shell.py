"""The app shell on the real bundled models: window, panels, shortcuts, drops, notifications,
the command-line start-up and the resources."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from executors.core.errors import InvalidFormatError
from ferrum_gui.shell.notifications import MAX_VISIBLE, NotificationArea

ROOT = Path(__file__).resolve().parents[2]
CLIP = "pocketsphinx/cards_001.flac"


def test_window_shows_panels_with_shortcuts(main_window, qtbot):
    window = main_window
    assert window.isVisible()
    assert window.panel_keys()[:2] == ["transcribe", "search"] and "monitor" in window.panel_keys()
    assert window.minimumWidth() >= 800 and window.minimumHeight() >= 500
    assert not window.windowIcon().isNull()
    assert window.open_action.shortcut() == QKeySequence("Ctrl+O")
    assert window.preferences_action.shortcut() == QKeySequence("Ctrl+,")
    assert window.quit_action.shortcut() == QKeySequence("Ctrl+Q")
    assert window.find_action.shortcut() == QKeySequence("Ctrl+F")
    assert all(not a.icon().isNull() for a in (window.open_action, window.preferences_action, window.find_action))

    window.activateWindow()
    qtbot.waitActive(window)
    for number, key in enumerate(window.panel_keys(), start=1):
        QTest.keyClick(window, Qt.Key(Qt.Key.Key_0.value + number), Qt.KeyboardModifier.ControlModifier)
        assert window.current_panel_key() == key
    QTest.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.current_panel_key() == "search"


def test_model_state_is_shown_in_the_status_bar(main_window, host):
    for name, indicator in main_window.indicators.items():
        assert host.model_state(name)[0] == "ready"
        assert indicator.label.text().endswith("ready")
        assert not indicator.bar.isVisible()


def _drop(window, paths: list[Path]) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    target = window.panels["monitor"]  # a child that does not take drops itself: the window does
    pos = QPointF(target.mapTo(window, QPoint(10, 10)))
    event = QDropEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert event.isAccepted()


def test_dropped_bad_file_notifies_and_the_app_keeps_working(main_window, host, wait_until, listen, speech_dir,
                                                            tmp_path):
    bad = tmp_path / "not-audio.wav"
    bad.write_bytes(b"this is not a wave file" * 50)
    finished, failed = [], []
    listen(host.jobFinished, lambda job_id, result: finished.append(result))
    listen(host.jobFailed, lambda job_id, err: failed.append(err))
    main_window.show_panel("monitor")

    _drop(main_window, [bad, speech_dir / CLIP])
    assert main_window.current_panel_key() == "transcribe"
    panel = main_window.panels["transcribe"]
    wait_until(lambda: not panel.is_busy(), timeout=300)

    assert len(failed) == 1 and isinstance(failed[0], InvalidFormatError)
    cards = main_window.notifications.notifications()
    assert len(cards) == 1 and "not-audio.wav" in cards[0].message and cards[0].hint
    assert main_window.notifications.isVisible()
    assert len(finished) == 1 and "clubs" in finished[0].text.lower()  # the good file after the bad one

    cards[0].close_button.click()
    wait_until(lambda: not main_window.notifications.notifications())
    assert not main_window.notifications.isVisible()


def test_notifications_stack_count_repeats_and_dismiss(qtbot):
    area = NotificationArea()
    qtbot.addWidget(area)
    area.show()
    err = InvalidFormatError("Cannot decode x.wav", "use a WAV or FLAC file")
    first = area.show_error(err)
    assert area.show_error(err) is first and first.repeats == 2 and "×2" in first.title.text()
    assert first.hint_label.text() == "use a WAV or FLAC file"
    for i in range(MAX_VISIBLE + 1):
        area.notify(f"notice {i}", None, "info")
    cards = area.notifications()
    assert len(cards) == MAX_VISIBLE + 2 and cards[0].message == f"notice {MAX_VISIBLE}"
    assert [c.isVisible() for c in cards].count(True) == MAX_VISIBLE
    assert "2 more" in area._more.text()
    cards[0].dismiss()
    assert len(area.notifications()) == MAX_VISIBLE + 1 and cards[0] not in area.notifications()


def test_three_notices_fold_under_the_newest(main_window, tmp_path):
    area = main_window.notifications
    main_window.enqueue([tmp_path / "first.wav"])  # a path that does not exist: one warning
    QApplication.processEvents()
    one_card = area.height()
    main_window.enqueue([tmp_path / "second.wav", tmp_path / "third.wav"])
    QApplication.processEvents()
    assert len(area.notifications()) == 3
    assert area.height() < 2 * one_card  # the newest card and a line under it, not three cards
    assert [c.message for c in area.notifications() if c.isVisible()] == [f"{tmp_path / 'third.wav'} does not exist"]
    assert "2 more notifications" in area._more.text()

    area.expand_button.click()
    QApplication.processEvents()
    assert all(c.isVisible() for c in area.notifications()) and area.expand_button.text() == "Show fewer"
    area.notifications()[0].dismiss()
    area.notifications()[0].dismiss()  # one left: nothing to fold, and the next burst folds again
    QApplication.processEvents()
    assert not area.expand_button.isChecked() and not area.expand_button.isVisible()
    main_window.enqueue([tmp_path / "fourth.wav", tmp_path / "fifth.wav"])
    QApplication.processEvents()
    assert [c.isVisible() for c in area.notifications()] == [True, False, False]
    area.dismiss_all_button.click()
    assert area.notifications() == [] and not area.isVisible()


def test_gui_starts_without_importing_torch(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", FERRUM_DATA_DIR=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"))
    out = subprocess.run([sys.executable, "-m", "ferrum_gui.app", "--quit-after-show"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    print(out.stdout.strip())
    assert "torch imported: False" in out.stdout


def test_command_line_files_are_transcribed_into_the_history(tmp_path, speech_dir):
    from executors.transcripts.history import DB_NAME, TranscriptHistory

    data = tmp_path / "data"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", FERRUM_DATA_DIR=str(data),
               XDG_CONFIG_HOME=str(tmp_path / "config"))
    out = subprocess.run([sys.executable, "-m", "ferrum_gui.app", "--quit-when-idle", str(speech_dir / CLIP)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    history = TranscriptHistory(data / DB_NAME)
    try:
        entries = history.list()
        assert [e.source for e in entries] == [str(speech_dir / CLIP)]
        assert "clubs" in history.load(entries[0].id).transcript.text.lower()
    finally:
        history.close()


def test_resources_icon_and_desktop_file():
    resources = ROOT / "resources"
    assert (resources / "ferrum-desktop.svg").is_file()
    for size in (16, 32, 48, 64, 128, 256):
        assert (resources / "icons" / f"ferrum-desktop-{size}.png").stat().st_size > 0
    entry = configparser.ConfigParser(interpolation=None)
    entry.read(resources / "ferrum-desktop.desktop")
    desktop = entry["Desktop Entry"]
    assert desktop["Exec"].split()[0] == "ferrum-gui" and desktop["Icon"] == "ferrum-desktop"
    assert desktop["Type"] == "Application" and "audio/flac" in desktop["MimeType"]
