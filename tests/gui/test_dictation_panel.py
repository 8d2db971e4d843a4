"""The dictation panel on the real host: a dev recording played through the file source shows
greyed tentative text, then committed text; saving puts the session in the history; with no
microphone the panel says so."""

from __future__ import annotations

from pathlib import Path

import pytest
import soundfile as sf

from tests.audio_fixtures import DEV_CLIP, SPEECH_DIR, read_reference
from tests.speech_eval import corpus_wer

SHORT_CLIP = SPEECH_DIR / "pocketsphinx" / "goforward.flac"


@pytest.fixture
def panel(qtbot, host):
    from ferrum_gui.panels.dictation_panel import DictationPanel

    widget = DictationPanel(host)
    qtbot.addWidget(widget)
    widget.show()
    yield widget
    widget.shutdown()


def test_file_session_shows_tentative_then_committed_text(panel, wait_until, run_async, host):
    snapshots = []
    original = panel.on_event

    def spy(event):
        original(event)
        snapshots.append((panel.committed_text(), panel.tentative_text(), panel.view.toHtml()))

    panel.on_event = spy
    panel.start_file(DEV_CLIP, speed=0)
    wait_until(lambda: panel.state == "listening", timeout=120)
    wait_until(lambda: panel.state == "idle", timeout=300)

    first_tentative = next(i for i, (c, t, _) in enumerate(snapshots) if t and not c)
    first_committed = next(i for i, (c, _, _) in enumerate(snapshots) if c)
    assert first_tentative < first_committed
    _, tentative, page = snapshots[first_tentative]
    assert tentative.split()[0] in page and "color:" in page  # the tentative tail is greyed
    text = panel.committed_text()
    assert corpus_wer([read_reference()], [text]) <= 25.0, text
    assert text.split()[-1] in panel.view.toPlainText()
    assert panel.tentative_text() == ""
    assert "Latency: last" in panel.latency_label.text()
    assert panel.save_button.isEnabled()

    [record_id] = run_async(panel.save())
    record = run_async(host.load_history(record_id))
    assert record.kind == "dictation"
    assert record.transcript.text.split() == text.split()
    assert Path(record.audio_path).is_file() and record.audio_path.endswith(".flac")
    assert not panel.save_button.isEnabled()  # nothing left unsaved

    panel.clear()
    assert panel.committed_text() == "" and panel.view.toPlainText() == ""


def test_save_after_several_sessions_keeps_each_sessions_audio(panel, wait_until, run_async, host):
    """Regression (issue 12, bug 3): every session is its own record with its own recording, and a
    session cleared unsaved takes its recording with it."""
    clips = [SHORT_CLIP, DEV_CLIP]
    for clip in clips:
        panel.start_file(clip, speed=0)
        wait_until(lambda: panel.state == "listening", timeout=120)
        wait_until(lambda: panel.state == "idle", timeout=300)
    first, second = panel.sessions
    assert first.text and second.text and first.audio_path != second.audio_path

    record_ids = run_async(panel.save())
    assert len(record_ids) == 2
    for record_id, session, clip in zip(record_ids, (first, second), clips):
        record = run_async(host.load_history(record_id))
        assert record.transcript.text.split() == session.text.split()
        assert abs(sf.info(record.audio_path).duration - sf.info(str(clip)).duration) < 0.1

    panel.start_file(SHORT_CLIP, speed=0)
    wait_until(lambda: panel.state == "listening", timeout=120)
    wait_until(lambda: panel.state == "idle", timeout=300)
    unsaved = panel.sessions[-1].audio_path
    assert unsaved.is_file()
    from PySide6.QtWidgets import QMessageBox

    panel.clear().button(QMessageBox.StandardButton.Discard).click()  # Clear asks first; the user discards
    wait_until(lambda: not unsaved.exists(), timeout=30)
    assert all(Path(run_async(host.load_history(r)).audio_path).is_file() for r in record_ids)  # saved ones stay


def test_no_microphone_is_a_clear_message(panel, host, wait_until, monkeypatch, listen):
    async def no_devices():
        return []

    failures = []
    listen(host.failure, failures.append)
    monkeypatch.setattr(host, "input_devices", no_devices)
    panel.refresh_devices()
    wait_until(lambda: "No microphone" in panel.message.text(), timeout=30)
    panel.start()
    wait_until(lambda: panel.state == "idle" and failures, timeout=30)
    assert "No microphone" in panel.message.text()
    assert failures[0].hint
    assert not panel.start_button.isChecked()
