"""Searching the index without torch, for a process that only asks one query (``ferrum search``).

``VectorMatrix`` scans with a torch kernel, and importing torch takes longer than a whole
command-line search should. ``NumpyMatrix`` scans the same int8 rows (the matrix saved beside the
database, memory-mapped) in float32 with numpy, or the database's float32 rows when no saved matrix
matches the database, keeps every row the same bound admits (``bounds.ScoreBounds``: a float32 scan
stays inside the bound made for the bfloat16 kernel) and re-scores those from the database. The
top k is therefore exactly ``VectorMatrix``'s. ``QueryStore`` is a ``SearchStore`` that searches
through it; everything else (keywords, fusion, hits) is the store's and ``query``'s own code.
"""

from __future__ import annotations

import numpy as np

from . import matrix_file
from .bounds import FetchVectors, ScoreBounds, as_query, rescore
from .store import SearchStore
from .types import Collection

_BLOCK = 16384  # rows converted to float32 at a time: 24 MB at 384 dimensions


class NumpyMatrix:
    """Read-only rows of one collection: ``codes`` (int8 or float32) x per-row ``scales``."""

    def __init__(self, dim: int, ids: np.ndarray, codes: np.ndarray, scales: np.ndarray, error: np.ndarray,
                 norm: np.ndarray):
        self.dim = dim
        self._ids, self._codes, self._scales, self._error, self._norm = ids, codes, scales, error, norm

    @classmethod
    def from_saved(cls, dim: int, rows: dict[str, np.ndarray]) -> NumpyMatrix:
        """Over ``matrix_file.read_rows``'s rows (bfloat16 scales, stored as their 16 bits)."""
        scales = (rows["scales"].view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        return cls(dim, rows["ids"], rows["codes"], scales, rows["error"], rows["norm"])

    @classmethod
    def from_vectors(cls, ids: np.ndarray, vectors: np.ndarray) -> NumpyMatrix:
        """Over float32 rows themselves (no quantisation error)."""
        n = len(ids)
        return cls(vectors.shape[1], ids, vectors, np.ones(n, np.float32), np.zeros(n, np.float32),
                   np.linalg.norm(vectors, axis=1).astype(np.float32))

    def __len__(self) -> int:
        return len(self._ids)

    def search(self, query: np.ndarray, k: int, fetch: FetchVectors) -> list[tuple[int, float]]:
        """Exact top ``k`` (chunk id, cosine) by descending score, as ``VectorMatrix.search``."""
        n = len(self)
        if k <= 0 or not n:
            return []
        query = as_query(query, self.dim)
        approx = self._scan(query)
        margin = ScoreBounds(float(np.linalg.norm(query.astype(np.float64))), 0.0).margin(approx, self._error,
                                                                                            self._norm)
        k = min(k, n)
        floor = np.partition(approx - margin, n - k)[n - k]  # k rows score at least this
        return rescore(self._ids[np.flatnonzero(approx + margin >= floor)], query, k, fetch)

    def _scan(self, query: np.ndarray) -> np.ndarray:
        scores = np.empty(len(self), dtype=np.float32)
        for start in range(0, len(self), _BLOCK):
            block = self._codes[start:start + _BLOCK, :self.dim]
            scores[start:start + len(block)] = block.astype(np.float32, copy=False) @ query
        return scores * self._scales


class QueryStore(SearchStore):
    """A ``SearchStore`` whose vector search needs no torch. It never writes a search matrix (making
    the int8 one needs torch): without a current saved one it scans the float32 rows of the database,
    which the next search of a torch process saves again."""

    def matrix(self, collection: Collection) -> NumpyMatrix:
        with self.lock:
            self.connection.execute("BEGIN")  # the key and the rows read from one snapshot
            try:
                key = self._matrix_key(collection.id)
                saved = matrix_file.read_rows(self._matrix_path(collection.id), key)
                if saved is not None and saved[0] == collection.dim:
                    return NumpyMatrix.from_saved(*saved)
                blocks = list(self._vector_rows(collection))
            finally:
                self.connection.execute("COMMIT")
        if not blocks:
            return NumpyMatrix.from_vectors(np.zeros(0, np.int64), np.zeros((0, collection.dim), np.float32))
        return NumpyMatrix.from_vectors(np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks]))
