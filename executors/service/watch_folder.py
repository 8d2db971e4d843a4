"""``FolderWatcher``: audio and video files that appear or change in a folder, each handed on once.

watchdog reports what changes in the folder (subfolders too); a file is handed to ``ready`` once its
size and modification time have stayed the same for ``settle_s`` seconds, so a file still being
copied is waited for and taken whole. The ledger (``WatchLedger``) decides whether it was queued
before as it is now. Files already there when watching starts go the same way. Hidden files and
folders are left alone, as when a folder is opened in the app.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer

from ..audio.files import is_media, select_media
from ..core.errors import FerrumError, IOError_, NotFoundError
from ..transcripts.exporters import export_format
from .watch_ledger import WatchLedger

log = logging.getLogger(__name__)
SETTLE_S = 2.0  # unchanged for this long: the copy is complete


def output_beside(source: Path, fmt: str) -> Path:
    """Where a watched file's transcript goes: beside it, as ``talk.srt`` for ``talk.mp3``."""
    return source.with_suffix(export_format(fmt).suffix)


def folder_gone(folder: Path) -> NotFoundError:
    return NotFoundError(f"The watch folder {folder} is gone, so it is no longer watched",
                         "create it again or choose another folder, then turn watching on again")


class FolderWatcher:
    """``start()`` queues what is there and watches for more; ``stop()`` ends it. ``ready(path)`` and
    ``lost(error)`` (the folder was removed and watching stopped; ``stop()`` still lets go of the
    threads) are called on the watcher's threads."""

    def __init__(self, folder: str | Path, ledger: WatchLedger, ready: Callable[[Path], None],
                 lost: Callable[[FerrumError], None] | None = None, settle_s: float = SETTLE_S):
        self.folder = Path(folder).expanduser().absolute()
        self._ledger = ledger
        self._ready = ready
        self._lost = lost
        self._settle_s = settle_s
        self._pending: dict[Path, tuple[tuple[int, int] | None, float]] = {}  # path: (size, mtime), due
        self._wake = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._observer = None

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._stopping

    def start(self) -> None:
        """Watch the folder; NotFoundError when it is not one."""
        if not self.folder.is_dir():
            raise NotFoundError(f"The watch folder {self.folder} does not exist",
                                "create it or choose another folder to watch")
        with self._wake:  # a stop() from another thread comes before or after, never between
            if self._stopping:
                return
            self._observer = Observer()
            try:
                self._observer.schedule(_Events(self), str(self.folder), recursive=True)
                self._observer.start()
            except OSError as exc:  # e.g. Linux's limit of inotify watches
                raise IOError_(f"Cannot watch {self.folder}: {exc.strerror or exc}",
                               "on Linux, raise fs.inotify.max_user_watches, or watch a smaller folder") from exc
            self._thread = threading.Thread(target=self._run, name=f"watch {self.folder.name}", daemon=True)
            self._thread.start()
        for path in select_media([self.folder]).files:  # after the observer: nothing falls between
            self.seen(path)

    def stop(self) -> None:
        """Stop watching and wait for the watcher's threads (files not yet handed on are left)."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._observer is not None:
            self._observer.stop()
        for thread in (self._observer, self._thread):
            if thread is not None and thread.is_alive() and thread is not threading.current_thread():
                thread.join()

    # -- on watchdog's thread -----------------------------------------------------------------
    def seen(self, path: Path) -> None:
        """``path`` appeared or changed: it is handed on once it has settled."""
        if not self._wanted(path):
            return
        with self._wake:
            if self._stopping:
                return
            self._pending[path] = (_signature(path), time.monotonic() + self._settle_s)
            self._wake.notify()

    def removed(self, path: Path) -> None:
        if path == self.folder or not self.folder.is_dir():
            self._give_up()

    def _wanted(self, path: Path) -> bool:
        try:
            parts = path.relative_to(self.folder).parts
        except ValueError:
            return False
        return is_media(path) and not any(part.startswith(".") for part in parts)

    def _give_up(self) -> None:
        """The folder is gone: stop watching (``stop()`` from the owner's thread joins the threads)."""
        with self._wake:
            if self._stopping:
                return
            self._stopping = True
            self._wake.notify()
        self._observer.stop()
        if self._lost is not None:
            self._lost(folder_gone(self.folder))

    # -- on the settling thread -----------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._wake:
                if self._stopping:
                    return
                now = time.monotonic()
                due = [(path, sig) for path, (sig, at) in self._pending.items() if at <= now]
                for path, _ in due:
                    del self._pending[path]
                if not due:
                    next_at = min((at for _, at in self._pending.values()), default=None)
                    self._wake.wait(None if next_at is None else next_at - now)
                    continue
            for path, before in due:
                self._settle(path, before)

    def _settle(self, path: Path, before: tuple[int, int] | None) -> None:
        now = _signature(path)
        if now is None:
            if not self.folder.is_dir():
                self._give_up()
            return  # gone (a temporary file renamed, or deleted)
        if now != before or now[0] == 0:
            with self._wake:  # still changing (or still empty): look again later
                self._pending.setdefault(path, (now, time.monotonic() + self._settle_s))
            return
        try:
            if self._ledger.claim(path, *now):
                self._ready(path)
        except Exception:  # noqa: BLE001 - one file's hand-off must not end the watching
            log.exception("could not queue %s from the watch folder", path)


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


class _Events(FileSystemEventHandler):
    """watchdog's handler: file events become ``seen``, the folder's removal ``removed``."""

    def __init__(self, watcher: FolderWatcher):
        super().__init__()
        self._watcher = watcher

    def dispatch(self, event) -> None:
        kind = event.event_type
        if event.is_directory:
            if kind in ("deleted", "moved"):
                self._watcher.removed(Path(os.fsdecode(event.src_path)))
            return
        if kind == "moved":
            self._watcher.seen(Path(os.fsdecode(event.dest_path)))
        elif kind in ("created", "modified", "closed"):
            self._watcher.seen(Path(os.fsdecode(event.src_path)))
