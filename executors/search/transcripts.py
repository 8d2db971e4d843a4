"""Transcript entries of the search index, kept in step with the transcript history.

A history record is indexed as the document ``history:<record id>``. When a record is deleted its
document goes too (``remove_transcripts``); when a file is transcribed again, the newer record's
document replaces the older ones of the same file (``index_transcript``, via ``same_file_entries``), so one
recording never shows up as several identical results. ``prune_transcripts`` sweeps entries of
records that no longer exist (deleted before this bookkeeping existed, or by another program).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .store import SearchStore
from .types import Collection, DocKind

TRANSCRIPTS_COLLECTION = "transcripts"
_HISTORY_SOURCE = re.compile(r"^history:(\d+)$")


def transcript_source(record_id: int) -> str:
    """The index source of history record ``record_id``."""
    return f"history:{int(record_id)}"


def transcript_record_id(source: str) -> int | None:
    """The history record an index source stands for, or None for any other source."""
    match = _HISTORY_SOURCE.match(str(source))
    return int(match.group(1)) if match else None


def _collection(store: SearchStore, name: str) -> Collection | None:
    return next((c for c in store.collections() if c.name == name), None)


def remove_transcripts(store: SearchStore, record_ids: Iterable[int],
                       collection: str = TRANSCRIPTS_COLLECTION) -> int:
    """Drop the index entries of these history records; returns how many there were."""
    coll = _collection(store, collection)
    if coll is None:
        return 0
    return sum(store.remove_document(coll, transcript_source(rid)) for rid in record_ids)


def prune_transcripts(store: SearchStore, live_ids: Iterable[int], collection: str = TRANSCRIPTS_COLLECTION) -> int:
    """Drop the entries of every history record not in ``live_ids``; returns how many went."""
    coll = _collection(store, collection)
    if coll is None:
        return 0
    live = set(live_ids)
    stale = [rid for doc in store.documents(coll)
             if (rid := transcript_record_id(doc.source)) is not None and rid not in live]
    return remove_transcripts(store, stale, collection)


def same_file_entries(store: SearchStore, coll: Collection, record_id: int, audio_source: str) -> tuple[list[str], bool]:
    """(index sources of older records of ``audio_source``, whether a newer record of it is indexed).

    ``index_transcript`` uses it to keep one transcript per recording: the newest."""
    older, newer = [], False
    for doc in store.documents(coll):
        rid = transcript_record_id(doc.source)
        if rid is None or rid == record_id or doc.kind is not DocKind.TRANSCRIPT or doc.title != audio_source:
            continue
        if rid > record_id:
            newer = True
        else:
            older.append(doc.source)
    return older, newer
