"""Versions of the transcript history file (see ``executors.core.migrations``); add a step at the end."""

from __future__ import annotations

from ..core.migrations import Schema, Step

_RECORDS_AND_SEGMENTS = """
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL DEFAULT 'file',
    source TEXT NOT NULL,
    audio_path TEXT,
    model_id TEXT NOT NULL DEFAULT '',
    options TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL,
    created REAL NOT NULL,
    finished REAL,
    language TEXT NOT NULL DEFAULT '',
    language_probability REAL NOT NULL DEFAULT 0,
    duration REAL NOT NULL DEFAULT 0,
    task TEXT NOT NULL DEFAULT 'transcribe',
    error TEXT
);
CREATE TABLE IF NOT EXISTS segments (
    record_id INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    seg_id INTEGER NOT NULL,
    start REAL NOT NULL,
    "end" REAL NOT NULL,
    text TEXT NOT NULL,
    edited_text TEXT,
    extra TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (record_id, seg_id)
);
CREATE INDEX IF NOT EXISTS records_created ON records(created DESC);
"""

# Speakers (diarization): each segment's label lives in its ``extra`` JSON like its other decode
# details; the names a user gives to labels are this one side table.
_SPEAKER_NAMES = """
CREATE TABLE IF NOT EXISTS speaker_names (
    record_id INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (record_id, label)
);
"""

HISTORY_SCHEMA = Schema("transcript history", [
    # files written before versions were recorded (user_version 0) already hold exactly this
    Step(1, "records and segments", _RECORDS_AND_SEGMENTS),
    # IF NOT EXISTS: the first diarization builds made this table before versions were recorded
    Step(2, "names of speakers", _SPEAKER_NAMES),
])
