"""Persistent search index in SQLite: collections, documents, chunks with their vectors, FTS5.

One write transaction per document (its chunks, vectors and full-text rows together), so a
crash or a cancelled run never leaves half a document. Every collection is bound to the one
embedding model whose vectors it holds. The int8 search matrix of a collection is loaded on
first search and kept in step with this store's own writes; a write by another process bumps
the collection's ``version`` and makes the next search reload it. Loading maps the matrix
saved beside the database (``<db>-vectors/``, see ``matrix_file``) when it was made from the
current state, else rebuilds it from the database and saves it; ``close`` saves matrices that
changed since.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import FerrumError, InvalidParameterError, IOError_, NotFoundError, wrap_unexpected
from ..core.paths import data_dir
from . import matrix_file
from .schema import SEARCH_SCHEMA
from .types import Chunk, Collection, DocKind, Document, SearchHit

if TYPE_CHECKING:
    from .vectors import VectorMatrix

DEFAULT_DB_NAME = "search.db"
_DOC_COLUMNS = "id, collection_id, kind, source, title, content_hash, mtime, size"


class SearchStore:
    """Thread-safe handle on one search database (default: ``data_dir()/search.db``)."""

    def __init__(self, db_path: str | Path | None = None):
        self.path = Path(db_path) if db_path else data_dir() / DEFAULT_DB_NAME
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            SEARCH_SCHEMA.migrate(self._db, self.path)
            # tells this database's saved matrices from those of another database at the same path
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('matrix_token', ?)", (secrets.token_hex(8),))
            self._token = self._db.execute("SELECT value FROM meta WHERE key='matrix_token'").fetchone()[0]
        except FerrumError:
            self._db.close()
            raise
        except sqlite3.Error as exc:
            raise IOError_(f"Cannot open the search index {self.path}: {exc}",
                           "check the path and its permissions, or delete a corrupt file to rebuild it") from exc
        self._lock = threading.RLock()
        self._matrices: dict[int, tuple[int, VectorMatrix]] = {}  # collection id -> (version, matrix)
        self._saved: dict[int, int] = {}  # collection id -> version of its saved matrix file

    # ---------------------------------------------------------------- plumbing
    @property
    def connection(self) -> sqlite3.Connection:
        return self._db

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            for collection_id, (version, matrix) in self._matrices.items():
                if self._saved.get(collection_id) != version:
                    self._save_matrix(collection_id, version, matrix)
            self._matrices.clear()
            self._db.close()

    def __enter__(self) -> SearchStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------- collections
    def collection(self, name: str, model_id: str | None = None, dim: int | None = None) -> Collection:
        """The collection ``name``; created when ``model_id`` and ``dim`` are given.

        Raises InvalidParameterError when it exists but holds another model's vectors."""
        with self._lock:
            row = self._db.execute("SELECT id, name, model_id, dim FROM collections WHERE name=?", (name,)).fetchone()
            if row is None:
                if model_id is None or dim is None:
                    raise NotFoundError(f"No search collection named '{name}'",
                                        "index some files into it first (ferrum index PATH --collection NAME)")
                cur = self._db.execute("INSERT INTO collections (name, model_id, dim, created) VALUES (?, ?, ?, ?)",
                                       (name, model_id, dim, time.time()))
                return Collection(cur.lastrowid, name, model_id, dim)
            coll = Collection(*row)
            if model_id is not None and model_id != coll.model_id:
                raise InvalidParameterError(
                    f"Collection '{name}' holds vectors of model '{coll.model_id}', not '{model_id}'; "
                    "vectors of two models cannot be mixed",
                    f"use the model '{coll.model_id}' or another collection name")
            if dim is not None and dim != coll.dim:
                raise InvalidParameterError(f"Collection '{name}' holds {coll.dim}-dimensional vectors, not {dim}",
                                            "use another collection name")
            return coll

    def collections(self) -> list[Collection]:
        """Every collection, with its document and chunk counts filled in."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, name, model_id, dim, (SELECT count(*) FROM documents d WHERE d.collection_id=c.id),"
                " (SELECT count(*) FROM chunks k WHERE k.collection_id=c.id) FROM collections c ORDER BY name").fetchall()
        return [Collection(*r) for r in rows]

    def delete_collection(self, name: str) -> None:
        coll = self.collection(name)
        with self._transaction() as db:
            db.execute("DELETE FROM chunks WHERE collection_id=?", (coll.id,))
            db.execute("DELETE FROM documents WHERE collection_id=?", (coll.id,))
            db.execute("DELETE FROM collections WHERE id=?", (coll.id,))
            self._matrices.pop(coll.id, None)
        matrix_file.remove(self._matrix_path(coll.id))

    # --------------------------------------------------------------- documents
    def documents(self, collection: Collection) -> list[Document]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_DOC_COLUMNS}, (SELECT count(*) FROM chunks c WHERE c.document_id=d.id)"
                " FROM documents d WHERE collection_id=? ORDER BY source", (collection.id,)).fetchall()
        return [_document(r) for r in rows]

    def document(self, collection: Collection, source: str) -> Document | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_DOC_COLUMNS}, (SELECT count(*) FROM chunks c WHERE c.document_id=d.id)"
                " FROM documents d WHERE collection_id=? AND source=?", (collection.id, source)).fetchone()
        return _document(row) if row else None

    def touch_document(self, document: Document, mtime: float | None, size: int | None) -> None:
        """Record a new mtime/size for a document whose content hash did not change."""
        with self._transaction() as db:
            db.execute("UPDATE documents SET mtime=?, size=? WHERE id=?", (mtime, size, document.id))

    def put_document(self, collection: Collection, kind: DocKind, source: str, content_hash: str,
                     chunks: Sequence[Chunk], vectors: np.ndarray, *, title: str = "",
                     mtime: float | None = None, size: int | None = None) -> Document:
        """Insert or replace one document with its chunks and their vectors in one transaction."""
        from .vectors import normalise

        vectors = normalise(vectors).reshape(len(chunks), -1) if len(chunks) else np.zeros((0, collection.dim))
        if len(chunks) and vectors.shape[1] != collection.dim:
            raise InvalidParameterError(
                f"Vectors have {vectors.shape[1]} dimensions but collection '{collection.name}' holds {collection.dim}",
                "use the collection's model")
        try:
            with self._transaction() as db:
                old_ids = self._delete_document(db, collection.id, source)
                cur = db.execute(
                    "INSERT INTO documents (collection_id, kind, source, title, content_hash, mtime, size, indexed_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (collection.id, DocKind(kind).value, source, title, content_hash, mtime, size, time.time()))
                doc_id = cur.lastrowid
                new_ids = []
                for ord_, (chunk, vec) in enumerate(zip(chunks, vectors)):
                    cur = db.execute(
                        "INSERT INTO chunks (document_id, collection_id, ord, text, char_start, char_end,"
                        " start_time, end_time, segment_ids, segment_starts, vector)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (doc_id, collection.id, ord_, chunk.text, chunk.char_start, chunk.char_end,
                         chunk.start_time, chunk.end_time,
                         json.dumps(chunk.segment_ids) if chunk.segment_ids is not None else None,
                         json.dumps(chunk.segment_starts) if chunk.segment_starts is not None else None,
                         vec.astype(np.float32).tobytes()))
                    new_ids.append(cur.lastrowid)
                self._bump(db, collection.id, removed=old_ids, added=(np.array(new_ids, dtype=np.int64), vectors))
        except sqlite3.Error as exc:
            raise wrap_unexpected(exc, f"saving {source} to the search index") from exc
        return Document(doc_id, collection.id, DocKind(kind), source, title, content_hash, mtime, size, len(chunks))

    def remove_document(self, collection: Collection, source: str) -> bool:
        with self._transaction() as db:
            old_ids = self._delete_document(db, collection.id, source)
            if old_ids is None:
                return False
            self._bump(db, collection.id, removed=old_ids)
            return True

    def _delete_document(self, db: sqlite3.Connection, collection_id: int, source: str) -> np.ndarray | None:
        row = db.execute("SELECT id FROM documents WHERE collection_id=? AND source=?", (collection_id, source)).fetchone()
        if row is None:
            return None
        ids = np.array([r[0] for r in db.execute("SELECT id FROM chunks WHERE document_id=?", (row[0],))], dtype=np.int64)
        db.execute("DELETE FROM chunks WHERE document_id=?", (row[0],))
        db.execute("DELETE FROM documents WHERE id=?", (row[0],))
        return ids

    def _bump(self, db: sqlite3.Connection, collection_id: int, removed: np.ndarray | None = None,
              added: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Advance the collection's version and apply the same change to a loaded matrix."""
        before = db.execute("SELECT version FROM collections WHERE id=?", (collection_id,)).fetchone()[0]
        db.execute("UPDATE collections SET version=version+1 WHERE id=?", (collection_id,))
        cached = self._matrices.get(collection_id)
        if cached is None:
            return
        if cached[0] != before:  # someone else wrote in between: reload on next search
            del self._matrices[collection_id]
            return
        matrix = cached[1]
        if removed is not None:
            matrix.remove(removed)
        if added is not None:
            matrix.add(*added)
        self._matrices[collection_id] = (before + 1, matrix)

    # ------------------------------------------------------------------ search
    def matrix(self, collection: Collection) -> VectorMatrix:
        """The collection's int8 search matrix: the one in memory, else the saved one, else rebuilt."""
        with self._lock:
            version = self._db.execute("SELECT version FROM collections WHERE id=?", (collection.id,)).fetchone()[0]
            cached = self._matrices.get(collection.id)
            if cached is not None and cached[0] == version:
                return cached[1]
            self._db.execute("BEGIN")  # the key and the rows read from one snapshot
            try:
                key = self._matrix_key(collection.id)
                matrix = matrix_file.load(self._matrix_path(collection.id), key)
                built = matrix is None or matrix.dim != collection.dim
                if built:
                    matrix = self._build_matrix(collection, key["count"])
            finally:
                self._db.execute("COMMIT")
            if built:
                self._save_matrix(collection.id, key["version"], matrix, key)
            else:
                self._saved[collection.id] = key["version"]
            self._matrices[collection.id] = (key["version"], matrix)
            return matrix

    def _build_matrix(self, collection: Collection, count: int) -> VectorMatrix:
        from .vectors import VectorMatrix

        matrix = VectorMatrix(collection.dim, capacity=count)
        for ids, vecs in self._vector_rows(collection):
            matrix.add(ids, vecs)
        return matrix

    def _vector_rows(self, collection: Collection) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The collection's (chunk ids, float32 vectors) in blocks, by increasing id."""
        cur = self._db.execute("SELECT id, vector FROM chunks WHERE collection_id=? ORDER BY id", (collection.id,))
        while rows := cur.fetchmany(8192):
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            yield ids, np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), collection.dim)

    def _matrix_key(self, collection_id: int) -> dict:
        """What identifies the collection's current rows (one statement: one consistent snapshot)."""
        version, count, max_id = self._db.execute(
            "SELECT version, (SELECT count(*) FROM chunks WHERE collection_id=c.id),"
            " (SELECT max(id) FROM chunks WHERE collection_id=c.id) FROM collections c WHERE id=?",
            (collection_id,)).fetchone()
        return {"token": self._token, "collection": collection_id, "version": version, "count": count, "max_id": max_id}

    def _matrix_path(self, collection_id: int) -> Path:
        return self.path.with_name(f"{self.path.name}-vectors") / f"collection-{collection_id}.bin"

    def _save_matrix(self, collection_id: int, version: int, matrix: VectorMatrix, key: dict | None = None) -> None:
        """Save when ``matrix`` is still the database's current state; a failure only costs a rebuild later."""
        try:
            key = key or self._matrix_key(collection_id)
            if key["version"] == version and key["count"] == len(matrix):
                matrix_file.save(self._matrix_path(collection_id), key, matrix)
                self._saved[collection_id] = version
        except (OSError, sqlite3.Error, TypeError):
            pass

    def vectors(self, chunk_ids: np.ndarray) -> np.ndarray:
        """Float32 vectors of ``chunk_ids`` in that order, from the database."""
        ids = [int(i) for i in chunk_ids]
        with self._lock:
            rows = dict(self._db.execute(
                f"SELECT id, vector FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids).fetchall())
        return np.stack([np.frombuffer(rows[i], dtype=np.float32) for i in ids]) if ids else np.zeros((0, 0), np.float32)

    def search(self, query_vec: np.ndarray | None, query_text: str | None = None, collection: str = "default",
               k: int = 10, hybrid: bool = False) -> list[SearchHit]:
        """Top ``k`` chunks of ``collection``: exact cosine over ``query_vec`` (the query's embedding,
        made by the collection's model), fused with FTS5 BM25 over ``query_text`` when ``hybrid``.
        With no ``query_vec`` the search is by keywords only."""
        from .query import search

        return search(self, self.collection(collection), query_vec, query_text, k=k, hybrid=hybrid)


def _document(row: tuple) -> Document:
    doc_id, coll_id, kind, source, title, content_hash, mtime, size, chunks = row
    return Document(doc_id, coll_id, DocKind(kind), source, title, content_hash, mtime, size, chunks)
