"""Transcribe panel on the real main window, the real bundled Whisper model and real dev-set speech."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from audio_fixtures import DEV_CLIP, cut_short
from PySide6.QtCore import Qt

from executors.core.errors import DeviceError
from executors.transcripts.exporters import parse_srt
from executors.transcripts.history import RecordStatus, TranscriptHistory
from executors.transcripts.results import Segment

LIBRIVOX = sorted(f"pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0{n}.flac"
                  for n in (870, 880, 890, 920, 930))
GAP = np.zeros(8000, dtype=np.float32)  # 0.5 s of silence between clips


def _concat_wav(speech_dir: Path, clips: list[str], dest: Path, min_seconds: float = 0.0) -> float:
    parts, total = [], 0.0
    while True:
        for rel in clips:
            audio, rate = sf.read(str(speech_dir / rel), dtype="float32")
            assert rate == 16000
            parts += [audio, GAP]
            total += (len(audio) + len(GAP)) / 16000
        if total >= min_seconds:
            break
    sf.write(str(dest), np.concatenate(parts), 16000, subtype="PCM_16")
    return total


def _drop(window, paths: list[Path]) -> None:
    """Drag file URLs over the window and drop them, as a file manager does (enter, then drop)."""
    from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent
    from PySide6.QtWidgets import QApplication

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    centre = QPoint(window.width() // 2, window.height() // 2)
    enter = QDragEnterEvent(centre, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted(), "the window refused the dragged files"
    drop = QDropEvent(QPointF(centre), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)  # what Qt calls on the drop target once the drag was accepted
    assert drop.isAccepted()


def _has_output_device() -> bool:
    try:
        import sounddevice as sd

        return any(d["max_output_channels"] > 0 for d in sd.query_devices())
    except Exception:  # noqa: BLE001 - no PortAudio at all
        return False


@pytest.fixture(scope="module")
def speech_wav(tmp_path_factory, speech_dir) -> Path:
    path = tmp_path_factory.mktemp("speech") / "austen.wav"
    _concat_wav(speech_dir, LIBRIVOX, path)
    return path


def test_drop_transcribe_edit_export_play(main_window, host, speech_wav, tmp_path, wait_until, run_async, listen):
    panel = main_window.panels["transcribe"]
    seen: list[tuple[int, bool]] = []  # (rows in the view, job finished?) as each segment arrives

    def on_segment(job, _segment):
        seen.append((panel.view.rowCount(), panel.jobs.state(job).finished))

    listen(host.segmentProduced, on_segment)
    _drop(main_window, [speech_wav])
    [job_id] = panel.jobs.job_ids()
    assert main_window.current_panel_key() == "transcribe"
    wait_until(lambda: panel.jobs.state(job_id).finished, timeout=300)
    assert panel.jobs.state(job_id).value == "done"
    assert panel.jobs.progress(job_id) == 100
    file_name, _, elapsed, rtf, state, _ = panel.jobs.row_text(job_id)
    assert file_name == "austen.wav" and state == "done" and elapsed and rtf.endswith("×")

    # Segments reached the view one by one while decoding, before the job finished.
    assert len(seen) >= 2
    assert seen == [(n, False) for n in range(1, len(seen) + 1)]
    wait_until(lambda: panel.current_record_id() is not None and panel.view.rowCount() > 0)
    text = " ".join(panel.view.segment_text(r) for r in range(panel.view.rowCount())).lower()
    for word in ("dashwood", "leisure", "selfish", "amiable"):
        assert word in text, text

    # The finished transcript is in the history list, newest first.
    record_id = panel.current_record_id()
    wait_until(lambda: panel.history.record_ids()[:1] == [record_id]
               and panel.history.row_text(record_id)[4] == "done")
    _date, name, duration, language, status = panel.history.row_text(record_id)
    assert name == "austen.wav" and status == "done" and language == "en" and duration.startswith("0:")

    # Edit a segment as the user would; the edit is saved in the history and exported.
    panel.view.edit_segment_text(panel.view.segments()[0].id, "Edited first line")
    run_async(_record_where(host, record_id, lambda r: r.transcript.segments[0].text.strip() == "Edited first line"))

    srt = run_async(panel.export(tmp_path / "austen.srt"))
    cues = parse_srt(srt.read_text(encoding="utf-8"))
    assert len(cues) == panel.view.rowCount()
    assert cues[0][2] == "Edited first line"
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(cues))
    assert cues[-1][1] <= 40.0

    # Clicking a timestamp plays that segment; without a sound card the notification says so.
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    errors: list = []
    cell = panel.view.visualItemRect(panel.view.item(0, 0)).center()
    listen(host.failure, errors.append)
    QTest.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, cell)
    if _has_output_device():
        run_async(_settle())
        assert not errors
    else:
        wait_until(lambda: errors)
        assert isinstance(errors[0], DeviceError)
        assert any("audio" in m.lower() for m in main_window.notifications.messages())
    host.stop_playback()


async def _record_where(host, record_id, predicate):
    """Poll the history until the record satisfies ``predicate`` (edits are saved asynchronously)."""
    import asyncio

    while not predicate(record := await host.load_history(record_id)):
        await asyncio.sleep(0.05)
    return record


async def _settle():
    import asyncio

    await asyncio.sleep(1.0)


def test_cancel_long_job_keeps_partial_segments(main_window, host, speech_dir, tmp_path, wait_until, run_async):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    long_wav = tmp_path / "long.wav"
    total = _concat_wav(speech_dir, LIBRIVOX, long_wav, min_seconds=125.0)
    assert total >= 120.0
    panel = main_window.panels["transcribe"]
    [job_id] = panel.enqueue([long_wav])
    wait_until(lambda: panel.view.rowCount() >= 2, timeout=300)
    assert not panel.jobs.state(job_id).finished

    panel.jobs.setCurrentItem(panel.jobs.topLevelItem(0))
    QTest.keyClick(panel.jobs, Qt.Key.Key_Escape)
    wait_until(lambda: panel.jobs.state(job_id).finished, timeout=120)
    assert panel.jobs.state(job_id).value == "cancelled"

    entry = next(e for e in run_async(host.list_history()) if e.source == str(long_wav))
    assert entry.status is RecordStatus.CANCELLED
    record = run_async(host.load_history(entry.id))
    assert len(record.transcript.segments) >= 2
    assert record.transcript.segments[-1].end < total - 10.0  # stopped well before the end
    assert "dashwood" in record.transcript.text.lower()


def test_bad_file_notifies_and_queue_keeps_working(main_window, host, speech_dir, tmp_path, wait_until):
    bad = tmp_path / "broken.wav"
    bad.write_bytes(b"RIFF\x00\x00\x00\x00WAVEthis is not audio at all" * 20)
    good = tmp_path / "short.wav"
    _concat_wav(speech_dir, ["pocketsphinx/goforward.flac"], good)
    panel = main_window.panels["transcribe"]
    main_window.notifications.clear()

    bad_job, good_job = panel.enqueue([bad, good])
    wait_until(lambda: panel.jobs.state(good_job).finished, timeout=300)
    assert panel.jobs.state(bad_job).value == "failed"
    assert panel.jobs.state(good_job).value == "done"
    messages = main_window.notifications.messages()
    assert any("broken.wav" in m for m in messages), messages
    text = " ".join(panel.view.segment_text(r) for r in range(panel.view.rowCount())).lower()
    assert "forward" in text


def test_a_cut_short_file_is_transcribed_up_to_the_break_with_a_warning(main_window, tmp_path, wait_until):
    cut = cut_short(DEV_CLIP, tmp_path / "interrupted.flac")
    panel = main_window.panels["transcribe"]
    main_window.notifications.clear()
    _drop(main_window, [cut])
    [job_id] = panel.jobs.job_ids()
    wait_until(lambda: panel.jobs.state(job_id).finished, timeout=300)
    assert panel.jobs.state(job_id).value == "done", panel.jobs.row_text(job_id)
    text = " ".join(s.text for s in panel.queue.segments(job_id)).lower()
    assert "dashwood" in text and "leisure" in text and "prudently" not in text, text
    cards = [c for c in main_window.notifications.notifications() if "interrupted.flac" in c.message]
    assert [c.level for c in cards] == ["warning"], main_window.notifications.messages()
    assert "cut short" in cards[0].message and cards[0].hint


def test_history_and_edits_survive_reopening_the_window(qtbot, main_window, host, speech_dir, tmp_path,
                                                        wait_until, run_async):
    from ferrum_gui.host.executor_host import ExecutorHost
    from ferrum_gui.shell.main_window import MainWindow

    clip = tmp_path / "cards.wav"
    _concat_wav(speech_dir, ["pocketsphinx/cards_005.flac"], clip)
    panel = main_window.panels["transcribe"]
    shown: list[int] = []
    panel.recordShown.connect(shown.append)
    [job_id] = panel.enqueue([clip])
    wait_until(lambda: shown, timeout=300)  # the finished transcript, reloaded from the history
    assert panel.jobs.state(job_id).value == "done" and panel.view.rowCount() > 0
    record_id = panel.current_record_id()
    seg_id = panel.view.segments()[0].id
    panel.view.edit_segment_text(seg_id, "Eight of spades, edited")
    wait_until(lambda: record_id in panel.history.record_ids() and panel.history.row_text(record_id)[4] == "done")
    before = panel.history.row_text(record_id)
    assert before[1] == "cards.wav" and before[3] == "en" and before[2] != "0:00"
    run_async(_record_where(host, record_id, lambda r: r.edited_segments == {seg_id}))
    main_window.close()

    # A previous session that died mid-transcription left a record with segments but no finish.
    crashed = TranscriptHistory()
    lost = crashed.begin(str(tmp_path / "crashed.wav"), "whisper-tiny.en", None)
    crashed.append_segment(lost, Segment(id=0, start=0.0, end=2.0, text=" saved before the crash"))
    crashed.close()

    # A new host (its own history connection on the same data dir) and a new window, as after a restart.
    fresh = ExecutorHost()
    window = MainWindow(fresh)
    try:
        reopened = window.panels["transcribe"]
        wait_until(lambda: record_id in reopened.history.record_ids())
        assert reopened.history.row_text(record_id) == before
        reopened.history.setCurrentItem(reopened.history.topLevelItem(
            reopened.history.record_ids().index(record_id)))
        reopened.history.itemActivated.emit(reopened.history.currentItem(), 0)
        wait_until(lambda: reopened.current_record_id() == record_id)
        assert reopened.view.segment_text(0) == "Eight of spades, edited"
        assert reopened.history.row_text(lost)[1:] == ["crashed.wav", "0:02", "–", "interrupted"]
        reopened.show_record(lost)
        wait_until(lambda: reopened.current_record_id() == lost)
        assert reopened.view.segment_text(0) == "saved before the crash"
    finally:
        window.close()
        window.deleteLater()
        fresh.close()


def test_silence_and_noise_files_give_no_segments(main_window, host, tmp_path, wait_until):
    rate = 16000
    silence, noise = tmp_path / "silence.wav", tmp_path / "noise.wav"
    sf.write(silence, np.zeros(120 * rate, np.float32), rate)
    sf.write(noise, (np.random.default_rng(5).standard_normal(60 * rate) * 0.003).astype(np.float32), rate)
    panel = main_window.panels["transcribe"]

    jobs = panel.enqueue([silence, noise])
    wait_until(lambda: all(panel.jobs.state(j).finished for j in jobs), timeout=300)
    for job in jobs:
        assert panel.jobs.state(job).value == "done"
        assert panel.queue.segments(job) == [], [s.text for s in panel.queue.segments(job)]


def test_the_queue_scrolls_to_each_job_as_it_starts(main_window, tmp_path, wait_until):
    files = []
    for n in range(12):
        files.append(tmp_path / f"quiet-{n:02}.wav")
        sf.write(files[-1], np.zeros(8000, np.float32), 16000)
    main_window.resize(800, 500)  # the smallest window: the queue shows a few rows
    panel = main_window.show_panel("transcribe")
    jobs = panel.jobs
    shown_at_start = {}

    def on_state(job_id: str, state: str) -> None:
        if state == "running":
            row = jobs.visualItemRect(jobs.findItems(panel.queue.path(job_id).name, Qt.MatchFlag.MatchExactly)[0])
            shown_at_start[job_id] = row.top() >= 0 and row.bottom() < jobs.viewport().height()

    panel.jobStateChanged.connect(on_state)
    try:
        ids = panel.enqueue(files)
        wait_until(lambda: all(jobs.state(j).finished for j in ids), timeout=300)
    finally:
        panel.jobStateChanged.disconnect(on_state)
    assert jobs.visualItemRect(jobs.topLevelItem(0)).height() * len(ids) > jobs.viewport().height()  # it had to
    assert shown_at_start == {j: True for j in ids}


@pytest.mark.audio_stack
def test_closing_the_window_stops_the_segment_playing(main_window, speech_wav, wait_until):
    from pulse import pulse_session

    from executors.audio.capture import sounddevice

    def playing() -> bool:
        try:
            return sounddevice().get_stream().active
        except RuntimeError:  # nothing played yet in this process
            return False

    with pulse_session():
        playback = main_window.show_panel("transcribe").playback
        playback.play(str(speech_wav), 0.0, 20.0)  # what clicking a segment's ▶ does
        wait_until(playing, timeout=30)
        assert playback.playing
        main_window.close()  # quitting: the window's panels shut down
        assert sounddevice().get_stream().closed
