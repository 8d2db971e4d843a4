"""The window as a new user meets it (real main window, real models): dropping a folder, the drop
highlight, the status bar during a job, Stop and "Add to search" only when they apply, About with
the version, the log folder behind error notices, and a second launch handing over to the first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragLeaveEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from executors.core.errors import InternalError
from executors.transcripts.history import TranscriptHistory

ROOT = Path(__file__).resolve().parents[2]
CLIP = "pocketsphinx/goforward.flac"


def _mime(paths) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


def _drag_enter(window, mime) -> QDragEnterEvent:
    centre = QPoint(window.width() // 2, window.height() // 2)
    event = QDragEnterEvent(centre, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, event)
    return event


def test_dropping_a_folder_queues_its_audio_and_says_what_was_skipped(main_window, host, speech_dir, tmp_path,
                                                                      wait_until):
    talks = tmp_path / "Talks"
    (talks / "day 2").mkdir(parents=True)
    shutil.copy(speech_dir / CLIP, talks / "opening.flac")
    shutil.copy(speech_dir / CLIP, talks / "day 2" / "closing.flac")
    (talks / "agenda.txt").write_text("9:00 opening", encoding="utf-8")
    (talks / "slides.pdf").write_bytes(b"%PDF-1.4")
    main_window.show_panel("monitor")
    main_window.notifications.clear()

    mime = _mime([talks])
    assert _drag_enter(main_window, mime).isAccepted()
    centre = QPointF(main_window.width() / 2, main_window.height() / 2)
    drop = QDropEvent(centre, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    main_window.dropEvent(drop)
    assert drop.isAccepted()

    panel = main_window.panels["transcribe"]
    assert main_window.current_panel_key() == "transcribe"
    names = [panel.jobs.row_text(j)[0] for j in panel.jobs.job_ids()]
    assert sorted(names) == ["closing.flac", "opening.flac"]
    messages = main_window.notifications.messages()
    assert any("Queued 2 files" in m and "2 skipped" in m and ".txt" in m and ".pdf" in m for m in messages), messages
    assert not any("does not exist" in m for m in messages)
    wait_until(lambda: all(panel.jobs.state(j).finished for j in panel.jobs.job_ids()), timeout=300)
    assert {panel.jobs.state(j).value for j in panel.jobs.job_ids()} == {"done"}


def test_dragging_files_over_the_window_highlights_it(main_window, tmp_path):
    (tmp_path / "a.wav").write_bytes(b"x")
    (tmp_path / "folder").mkdir()
    mime = _mime([tmp_path / "a.wav", tmp_path / "folder"])
    assert _drag_enter(main_window, mime).isAccepted()
    overlay = main_window.drop_overlay
    assert overlay.isVisible() and overlay.text == "Drop to transcribe 1 file and 1 folder"
    assert overlay.geometry() == main_window.centralWidget().rect()
    QApplication.sendEvent(main_window, QDragLeaveEvent())
    assert not overlay.isVisible()
    _drag_enter(main_window, mime)
    nothing = _mime([])  # the event does not own its mime data: keep it alive
    drop = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, nothing, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    main_window.dropEvent(drop)
    assert not overlay.isVisible()


def test_the_status_bar_says_working_while_a_job_runs(main_window, host, speech_dir, tmp_path, wait_until, listen):
    indicator = main_window.indicators["whisper"]
    seen: list[str] = []
    listen(host.statusUpdated, lambda name, _s: name == "whisper" and seen.append(indicator.label.text()))
    panel = main_window.panels["transcribe"]
    [job] = panel.enqueue([speech_dir / "pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0880.flac"])
    wait_until(lambda: panel.jobs.state(job).finished, timeout=300)
    wait_until(lambda: indicator.label.text().endswith("ready"), timeout=10)
    assert "Speech model: working…" in seen, set(seen)


def test_stop_and_add_to_search_are_enabled_only_when_they_apply(main_window, host, tmp_path, wait_until,
                                                                 listen, speech_dir, run_async):
    panel = main_window.show_panel("transcribe")
    assert not panel.stop_action.isEnabled()  # nothing is playing

    history = TranscriptHistory()  # a job that failed before any text: nothing to search or play
    failed = history.begin(str(tmp_path / "broken.wav"), "whisper-tiny.en", None)
    history.fail(failed, "Cannot decode broken.wav")
    history.close()
    shown: list[int] = []
    panel.recordShown.connect(shown.append)
    panel.refresh_history()
    wait_until(lambda: failed in panel.history.record_ids())
    panel.history.setCurrentItem(panel.history.topLevelItem(panel.history.record_ids().index(failed)))
    panel.history.itemActivated.emit(panel.history.currentItem(), 0)
    wait_until(lambda: shown == [failed])
    assert not panel.index_action.isEnabled() and not panel.export_action.isEnabled()
    assert not panel.history.has_text(failed)

    # Playing a segment enables Stop until the slice ends or playing fails (no sound card here).
    clip = tmp_path / "forward.flac"
    shutil.copy(speech_dir / CLIP, clip)
    run_async(host.transcribe(clip), timeout=300)
    done = next(e.id for e in run_async(host.list_history()) if e.source == str(clip))
    panel.show_record(done)
    wait_until(lambda: shown[-1] == done)
    assert panel.index_action.isEnabled()
    failures: list = []
    listen(host.failure, failures.append)
    panel.view.selectRow(0)
    panel.play_action.trigger()
    assert panel.stop_action.isEnabled()
    wait_until(lambda: not panel.stop_action.isEnabled(), timeout=20)
    panel.playback.stop()


def test_about_shows_the_version(main_window):
    from ferrum_gui.shell.about import app_version

    box = main_window.show_about()
    try:
        assert box.isVisible() and app_version() in box.text() and "Log folder" in box.text()
        assert app_version()[0].isdigit()
    finally:
        box.close()


def test_error_notices_point_to_the_log(main_window, host, tmp_path):
    from PySide6.QtCore import QObject, Slot
    from PySide6.QtGui import QDesktopServices

    from executors.core.logs import log_file, setup_file_logging
    from executors.core.paths import log_dir

    setup_file_logging("tests")

    class Catcher(QObject):
        urls: list = []

        @Slot("QUrl")
        def open(self, url):
            self.urls.append(url.toLocalFile())

    catcher = Catcher()
    QDesktopServices.setUrlHandler("file", catcher, "open")
    try:
        try:
            {}["missing"]
        except KeyError as exc:
            bug = InternalError("Unexpected KeyError while testing: 'missing'", "this is a bug")
            bug.__cause__ = exc
        host.failure.emit(bug)
        card = main_window.notifications.notifications()[0]
        assert "Help → Open Log Folder" in card.hint and card.action_button is not None
        card.action_button.click()
        main_window.log_action.trigger()
        assert catcher.urls == [str(log_dir()), str(log_dir())]
    finally:
        QDesktopServices.unsetUrlHandler("file")
    text = log_file().read_text(encoding="utf-8")
    assert "Unexpected KeyError while testing" in text and "Traceback" in text and "KeyError: 'missing'" in text


def test_a_second_launch_hands_its_files_to_the_first_window(main_window, speech_dir, tmp_path, run_async,
                                                             wait_until):
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from ferrum_gui.shell.instance import accept_later_launches

    server = accept_later_launches(main_window)
    try:
        assert server.listening
        clip = tmp_path / "handed-over.flac"
        shutil.copy(speech_dir / CLIP, clip)
        main_window.showMinimized()
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))

        def launch():
            return subprocess.run([sys.executable, "-m", "ferrum_gui.app", str(clip)], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=60)

        with ThreadPoolExecutor(1) as pool:  # a plain thread: qasync's default executor outlives the test
            second = run_async(asyncio.wrap_future(pool.submit(launch)), timeout=90)
        assert second.returncode == 0, second.stderr
        assert "already running" in second.stdout
        panel = main_window.panels["transcribe"]
        wait_until(lambda: any(panel.jobs.row_text(j)[0] == clip.name for j in panel.jobs.job_ids()), timeout=10)
        assert not main_window.isMinimized() and main_window.current_panel_key() == "transcribe"
        wait_until(lambda: not panel.is_busy(), timeout=300)
    finally:
        server.close()
