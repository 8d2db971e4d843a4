"""The dictation panel on the real host: a dev recording played through the file source shows
greyed tentative text, then committed text; saving puts the session in the history; with no
microphone the panel says so."""

from __future__ import annotations

import pytest

from tests.audio_fixtures import DEV_CLIP, read_reference
from tests.speech_eval import corpus_wer


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

    record_id = run_async(panel.save())
    record = run_async(host.load_history(record_id))
    assert record.kind == "dictation"
    assert record.transcript.text.split() == text.split()
    assert panel.record_path.is_file() and panel.record_path.suffix == ".flac"

    panel.clear()
    assert panel.committed_text() == "" and panel.view.toPlainText() == ""


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
