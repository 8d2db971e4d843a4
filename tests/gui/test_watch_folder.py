"""The watch folder in the app: chosen in Preferences, its recordings go through the Transcribe queue
once each (also when watching starts again), transcripts are written beside them, and removing the
folder stops the watching with a notice."""

from __future__ import annotations

import asyncio
import shutil
from collections import Counter

from audio_fixtures import SPEECH_DIR, copy_slowly
from PySide6.QtCore import QSettings

from ferrum_gui.watch.controller import WatchFolderController, WatchSettings, watch_controller
from ferrum_gui.watch.settings_page import WatchFolderPage
from ferrum_gui.widgets.job_list import JobState

GO_FORWARD = SPEECH_DIR / "pocketsphinx" / "goforward.flac"
WELCOME = SPEECH_DIR / "asterisk" / "dir-welcome.flac"
SETTLE_S = 0.5


def test_a_watched_folder_feeds_the_transcribe_queue_once_per_file(main_window, host, run_async, wait_until,
                                                                   tmp_path, monkeypatch):
    monkeypatch.setattr(WatchFolderController, "settle_s", SETTLE_S)
    folder = tmp_path / "inbox"
    folder.mkdir()
    shutil.copy(GO_FORWARD, folder / "before.flac")  # there before watching starts
    panel = main_window.panels["transcribe"]
    controller = watch_controller(host)
    dialog = main_window.show_preferences()
    page = dialog.page(WatchFolderPage)
    assert not page.enabled.isChecked() and page.status.text() == "Watching is off"
    page.folder.setText(str(folder))
    page.enabled.setChecked(True)
    page.output.setCurrentIndex(page.output.findData("srt"))
    try:
        run_async(dialog.apply()[dialog.pages.index(page)])
        assert controller.state == "watching" and page.status.text() == f"Watching {folder}"
        dialog.close()
        saved = WatchSettings.load(QSettings(main_window.qsettings.fileName(), QSettings.Format.IniFormat))
        assert saved == WatchSettings(enabled=True, folder=str(folder), output_format="srt")

        copy_slowly(WELCOME, folder / "slow.flac", pieces=8, pause_s=0.2)  # longer than the settle time
        wait_until(lambda: (folder / "before.srt").exists() and (folder / "slow.srt").exists(), timeout=300)
        assert "welcome" in (folder / "slow.srt").read_text(encoding="utf-8").lower()
        jobs = panel.jobs.job_ids()
        assert sorted(panel.jobs.row_text(job)[0] for job in jobs) == ["before.flac", "slow.flac"]
        assert {panel.jobs.state(job) for job in jobs} == {JobState.DONE}

        controller.detach(panel)  # as when the app quits and starts again
        assert controller.state == "off"
        controller.attach(panel)
        wait_until(lambda: controller.state == "watching")
        run_async(asyncio.sleep(4 * SETTLE_S))  # what settles arrives meanwhile
        assert panel.jobs.job_ids() == jobs
        sources = Counter(entry.source for entry in run_async(host.list_history()))
        assert sources[str(folder / "before.flac")] == sources[str(folder / "slow.flac")] == 1

        shutil.rmtree(folder)
        wait_until(lambda: controller.state == "stopped", timeout=30)
        assert controller.folder is None
        assert any(f"{folder} is gone" in message for message in main_window.notifications.messages())
    finally:
        run_async(controller.apply(WatchSettings()))
    assert controller.state == "off"
