"""Schema versions of the app's SQLite files, kept in ``PRAGMA user_version``.

A ``Schema`` is an ordered list of steps; step N turns a version N-1 database into version N.
Opening a file runs the steps it has not had yet, each in one transaction (a failure leaves the
file at the last version it reached), and refuses a file written by a newer version of the app.
Step 1 of each schema is the layout the app shipped before versions were recorded (``CREATE ...
IF NOT EXISTS``), so it creates a new file and adopts an old one alike. A later feature adds a
step at the end, for example::

    Step(3, "replacements per transcript", "ALTER TABLE documents ADD COLUMN replacements TEXT")
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import IOError_, UnsupportedError


@dataclass(frozen=True)
class Step:
    """What turns a version ``version - 1`` database into version ``version``: SQL statements,
    a function given the connection (for data moves SQL cannot express), or both (SQL first)."""

    version: int
    summary: str
    sql: str = ""
    run: Callable[[sqlite3.Connection], None] | None = None


def statements(script: str) -> Iterator[str]:
    """The complete statements of ``script`` one by one (a trigger's body stays whole)."""
    pending = ""
    for part in script.split(";"):
        pending += part + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\r\n;"):
                yield pending.strip()
            pending = ""
    if pending.strip(" \t\r\n;"):
        yield pending.strip()


def user_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


class Schema:
    """The versions of one kind of file (``what`` names it in messages, e.g. "transcript history")."""

    def __init__(self, what: str, steps: Sequence[Step]):
        versions = [s.version for s in steps]
        if versions != list(range(1, len(steps) + 1)):
            raise ValueError(f"{what}: steps must be numbered 1..{len(steps)}, got {versions}")
        self.what = what
        self.steps = tuple(steps)

    @property
    def latest(self) -> int:
        return len(self.steps)

    def migrate(self, db: sqlite3.Connection, path: str | Path) -> int:
        """Bring ``db`` (an autocommit connection) to the latest version; returns the version it had.

        Two processes opening an old file at once take turns: each step re-reads the version under
        the write lock and skips what the other already did."""
        found = user_version(db)
        self._refuse_newer(found, path)
        for step in self.steps[found:]:
            try:
                self._apply(db, step)
            except sqlite3.Error as exc:
                raise IOError_(
                    f"Could not upgrade the {self.what} at {path} to version {step.version} "
                    f"({step.summary}): {exc}",
                    "the file is unchanged since its last good version; check free disk space and "
                    "permissions, then start the app again") from exc
        return found

    def _refuse_newer(self, version: int, path: str | Path) -> None:
        if version > self.latest:
            raise UnsupportedError(
                f"The {self.what} at {path} was written by a newer version of Ferrum "
                f"(schema {version}; this version reads up to {self.latest})",
                "update Ferrum to open it, or move the file away to start a new one")

    @staticmethod
    def _apply(db: sqlite3.Connection, step: Step) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            if user_version(db) >= step.version:  # another process got here first
                db.execute("COMMIT")
                return
            for statement in statements(step.sql):
                db.execute(statement)
            if step.run is not None:
                step.run(db)
            db.execute(f"PRAGMA user_version = {int(step.version)}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
