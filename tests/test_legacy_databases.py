"""Databases written before schema versions existed (commit 0dcdfdb) open, migrate and read back the same.

tests/data/legacy/ holds a history and a search database made by that commit's code
(tests/data/legacy/make_legacy.py) and ``expected-0dcdfdb.json``: what that code read back from them
with ``dump`` below (``python tests/test_legacy_databases.py FOLDER`` prints it).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import shutil
import sqlite3
import sys
from pathlib import Path

LEGACY = Path(__file__).resolve().parent / "data" / "legacy"
HISTORY = "history-0dcdfdb.sqlite3"
SEARCH = "search-0dcdfdb.db"


def _plain(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, set):
        return sorted(_plain(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def dump(folder: Path) -> dict:
    """Everything the public API reads from the two databases in ``folder`` (JSON-ready)."""
    import numpy as np

    from executors.search import SearchStore
    from executors.transcripts.history import TranscriptHistory

    out = {}
    with TranscriptHistory(folder / HISTORY) as history:
        entries = history.list()
        out["history_list"] = _plain(entries)
        out["history_records"] = [_plain(history.load(e.id)) for e in entries]
    with SearchStore(folder / SEARCH) as store:
        collections = store.collections()
        out["collections"] = _plain(collections)
        out["documents"] = {c.name: _plain(store.documents(c)) for c in collections}
        rows = store.connection.execute(
            "SELECT id, document_id, ord, text, char_start, char_end, start_time, end_time, segment_ids, vector"
            " FROM chunks ORDER BY id").fetchall()
        out["chunks"] = [[*row[:9], hashlib.sha256(row[9]).hexdigest()] for row in rows]
        query = np.frombuffer(rows[0][9], dtype=np.float32)
        out["search"] = {c.name: [[round(h.score, 5), h.source, h.text, h.segment_ids]
                                  for h in store.search(query, "shuttle orbit", c.name, k=3, hybrid=True)]
                         for c in collections}
    return out


def _missing(expected, actual, where: str = "") -> list[str]:
    """Where ``actual`` differs from ``expected``; keys only ``actual`` has (fields a later version
    added, e.g. a segment's speaker) are allowed, everything the old code read must be there unchanged."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return [m for k, v in expected.items()
                for m in (_missing(v, actual[k], f"{where}.{k}") if k in actual else [f"{where}.{k} is gone"])]
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [m for i, (e, a) in enumerate(zip(expected, actual)) for m in _missing(e, a, f"{where}[{i}]")]
    return [] if expected == actual else [f"{where}: {expected!r} became {actual!r}"]


def _unscored(dumped: dict) -> dict:
    """``dumped`` without the search scores: they follow the ranking formula, not the database (hybrid
    scores were reciprocal-rank sums when the files were made, meaning plus the query's words since)."""
    return {**dumped, "search": {name: [row[1:] for row in rows] for name, rows in dumped["search"].items()}}


def _copy(tmp_path: Path) -> Path:
    for name in (HISTORY, SEARCH):
        shutil.copy(LEGACY / name, tmp_path / name)
    return tmp_path


def test_the_comparison_allows_new_fields_but_no_changed_or_lost_ones():
    old = {"segments": [{"text": "hi", "start": 0.0}], "language": "en"}
    assert _missing(old, {"segments": [{"text": "hi", "start": 0.0, "speaker": None}], "language": "en"}) == []
    assert _missing(old, {"segments": [{"text": "ho", "start": 0.0}], "language": "en"}) != []
    assert _missing(old, {"segments": [{"start": 0.0}], "language": "en"}) != []
    assert _missing(old, {"segments": [], "language": "en"}) != []


def test_legacy_databases_are_small_and_unversioned():
    for name in (HISTORY, SEARCH):
        assert (LEGACY / name).stat().st_size < 200_000
        with sqlite3.connect(f"file:{LEGACY / name}?immutable=1", uri=True) as db:  # no -wal/-shm beside it
            assert db.execute("PRAGMA user_version").fetchone()[0] == 0


def test_legacy_databases_migrate_and_read_back_the_same(tmp_path):
    from executors.search.schema import SEARCH_SCHEMA
    from executors.transcripts.history_schema import HISTORY_SCHEMA

    folder = _copy(tmp_path)
    expected = _unscored(json.loads((LEGACY / "expected-0dcdfdb.json").read_text(encoding="utf-8")))
    assert _missing(expected, _unscored(dump(folder))) == []
    for name, schema in ((HISTORY, HISTORY_SCHEMA), (SEARCH, SEARCH_SCHEMA)):
        with sqlite3.connect(folder / name) as db:
            assert db.execute("PRAGMA user_version").fetchone()[0] == schema.latest
    with sqlite3.connect(folder / SEARCH) as db:  # the version lives in user_version alone now
        assert db.execute("SELECT count(*) FROM meta WHERE key='schema_version'").fetchone()[0] == 0
    assert _missing(expected, _unscored(dump(folder))) == []  # a second open of a migrated file changes nothing


def test_migrated_legacy_databases_take_new_writes(tmp_path):
    from executors.search import SearchStore
    from executors.transcripts.history import TranscriptHistory
    from executors.transcripts.results import Segment, Transcript

    folder = _copy(tmp_path)
    with TranscriptHistory(folder / HISTORY) as history:
        rid = history.begin("/recordings/new.wav", "whisper-tiny.en", {"language": "en"})
        history.finish(rid, Transcript("en", 1.0, 1.0, [Segment(id=0, start=0.0, end=1.0, text=" New.")]))
        assert rid == 5 and history.load(rid).transcript.text == "New."
        assert len(history.list()) == 5
    with SearchStore(folder / SEARCH) as store:
        assert store.remove_document(store.collection("default"), "note:bread")
        assert [d.source for d in store.documents(store.collection("default"))] == ["note:shuttle"]


if __name__ == "__main__":
    print(json.dumps(dump(Path(sys.argv[1])), indent=1))
