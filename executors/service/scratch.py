"""``ScratchFolder``: a folder of files this process may still want, cleaned up after it ends.

Each process gets its own subfolder holding a locked file; a folder whose lock can be taken belongs to a
process that is gone (it crashed, or quit without cleaning up), so the next one removes it.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
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
    def __init__(self, root: Path):
        self.root = Path(root)
        self._lock_file = None
        self._path: Path | None = None

    @property
    def path(self) -> Path:
        """This process's folder, created (and the leftovers of ended processes removed) on first use."""
        if self._path is None:
            self.root.mkdir(parents=True, exist_ok=True)
            self.sweep()
            path = self.root / f"{os.getpid()}-{secrets.token_hex(4)}"
            path.mkdir()
            self._lock_file = open(path / _LOCK, "a+b")  # noqa: SIM115 - held open while we live
            _try_lock(self._lock_file)
            self._path = path
        return self._path

    def sweep(self) -> int:
        """Remove the folders of processes that ended; returns how many."""
        removed = 0
        for folder in self.root.iterdir() if self.root.is_dir() else []:
            if not folder.is_dir() or folder == self._path or time.time() - folder.stat().st_mtime < _GRACE_S:
                continue  # (a brand-new folder may not hold its lock yet)
            try:
                with open(folder / _LOCK, "a+b") as fp:
                    if not _try_lock(fp):
                        continue  # its process still runs
            except OSError:
                continue
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
        return removed

    def close(self) -> None:
        if self._path is not None:
            if self._lock_file is not None:
                self._lock_file.close()
            shutil.rmtree(self._path, ignore_errors=True)
            self._path = None
