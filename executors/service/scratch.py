"""``ScratchFolder``: a folder of files this process may still want, cleaned up after it ends.

Each process gets its own subfolder holding a locked file; a folder whose lock can be taken belongs to a
process that is gone (it crashed, or quit without cleaning up), so the next one removes it. Files worth
more than that (``keep``: unsaved dictation) are left there until a later process ``adopt()``s them.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

_LOCK = ".lock"
_GRACE_S = 60.0


def _try_lock(fp) -> bool:
    try:
        if os.name == "nt":
            import msvcrt

            msvcrt.locking(fp.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fp.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


class ScratchFolder:
    def __init__(self, root: Path, keep: str | None = None):
        """``keep``: the name ending of marker files that, with their companion (the name without it),
        outlive the process that wrote them: a folder holding one is not swept but adopted."""
        self.root = Path(root)
        self.keep = keep
        self._lock_file = None
        self._path: Path | None = None

    @property
    def path(self) -> Path:
        """This process's folder, created (and the leftovers of ended processes removed) on first use."""
        if self._path is None:
            self.root.mkdir(parents=True, exist_ok=True)
            path = self.root / f"{os.getpid()}-{secrets.token_hex(4)}"
            path.mkdir()
            self._lock_file = open(path / _LOCK, "a+b")  # noqa: SIM115 - held open while we live
            _try_lock(self._lock_file)
            self._path = path
            self.sweep()
        return self._path

    def _ended_folders(self, grace: bool = True) -> Iterator[Path]:
        """Folders of processes that ended, each locked by us while the caller handles it."""
        for folder in list(self.root.iterdir()) if self.root.is_dir() else []:
            if not folder.is_dir() or folder == self._path:
                continue
            if grace and time.time() - folder.stat().st_mtime < _GRACE_S:
                continue  # (a brand-new folder may not hold its lock yet)
            try:
                with open(folder / _LOCK, "a+b") as fp:
                    if _try_lock(fp):  # else its process still runs
                        yield folder
            except OSError:
                continue

    def _kept(self, folder: Path) -> list[Path]:
        return sorted(folder.glob(f"*{self.keep}")) if self.keep else []

    def adopt(self) -> list[Path]:
        """Move the ``keep`` marker files (and their companions) that ended processes left into this
        process's folder; returns the moved markers."""
        into, taken = self.path, []
        # no grace: a folder holding a marker is not brand new, its process locked it long before
        for folder in self._ended_folders(grace=False):
            for marker in self._kept(folder):
                companion = folder / marker.name[: -len(self.keep)]
                try:
                    if companion.exists():
                        os.replace(companion, into / companion.name)
                    os.replace(marker, into / marker.name)
                except OSError:
                    continue
                taken.append(into / marker.name)
        return taken

    def sweep(self) -> int:
        """Remove the folders of processes that ended; returns how many."""
        removed = 0
        for folder in self._ended_folders():
            if self._kept(folder):
                continue  # for adopt()
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
        return removed

    def close(self) -> None:
        if self._path is not None:
            if self._lock_file is not None:
                self._lock_file.close()
            shutil.rmtree(self._path, ignore_errors=True)
            self._path = None
