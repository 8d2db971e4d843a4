"""``WatchLedger``: which files of watched folders were already queued, kept in SQLite across restarts.

A file is known by its path, size and modification time, so a changed file is queued again and an
unchanged one never is. A row stays ``queued`` until its transcription ends (``done``, ``failed`` or
``cancelled``); one left ``queued`` by a process that stopped first is queued again by the next.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from pathlib import Path

from ..core.errors import FerrumError, IOError_
from ..core.migrations import Schema, Step
from ..core.paths import data_dir

DB_NAME = "watch.sqlite3"
# The process's name in the ledger: rows it left queued are not its to claim again while it runs.
PROCESS = uuid.uuid4().hex

WATCH_SCHEMA = Schema("watch-folder ledger", [Step(1, "files queued from watched folders", """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    state TEXT NOT NULL,
    owner TEXT NOT NULL,
    updated REAL NOT NULL
)""")])

_CLAIM = """
INSERT INTO files (path, size, mtime_ns, state, owner, updated) VALUES (?, ?, ?, 'queued', ?, ?)
ON CONFLICT(path) DO UPDATE SET size=excluded.size, mtime_ns=excluded.mtime_ns, state='queued',
    owner=excluded.owner, updated=excluded.updated
WHERE files.size != excluded.size OR files.mtime_ns != excluded.mtime_ns
    OR (files.state = 'queued' AND files.owner != excluded.owner)
"""


class WatchLedger:
    """Thread-safe; ``owner`` tells processes apart (tests give two ledgers on one file two names)."""

    def __init__(self, db_path: str | Path | None = None, owner: str = PROCESS):
        self.path = Path(db_path) if db_path else data_dir() / DB_NAME
        self.owner = owner
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            WATCH_SCHEMA.migrate(self._db, self.path)
        except FerrumError:
            self._db.close()
            raise
        except (OSError, sqlite3.Error) as exc:
            raise IOError_(f"Cannot open the watch-folder ledger at {self.path}: {exc}",
                           "check that the data folder is writable (FERRUM_DATA_DIR)") from exc

    def claim(self, path: Path, size: int, mtime_ns: int) -> bool:
        """Mark ``path`` as it is now queued; False when it was queued like this before (and is not
        waiting on a process that stopped)."""
        return self._execute(_CLAIM, (str(path), size, mtime_ns, self.owner, time.time())) == 1

    def ended(self, path: Path, state: str) -> None:
        """Its transcription ended: "done", "failed" or "cancelled" (none of them is queued again
        until the file changes)."""
        self._execute("UPDATE files SET state=?, updated=? WHERE path=? AND owner=?",
                      (state, time.time(), str(path), self.owner))

    def state(self, path: Path) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT state FROM files WHERE path=?", (str(path),)).fetchone()
        return row[0] if row else None

    def _execute(self, sql: str, params: tuple) -> int:
        with self._lock:
            try:
                return self._db.execute(sql, params).rowcount
            except sqlite3.Error as exc:
                raise IOError_(f"Could not update the watch-folder ledger: {exc}",
                               "check free disk space and that the data folder is writable") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()
