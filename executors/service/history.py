"""``HistoryService``: the transcript history as the front-ends see it.

Every read and write runs on the service's I/O worker (in order; a segment saved while decoding is
never overtaken by the record's finish). Writes announce themselves with ``HistoryChanged``; edits and
deletions also reach ``on_record_changed`` so the search index follows them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..core.errors import wrap_unexpected
from ..transcripts.exporters import export_format, render_transcript, write_transcript
from ..transcripts.results import Transcript
from .events import EventHub, Failure, HistoryChanged
from .workers import Worker


class HistoryService:
    def __init__(self, db_path: Path | None, io: Worker, events: EventHub):
        self._db_path = db_path
        self._io = io
        self._events = events
        self._store = None
        # (record_id, deleted) after an edit or a deletion; the engine points it at the search index
        self.on_record_changed: Callable[[int, bool], None] | None = None

    def _history(self):
        if self._store is None:
            from ..transcripts.history import TranscriptHistory

            self._store = TranscriptHistory(self._db_path)
        return self._store

    def _call(self, name: str, *args, **kwargs):
        return self._io.call(lambda: getattr(self._history(), name)(*args, **kwargs))

    def _changed(self, record_id: int | None) -> None:
        self._events.emit(HistoryChanged(record_id))

    # -- reading ----------------------------------------------------------------------------------
    def list(self, limit: int | None = None):
        """``HistoryEntry`` rows, newest first."""
        return self._call("list", limit)

    def load(self, record_id: int):
        """The full ``HistoryRecord`` (user edits applied); NotFoundError when it is gone."""
        return self._call("load", record_id)

    # -- a transcription's record ---------------------------------------------------------------
    def begin(self, source: str, model_id: str, options, *, audio_path: str | Path | None, kind: str = "file") -> int:
        record_id = self._call("begin", source, model_id, options, audio_path=audio_path or "", kind=kind)
        self._changed(record_id)
        return record_id

    def append_segment_soon(self, record_id: int, segment) -> None:
        """Save a segment in the background (the decoder does not wait for the disk)."""
        def save():
            try:
                self._history().append_segment(record_id, segment)
            except Exception as exc:  # noqa: BLE001 - reported, the transcription goes on
                self._events.emit(Failure(wrap_unexpected(exc, "saving a segment to the history")))
        self._io.submit(save)

    def end(self, record_id: int, outcome: str, transcript: Transcript | None = None, message: str = "") -> None:
        """Close a record: ``outcome`` "done" (with the transcript), "cancelled" or "failed" (with
        whatever part was decoded)."""
        if outcome == "done":
            self._call("finish", record_id, transcript)
        elif outcome == "cancelled":
            self._call("cancel", record_id, transcript)
        else:
            self._call("fail", record_id, message, transcript)
        self._changed(record_id)

    def add_dictation(self, audio_path: str | Path | None, transcript: Transcript, model_id: str = "",
                      record_id: int | None = None) -> int:
        """A dictation session's record (``record_id``: the one it was saved as before, now replaced)."""
        record_id = self._call("add_dictation", audio_path, transcript, model_id, record_id)
        self._changed(record_id)
        return record_id

    # -- user changes ------------------------------------------------------------------------------
    def update_segment_text(self, record_id: int, segment_id: int, text: str) -> None:
        self._call("update_segment_text", record_id, segment_id, text)
        self._changed(record_id)
        if self.on_record_changed is not None:
            self.on_record_changed(record_id, False)

    def rename_speaker(self, record_id: int, label: str, name: str) -> None:
        """Show speaker ``label`` of a record as ``name`` in every view and export."""
        self._call("rename_speaker", record_id, label, name)
        self._changed(record_id)

    def delete(self, record_id: int) -> None:
        self._call("delete", record_id)
        self._changed(record_id)
        if self.on_record_changed is not None:
            self.on_record_changed(record_id, True)

    # -- export ------------------------------------------------------------------------------------
    def export(self, what: int | Transcript, path: str | Path | None = None, fmt: str | None = None) -> Path | str:
        """Write a record (by id) or a transcript as ``fmt`` (default: from ``path``'s extension);
        without ``path`` the file's text is returned instead."""
        transcript = self.load(what).transcript if isinstance(what, int) else what
        chosen = export_format(fmt, path)
        if path is None:
            return render_transcript(transcript, chosen.name)
        return write_transcript(transcript, chosen.name, Path(path))

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
