"""Versions of the search database (see ``executors.core.migrations``); add a step at the end."""

from __future__ import annotations

from ..core.migrations import Schema, Step

_COLLECTIONS_DOCUMENTS_CHUNKS = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS collections (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, model_id TEXT NOT NULL,
    dim INTEGER NOT NULL, created REAL NOT NULL, version INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY, collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    kind TEXT NOT NULL, source TEXT NOT NULL, title TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL, mtime REAL, size INTEGER, indexed_at REAL NOT NULL,
    UNIQUE (collection_id, source));
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    collection_id INTEGER NOT NULL, ord INTEGER NOT NULL, text TEXT NOT NULL,
    char_start INTEGER NOT NULL, char_end INTEGER NOT NULL,
    start_time REAL, end_time REAL, segment_ids TEXT, vector BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks(document_id);
CREATE INDEX IF NOT EXISTS chunks_by_collection ON chunks(collection_id, id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content='chunks', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER IF NOT EXISTS chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text); END;
CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text); END;
-- the version used to live in meta, PRAGMA user_version is the one record of it now
DELETE FROM meta WHERE key = 'schema_version';
"""

SEARCH_SCHEMA = Schema("search index", [
    # files written before versions were recorded (user_version 0) already hold exactly this
    Step(1, "collections, documents, chunks and full-text index", _COLLECTIONS_DOCUMENTS_CHUNKS),
    # chunks indexed before it have none; their hits open at the chunk's first segment
    Step(2, "where each segment of a transcript chunk begins", "ALTER TABLE chunks ADD COLUMN segment_starts TEXT"),
])
