"""In-memory vector matrix of one collection and exact top-k cosine search over it.

The SQLite database holds every vector in float32 and is the only truth; this matrix is a
float16 copy built from it (and kept in step by the store), so it is never written to disk
and a crash cannot make it disagree with the database.

Why float16: scoring 1M x 384 is a matrix-vector product bound by memory bandwidth, and
half the bytes is about twice as fast (torch's float16 ``mv`` accumulates in float32). Rounding
both sides to float16 moves a cosine score by at most a few 2**-11, so the scan keeps every
row that could be in the true top k (those within ``_MARGIN`` of the k-th approximate score)
and those candidates are re-scored in float32 from the database: the result is exact.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

# Bound on |float16 score - float32 score| for unit vectors: rounding the query, the row and
# the output each move the score by <= 2**-11 (Cauchy-Schwarz); one more 2**-11 of slack.
_MARGIN = 2 * 4 * 2.0**-11
_MAX_CANDIDATES = 4096

FetchVectors = Callable[[np.ndarray], np.ndarray]  # chunk ids -> float32 rows in that order


class VectorMatrix:
    """Rows of unit vectors keyed by increasing chunk id; deleted rows are tombstoned."""

    def __init__(self, dim: int, capacity: int = 1024):
        self.dim = dim
        self._rows = np.zeros((max(capacity, 16), dim), dtype=np.float16)
        self._ids = np.zeros(len(self._rows), dtype=np.int64)
        self._alive = np.zeros(len(self._rows), dtype=bool)
        self._n = 0
        self._dead = 0
        self._dead_cache: torch.Tensor | None = None

    def __len__(self) -> int:
        return self._n - self._dead

    @property
    def nbytes(self) -> int:
        return self._rows.nbytes

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Append rows; ``ids`` must be larger than every id already here (SQLite AUTOINCREMENT)."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids):
            return
        if self._n and ids[0] <= self._ids[self._n - 1]:
            raise ValueError("vector ids must grow")
        need = self._n + len(ids)
        if need > len(self._rows):
            self._grow(max(need, len(self._rows) * 3 // 2))
        self._rows[self._n:need] = vectors
        self._ids[self._n:need] = ids
        self._alive[self._n:need] = True
        self._n = need

    def remove(self, ids: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids) or not self._n:
            return
        pos = np.searchsorted(self._ids[:self._n], ids)
        inside = pos < self._n
        pos = pos[inside][self._ids[pos[inside]] == ids[inside]]
        pos = pos[self._alive[pos]]
        self._alive[pos] = False
        self._rows[pos] = 0
        self._dead += len(pos)
        self._dead_cache = None
        if self._dead > 1024 and self._dead * 4 > self._n:
            self._compact()

    def search(self, query: np.ndarray, k: int, fetch: FetchVectors | None = None) -> list[tuple[int, float]]:
        """Top ``k`` (chunk id, cosine) by descending score; exact when ``fetch`` gives float32 rows."""
        live = len(self)
        if k <= 0 or not live:
            return []
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dim:
            raise ValueError(f"query has {query.shape[0]} dimensions, the index {self.dim}")
        rows = torch.from_numpy(self._rows[:self._n])
        scores = torch.mv(rows, torch.from_numpy(query.astype(np.float16)))  # float16, float32 accumulation
        if self._dead:
            scores[self._dead_positions()] = -torch.inf
        k = min(k, live)
        # widen the partial sort until it reaches past the margin below the k-th score
        # (one topk of a few dozen rows nearly always suffices; a boolean scan of all rows is far slower)
        want = min(self._n, max(2 * k, k + 32))
        while True:
            values, positions = torch.topk(scores, want)
            threshold = float(values[k - 1]) - _MARGIN
            if want == self._n or float(values[-1]) < threshold or want >= _MAX_CANDIDATES:
                break
            want = min(self._n, _MAX_CANDIDATES, want * 4)
        candidates = positions[values >= threshold]
        pos = candidates.numpy()
        ids = self._ids[pos]
        if fetch is not None:
            exact = fetch(ids).astype(np.float32, copy=False) @ query
        else:
            exact = self._rows[pos].astype(np.float32) @ query
        order = np.argsort(-exact, kind="stable")[:k]
        return [(int(ids[i]), float(exact[i])) for i in order]

    def _dead_positions(self) -> torch.Tensor:
        if self._dead_cache is None:
            self._dead_cache = torch.from_numpy(np.flatnonzero(~self._alive[:self._n]))
        return self._dead_cache

    def _grow(self, capacity: int) -> None:
        for name in ("_rows", "_ids", "_alive"):
            old = getattr(self, name)
            new = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            new[:self._n] = old[:self._n]
            setattr(self, name, new)

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[:self._n])
        n = len(keep)
        self._rows[:n] = self._rows[keep]
        self._ids[:n] = self._ids[keep]
        self._alive[:n] = True
        self._alive[n:self._n] = False
        self._rows[n:self._n] = 0
        self._n, self._dead, self._dead_cache = n, 0, None


def normalise(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise rows in float32 (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)
