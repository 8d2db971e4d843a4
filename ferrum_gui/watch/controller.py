"""The watch folder inside the app: new or changed recordings in a chosen folder go to the Transcribe
panel's queue, as if dropped there, and (when asked) their transcripts are written beside them.

The watching itself is the engine's (``executors.service.watch_folder``); the controller (one per host,
found with ``watch_controller(host)``) starts it from Preferences → Watch folder or at app start, feeds
the panel's queue on the GUI thread, and records each file's outcome in the ledger. A folder that goes
away stops the watching with a notice on the app's notification path.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from executors.core.errors import FerrumError, InvalidParameterError, wrap_unexpected
from executors.service.watch_folder import SETTLE_S, FolderWatcher, output_beside
from executors.service.watch_ledger import WatchLedger
from executors.service.workers import IO

from ..settings import load_group, save_group
from ..widgets.tasks import TaskSet

_GROUP = "watch"


@dataclass(frozen=True)
class WatchSettings:
    enabled: bool = False
    folder: str = ""
    output_format: str = ""  # "" = into the history only; else txt, srt, vtt or json beside each file

    @classmethod
    def load(cls, qsettings) -> WatchSettings:
        return load_group(cls, qsettings, _GROUP)

    def save(self, qsettings) -> None:
        save_group(self, qsettings, _GROUP)


class WatchFolderController(QObject):
    stateChanged = Signal(str, str)   # "off" | "watching" | "stopped", message
    _settled = Signal(object, object)  # FolderWatcher, Path: from the watcher's thread to the GUI thread
    _gone = Signal(object, object)     # FolderWatcher, FerrumError: likewise

    settle_s = SETTLE_S

    def __init__(self, host):
        super().__init__(host)
        self.setObjectName("ferrumWatchFolder")
        self.host = host
        self.applied = WatchSettings()
        self.state, self.message = "off", "Watching is off"
        self._tasks = TaskSet(host.failure.emit)
        self._panel = None
        self._watcher: FolderWatcher | None = None
        self._ledger: WatchLedger | None = None
        self._jobs: dict[str, Path] = {}  # the panel's jobs of watched files, not yet ended
        self._applying = asyncio.Lock()
        self._settled.connect(self._enqueue)
        self._gone.connect(self._on_gone)

    @property
    def folder(self) -> Path | None:
        return self._watcher.folder if self._watcher is not None else None

    # -- the Transcribe panel the files go to ---------------------------------------------------
    def attach(self, panel) -> None:
        """Send watched files to ``panel``'s queue from now on (watching starts if it is turned on)."""
        self.detach()
        self._panel = panel
        panel.queue.jobEnded.connect(self._on_job_ended)
        if self.applied.enabled:
            self._tasks.spawn(self.apply(self.applied), "starting the watch folder")

    def detach(self, panel=None) -> None:
        """Stop watching (for ``panel``: if it is the one attached); files still queued stay unfinished
        in the ledger, so the next start takes them up."""
        if panel is not None and panel is not self._panel:
            return
        self._stop()
        if self._panel is not None:
            self._panel.queue.jobEnded.disconnect(self._on_job_ended)
            self._panel = None
        self._jobs.clear()

    # -- settings -------------------------------------------------------------------------------
    async def apply(self, settings: WatchSettings) -> None:
        """Watch what ``settings`` say (or nothing); a folder that cannot be watched is reported."""
        async with self._applying:  # one at a time: a watching starts once the one before has stopped
            if settings == self.applied and self.state == "watching":
                return  # nothing changed: files settling are not looked at again
            self.applied = settings
            self._stop()
            if settings.enabled:
                await self._start(settings)

    async def _start(self, settings: WatchSettings) -> None:
        try:
            if not settings.folder.strip():
                raise InvalidParameterError("No watch folder is chosen",
                                            "choose one in Preferences → Watch folder, or turn watching off")
            if self._panel is None:
                return  # starts when the Transcribe panel is there
            if self._ledger is None:
                self._ledger = await self.host.run_on(IO, WatchLedger)
            # current before it starts: what settles while it lists the folder is not taken for stale
            self._watcher = watcher = FolderWatcher(settings.folder, self._ledger,
                                                    lambda path: self._settled.emit(watcher, path),
                                                    lambda error: self._gone.emit(watcher, error), self.settle_s)
            await self.host.run_on(IO, watcher.start)  # it lists what is already there
        except Exception as exc:  # noqa: BLE001 - shown in the settings page and as a notification
            self._watcher = None
            err = wrap_unexpected(exc, "starting the watch folder")
            self._set("stopped", err.message)
            self.host.failure.emit(err)
            return
        if self._watcher is watcher:  # not stopped while it started
            self._set("watching", str(watcher.folder))

    def _stop(self) -> None:
        if self._watcher is not None:
            watcher, self._watcher = self._watcher, None
            watcher.stop()
        self._set("off", "Watching is off")

    def _set(self, state: str, message: str) -> None:
        self.state, self.message = state, message
        self.stateChanged.emit(state, message)

    # -- on the GUI thread ------------------------------------------------------------------------
    def _enqueue(self, watcher: FolderWatcher, path: Path) -> None:
        if watcher is not self._watcher or self._panel is None:
            return  # from a watching that has stopped since
        for job_id in self._panel.enqueue([path]):
            self._jobs[job_id] = path

    def _on_job_ended(self, job_id: str, state: str, _message: str) -> None:
        path = self._jobs.pop(job_id, None)
        if path is not None:
            self._tasks.spawn(self._finish(job_id, path, state, self.applied.output_format), "finishing a watched file")

    async def _finish(self, job_id: str, path: Path, state: str, fmt: str) -> None:
        record_id = self._panel.queue.record_id(job_id) if self._panel is not None else None
        try:
            if state == "done" and fmt and record_id is not None:
                await self.host.export(record_id, output_beside(path, fmt), fmt)
        finally:
            await self.host.run_on(IO, self._ledger.ended, path, state)

    def _on_gone(self, watcher: FolderWatcher, error: FerrumError) -> None:
        if watcher is not self._watcher:
            return
        self._stop()
        self._set("stopped", error.message)
        self.host.failure.emit(error)


def watch_controller(host) -> WatchFolderController:
    """The host's controller, created on first use."""
    controller = host.findChild(WatchFolderController, "ferrumWatchFolder")
    return controller if controller is not None else WatchFolderController(host)


def start_watch_folder(host, qsettings):
    """Start watching at app start when the user turned it on; returns the future (or None)."""
    settings = WatchSettings.load(qsettings)
    if not settings.enabled:
        return None
    return asyncio.ensure_future(watch_controller(host).apply(settings))
