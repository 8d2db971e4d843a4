"""Schema versions (executors.core.migrations): new files, upgrades step by step, refusal of newer files."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from executors.core.errors import IOError_, UnsupportedError
from executors.core.migrations import Schema, Step, statements, user_version
from executors.search import SearchStore
from executors.search.schema import SEARCH_SCHEMA
from executors.transcripts.history import TranscriptHistory
from executors.transcripts.history_schema import HISTORY_SCHEMA

LEGACY = Path(__file__).resolve().parent / "data" / "legacy"


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_statements_keep_trigger_bodies_and_strings_whole():
    script = """CREATE TABLE t (a TEXT);
    CREATE TRIGGER t_ins AFTER INSERT ON t BEGIN INSERT INTO t VALUES ('x;y'); SELECT 1; END;
    INSERT INTO t VALUES ('semi;colon');"""
    parts = list(statements(script))
    assert len(parts) == 3
    assert parts[1].startswith("CREATE TRIGGER") and parts[1].endswith("END;")
    assert parts[2] == "INSERT INTO t VALUES ('semi;colon');"


def test_steps_must_be_numbered_from_one():
    with pytest.raises(ValueError):
        Schema("thing", [Step(2, "skips one", "SELECT 1")])


def test_new_files_get_the_latest_version(tmp_path):
    with TranscriptHistory(tmp_path / "h.sqlite3"):
        pass
    with SearchStore(tmp_path / "s.db"):
        pass
    with _connect(tmp_path / "h.sqlite3") as db:
        assert user_version(db) == HISTORY_SCHEMA.latest >= 1
    with _connect(tmp_path / "s.db") as db:
        assert user_version(db) == SEARCH_SCHEMA.latest >= 1


def test_a_later_step_upgrades_an_old_history_and_keeps_its_records(tmp_path):
    """What diarization will do: one more step adds a column; old records stay readable."""
    path = tmp_path / "history.sqlite3"
    shutil.copy(LEGACY / "history-0dcdfdb.sqlite3", path)
    with_speakers = Schema("transcript history", [
        *HISTORY_SCHEMA.steps, Step(HISTORY_SCHEMA.latest + 1, "speaker labels on segments",
                                    "ALTER TABLE segments ADD COLUMN speaker TEXT")])
    with _connect(path) as db:
        assert with_speakers.migrate(db, path) == 0
        assert user_version(db) == with_speakers.latest
        columns = [row[1] for row in db.execute("PRAGMA table_info(segments)")]
        assert "speaker" in columns
        assert db.execute("SELECT count(*) FROM segments").fetchone()[0] == 6
        assert with_speakers.migrate(db, path) == with_speakers.latest  # nothing left to do


def test_a_failing_step_leaves_the_file_at_its_last_good_version(tmp_path):
    path = tmp_path / "thing.db"

    def boom(db):
        db.execute("INSERT INTO t VALUES (2)")
        raise sqlite3.OperationalError("disk I/O error")

    schema = Schema("thing", [Step(1, "table", "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1);"),
                              Step(2, "more rows", run=boom)])
    with _connect(path) as db:
        with pytest.raises(IOError_) as err:
            schema.migrate(db, path)
        assert "version 2" in str(err.value) and "more rows" in str(err.value)
        assert user_version(db) == 1
        assert db.execute("SELECT a FROM t").fetchall() == [(1,)]
        assert not db.in_transaction


@pytest.mark.parametrize("opener, name", [(TranscriptHistory, "history.sqlite3"), (SearchStore, "search.db")])
def test_a_file_from_a_newer_version_is_refused_and_left_alone(tmp_path, opener, name):
    path = tmp_path / name
    with opener(path):
        pass
    with _connect(path) as db:
        db.execute("PRAGMA user_version = 99")
        tables = db.execute("SELECT name FROM sqlite_master ORDER BY name").fetchall()
    with pytest.raises(UnsupportedError) as err:
        opener(path)
    message = str(err.value)
    assert "newer version of Ferrum" in message and "99" in message and str(path) in message
    assert "update Ferrum" in err.value.hint
    with _connect(path) as db:
        assert user_version(db) == 99
        assert db.execute("SELECT name FROM sqlite_master ORDER BY name").fetchall() == tables
