"""Transcript history: every transcription and dictation session, kept in SQLite.

Each finished segment is committed as it arrives (WAL journal), so a crash loses at most the
segment being decoded (synchronous=NORMAL: commits survive a crash of the app; a power cut may
drop the last few, never corrupt the file). A record that has segments but was never finished is
listed as ``interrupted`` with everything that was saved. User edits to segment text are kept apart
from the decoded text so they survive a later ``finish`` of the same record.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import FerrumError, IOError_, NotFoundError
from ..core.paths import data_dir
from .history_schema import HISTORY_SCHEMA
from .results import Segment, Transcript, Word

DB_NAME = "history.sqlite3"


class RecordStatus(str, enum.Enum):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"  # never stored: a RUNNING record nobody in this process owns


@dataclass
class HistoryEntry:
    """One row of the history list (cheap: no segments)."""

    id: int
    kind: str
    source: str
    created: float
    duration: float
    language: str
    status: RecordStatus
    model_id: str
    segment_count: int
    error: str | None = None

    @property
    def name(self) -> str:
        return Path(self.source).name or self.source


@dataclass
class HistoryRecord:
    """A full record: its transcript (segment text with user edits applied) and metadata."""

    id: int
    kind: str
    source: str
    audio_path: str | None
    model_id: str
    options: dict[str, Any]
    status: RecordStatus
    created: float
    finished: float | None
    transcript: Transcript
    error: str | None = None
    edited_segments: set[int] = field(default_factory=set)
    original_texts: dict[int, str] = field(default_factory=dict)  # decoded text of each edited segment


def _options_dict(options: Any) -> dict[str, Any]:
    if options is None:
        return {}
    if dataclasses.is_dataclass(options):
        return dataclasses.asdict(options)
    return dict(options)


def _segment_extra(seg: Segment) -> str:
    extra = {"tokens": seg.tokens, "avg_logprob": seg.avg_logprob,
             "compression_ratio": seg.compression_ratio, "no_speech_prob": seg.no_speech_prob,
             "temperature": seg.temperature, "speaker": seg.speaker,
             "words": [dataclasses.asdict(w) for w in seg.words] if seg.words is not None else None}
    return json.dumps(extra)


def _upsert_segment(record_id: int, seg: Segment) -> tuple[str, tuple]:
    return (('INSERT INTO segments (record_id, seg_id, start, "end", text, extra) VALUES (?, ?, ?, ?, ?, ?)'
            ' ON CONFLICT(record_id, seg_id) DO UPDATE SET start=excluded.start, "end"=excluded."end",'
            ' text=excluded.text, extra=excluded.extra'),
            (record_id, seg.id, seg.start, seg.end, seg.text, _segment_extra(seg)))


def _upsert_speaker_name(record_id: int, label: str, name: str) -> tuple[str, tuple]:
    return ("INSERT INTO speaker_names (record_id, label, name) VALUES (?, ?, ?)"
            " ON CONFLICT(record_id, label) DO UPDATE SET name=excluded.name", (record_id, label, name))


def _segment_from_row(row: sqlite3.Row) -> Segment:
    extra = json.loads(row["extra"] or "{}")
    words = extra.pop("words", None)
    text = row["edited_text"] if row["edited_text"] is not None else row["text"]
    return Segment(id=row["seg_id"], start=row["start"], end=row["end"], text=text,
                   words=[Word(**w) for w in words] if words is not None else None, **extra)


class TranscriptHistory:
    """Thread-safe store of transcripts; one connection guarded by a lock (writes are tiny)."""

    def __init__(self, db_path: str | Path | None = None):
        self.path = Path(db_path) if db_path else data_dir() / DB_NAME
        self._lock = threading.Lock()
        self._active: set[int] = set()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            HISTORY_SCHEMA.migrate(self._db, self.path)
        except FerrumError:
            self._db.close()
            raise
        except sqlite3.Error as exc:
            raise IOError_(f"Cannot open the transcript history at {self.path}: {exc}",
                           "check that the data folder is writable (FERRUM_DATA_DIR)") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _write(self, sql: str, params: tuple = (), *more: tuple[str, tuple]) -> sqlite3.Cursor:
        """Run one statement (or several: ``more`` = (sql, params) pairs) as one committed transaction."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    cur = self._db.execute(sql, params)
                    for extra_sql, extra_params in more:
                        cur = self._db.execute(extra_sql, extra_params)
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                return cur
            except sqlite3.Error as exc:
                raise IOError_(f"Could not save to the transcript history: {exc}",
                               "check free disk space and that the data folder is writable") from exc

    def _read(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _require(self, record_id: int) -> sqlite3.Row:
        rows = self._read("SELECT * FROM records WHERE id = ?", (record_id,))
        if not rows:
            raise NotFoundError(f"Transcript {record_id} is not in the history",
                                "it may have been deleted; refresh the history list")
        return rows[0]

    # --- writing -------------------------------------------------------------------------

    def begin(self, source: str | Path, model_id: str = "", options: Any = None, *,
              audio_path: str | Path | None = None, kind: str = "file") -> int:
        """Start a record for a transcription of ``source``; returns its id."""
        opts = _options_dict(options)
        cur = self._write(
            "INSERT INTO records (kind, source, audio_path, model_id, options, status, created, task,"
            " language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (kind, str(source), str(audio_path if audio_path is not None else source), model_id,
             json.dumps(opts, default=str), RecordStatus.RUNNING.value, time.time(),
             opts.get("task") or "transcribe", opts.get("language") or ""))
        record_id = int(cur.lastrowid)
        self._active.add(record_id)
        return record_id

    def append_segment(self, record_id: int, segment: Segment) -> None:
        """Save one finished segment now (a user's edit of it, if any, is kept)."""
        self._write(*_upsert_segment(record_id, segment))

    def _close_record(self, record_id: int, status: RecordStatus, transcript: Transcript | None,
                      error: str | None) -> None:
        """Write the final segments and the record's outcome in one transaction."""
        self._require(record_id)
        if transcript is not None:
            update = (("UPDATE records SET status=?, finished=?, language=?, language_probability=?,"
                      " duration=?, task=?, model_id=COALESCE(NULLIF(?, ''), model_id), error=? WHERE id=?"),
                      (status.value, time.time(), transcript.language or "", transcript.language_probability,
                       transcript.duration, transcript.task, transcript.model_id, error, record_id))
            segments = [_upsert_segment(record_id, seg) for seg in transcript.segments]
            segments += [_upsert_speaker_name(record_id, label, name)
                         for label, name in transcript.speaker_names.items()]
        else:
            update = ("UPDATE records SET status=?, finished=?, error=? WHERE id=?",
                      (status.value, time.time(), error, record_id))
            segments = []
        self._write(*update, *segments)
        self._active.discard(record_id)

    def finish(self, record_id: int, transcript: Transcript) -> None:
        """Mark a record done with its full transcript (segments not yet saved are added)."""
        self._close_record(record_id, RecordStatus.DONE, transcript, None)

    def fail(self, record_id: int, message: str, partial: Transcript | None = None) -> None:
        """Mark a record failed; segments already saved (and ``partial``'s) stay."""
        self._close_record(record_id, RecordStatus.FAILED, partial, message)

    def cancel(self, record_id: int, partial: Transcript | None = None) -> None:
        """Mark a record cancelled by the user, keeping the partial transcript."""
        self._close_record(record_id, RecordStatus.CANCELLED, partial, "cancelled")

    def update_segment_text(self, record_id: int, segment_id: int, text: str | None) -> None:
        """Save the user's text for a segment. ``None``, or the decoded text itself, reverts the
        segment to what was decoded (it is then no longer counted as edited)."""
        cur = self._write("UPDATE segments SET edited_text=CASE WHEN ? IS NULL OR trim(?)=trim(text) THEN NULL"
                          " ELSE ? END WHERE record_id=? AND seg_id=?",
                          (text, text, text, record_id, segment_id))
        if cur.rowcount == 0:
            raise NotFoundError(f"Segment {segment_id} of transcript {record_id} is not in the history",
                                "refresh the transcript; it may have been deleted")

    def rename_speaker(self, record_id: int, label: str, name: str) -> None:
        """Show speaker ``label`` of a record as ``name`` everywhere (an empty name restores the default)."""
        self._require(record_id)
        name = " ".join(name.split())
        if name:
            self._write(*_upsert_speaker_name(record_id, label, name))
        else:
            self._write("DELETE FROM speaker_names WHERE record_id=? AND label=?", (record_id, label))

    def add_dictation(self, audio_path: str | Path | None, transcript: Transcript,
                      model_id: str = "", record_id: int | None = None) -> int:
        """Save a finished dictation session (its recording, if kept, at ``audio_path``).

        Saving a session again (its ``record_id``, or the same recording) replaces its transcript in
        that entry, so saving after correcting the text never makes a second entry."""
        if record_id is None and audio_path:
            rows = self._read("SELECT id FROM records WHERE kind='dictation' AND audio_path=? ORDER BY id DESC",
                              (str(audio_path),))
            record_id = int(rows[0]["id"]) if rows else None
        if record_id is not None:
            self._require(record_id)
            self._write("DELETE FROM segments WHERE record_id=?", (record_id,))
            self.finish(record_id, transcript)
            return record_id
        source = str(audio_path) if audio_path else f"Dictation {time.strftime('%Y-%m-%d %H:%M')}"
        record_id = self.begin(source, model_id or transcript.model_id, {"language": transcript.language},
                               audio_path=audio_path or "", kind="dictation")
        self.finish(record_id, transcript)
        return record_id

    def delete(self, record_id: int) -> None:
        self._require(record_id)
        self._write("DELETE FROM records WHERE id=?", (record_id,))
        self._active.discard(record_id)

    # --- reading -------------------------------------------------------------------------

    def _status(self, stored: str, record_id: int) -> RecordStatus:
        status = RecordStatus(stored)
        if status is RecordStatus.RUNNING and record_id not in self._active:
            return RecordStatus.INTERRUPTED
        return status

    def list(self, limit: int | None = None) -> list[HistoryEntry]:
        """Newest first."""
        rows = self._read(
            'SELECT r.*, COUNT(s.seg_id) AS n, COALESCE(MAX(s."end"), 0) AS last_end FROM records r'
            " LEFT JOIN segments s ON s.record_id = r.id GROUP BY r.id ORDER BY r.created DESC, r.id DESC"
            + (" LIMIT ?" if limit else ""), (limit,) if limit else ())
        return [HistoryEntry(id=r["id"], kind=r["kind"], source=r["source"], created=r["created"],
                             duration=r["duration"] or r["last_end"], language=r["language"],
                             status=self._status(r["status"], r["id"]), model_id=r["model_id"],
                             segment_count=r["n"], error=r["error"]) for r in rows]

    def load(self, record_id: int) -> HistoryRecord:
        rec = self._require(record_id)
        seg_rows = self._read('SELECT * FROM segments WHERE record_id=? ORDER BY start, seg_id', (record_id,))
        segments = [_segment_from_row(r) for r in seg_rows]
        duration = rec["duration"] or (segments[-1].end if segments else 0.0)
        names = {r["label"]: r["name"] for r in
                 self._read("SELECT label, name FROM speaker_names WHERE record_id=?", (record_id,))}
        transcript = Transcript(language=rec["language"], language_probability=rec["language_probability"],
                                duration=duration, segments=segments, task=rec["task"],
                                model_id=rec["model_id"], speaker_names=names)
        return HistoryRecord(id=rec["id"], kind=rec["kind"], source=rec["source"],
                             audio_path=rec["audio_path"] or None, model_id=rec["model_id"],
                             options=json.loads(rec["options"] or "{}"),
                             status=self._status(rec["status"], rec["id"]), created=rec["created"],
                             finished=rec["finished"], transcript=transcript, error=rec["error"],
                             edited_segments={r["seg_id"] for r in seg_rows if r["edited_text"] is not None},
                             original_texts={r["seg_id"]: r["text"] for r in seg_rows if r["edited_text"] is not None})


def searchable_entries(entries: list[HistoryEntry]) -> list[HistoryEntry]:
    """The records worth putting in the search index: one per transcribed file (its newest finished
    transcript, else its newest one with segments) and every dictation with text; never a running job."""
    chosen: dict[tuple, HistoryEntry] = {}
    for entry in sorted(entries, key=lambda e: -e.id):  # newest first
        if not entry.segment_count or entry.status is RecordStatus.RUNNING:
            continue
        key = ("file", entry.source) if entry.kind == "file" else ("record", entry.id)
        best = chosen.get(key)
        if best is None or (best.status is not RecordStatus.DONE and entry.status is RecordStatus.DONE):
            chosen[key] = entry
    return sorted(chosen.values(), key=lambda e: -e.id)
