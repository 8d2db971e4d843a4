"""In-memory int8 vector matrix of one collection and exact top-k cosine search over it.

The SQLite database holds every vector in float32 and is the only truth; this matrix is an
int8 copy built from it, kept in step by the store and saved beside the database only as a
cache keyed by the database's state (``matrix_file``), so it can never disagree with it.

Why int8: scoring 1M x 384 is a matrix-vector product bound by memory bandwidth, so the
fewer bytes per row the faster. Each row is stored as int8 codes times one bfloat16 scale
(its largest |value| / 127) and scanned with torch's ``_weight_int8pack_mm`` (an AVX-512/AVX2
kernel: bfloat16 query, float32 accumulation, bfloat16 scores) — about 3x faster than a
float16 ``mv`` over 1M rows, in half the memory (``scan_kernel``: float32 where torch lacks it).

Exactness: every approximate score ``a`` is within a proven bound ``E`` of the true cosine
(see ``bounds.ScoreBounds``), so the scan keeps every row whose ``a + E`` reaches the k-th largest
``a - E``; those few candidates (a hundred or so for k=10 at 1M) are re-scored in float32
from the database and the result is the exact top k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import scan_kernel
from .bounds import FetchVectors, ScoreBounds, as_query, rescore

_COLUMNS = 16  # the kernel reads 16 columns at a time (other widths: garbage, or a crash): rows are zero-padded


@dataclass(frozen=True)
class Quantised:
    """Rows as int8 ``codes`` x bfloat16 ``scales``, with what the search bound needs of each row."""

    codes: np.ndarray  # (n, padded dim) int8
    scales: torch.Tensor  # (n,) bfloat16
    error: np.ndarray  # (n,) float32: |row - decoded row|
    norm: np.ndarray  # (n,) float32: |decoded row|


def quantise(vectors: np.ndarray, width: int) -> Quantised:
    rows = torch.from_numpy(np.require(vectors, np.float32, ["C", "W"]))
    peak = torch.linalg.vector_norm(rows, ord=float("inf"), dim=1)
    scales = torch.where(peak > 0, peak / 127, 1.0).to(torch.bfloat16)
    scale = scales.float()[:, None]
    codes = torch.div(rows, scale).round_().clamp_(-127, 127)
    decoded = codes.mul(scale)  # exact: 8-bit code x 8-bit scale
    padded = np.zeros((len(rows), width), dtype=np.int8)
    padded[:, :rows.shape[1]] = codes.to(torch.int8).numpy()
    return Quantised(padded, scales, torch.linalg.vector_norm(decoded - rows, dim=1).numpy(),
                     torch.linalg.vector_norm(decoded, dim=1).numpy())


class VectorMatrix:
    """Rows of vectors keyed by increasing chunk id; deleted rows are tombstoned."""

    def __init__(self, dim: int, capacity: int = 1024):
        self.dim = dim
        self.width = -(-dim // _COLUMNS) * _COLUMNS
        capacity = max(capacity, 16)
        self._codes = np.zeros((capacity, self.width), dtype=np.int8)
        self._scales = torch.zeros(capacity, dtype=torch.bfloat16)
        self._error = np.zeros(capacity, dtype=np.float32)
        self._norm = np.zeros(capacity, dtype=np.float32)
        self._ids = np.zeros(capacity, dtype=np.int64)
        self._alive = np.zeros(capacity, dtype=bool)
        self._n = 0
        self._dead = 0
        self._dead_cache: torch.Tensor | None = None
        self._max_error = self._max_norm = 0.0

    def __len__(self) -> int:
        return self._n - self._dead

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self._codes, self._error, self._norm, self._ids, self._alive)) + \
            self._scales.nbytes

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Append rows; ``ids`` must be larger than every id already here (SQLite AUTOINCREMENT)."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids):
            return
        if self._n and ids[0] <= self._ids[self._n - 1]:
            raise ValueError("vector ids must grow")
        need = self._n + len(ids)
        if need > len(self._ids):
            self._grow(max(need, len(self._ids) * 3 // 2))
        rows = quantise(vectors, self.width)
        self._codes[self._n:need] = rows.codes
        self._scales[self._n:need] = rows.scales
        self._error[self._n:need] = rows.error
        self._norm[self._n:need] = rows.norm
        self._ids[self._n:need] = ids
        self._alive[self._n:need] = True
        self._max_error = max(self._max_error, float(rows.error.max()))
        self._max_norm = max(self._max_norm, float(rows.norm.max()))
        self._n = need

    def rows(self) -> dict[str, np.ndarray]:
        """The live rows' arrays (views, after compaction), as ``from_rows`` takes them back."""
        if self._dead:
            self._compact()
        n = self._n
        return {"codes": self._codes[:n], "scales": self._scales[:n].view(torch.int16).numpy(),
                "error": self._error[:n], "norm": self._norm[:n], "ids": self._ids[:n]}

    @classmethod
    def from_rows(cls, dim: int, rows: dict[str, np.ndarray]) -> VectorMatrix:
        """A matrix over saved ``rows`` (not copied: a writable memory map serves); adding copies them."""
        matrix = cls(dim, capacity=0)
        if rows["codes"].shape[1:] != (matrix.width,) or len({len(a) for a in rows.values()}) != 1:
            raise ValueError("saved vector rows do not fit this matrix")
        matrix._codes, matrix._error, matrix._norm, matrix._ids = (rows[f] for f in ("codes", "error", "norm", "ids"))
        matrix._scales = torch.from_numpy(rows["scales"]).view(torch.bfloat16)
        matrix._alive = np.ones(len(matrix._ids), dtype=bool)
        matrix._n = len(matrix._ids)
        matrix._max_error = float(matrix._error.max(initial=0.0))
        matrix._max_norm = float(matrix._norm.max(initial=0.0))
        return matrix

    def remove(self, ids: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids) or not self._n:
            return
        pos = np.searchsorted(self._ids[:self._n], ids)
        inside = pos < self._n
        pos = pos[inside][self._ids[pos[inside]] == ids[inside]]
        pos = pos[self._alive[pos]]
        self._alive[pos] = False
        self._dead += len(pos)
        self._dead_cache = None
        if self._dead > 1024 and self._dead * 4 > self._n:
            self._compact()

    def search(self, query: np.ndarray, k: int, fetch: FetchVectors) -> list[tuple[int, float]]:
        """Exact top ``k`` (chunk id, cosine) by descending score; ``fetch`` gives the float32 rows."""
        live = len(self)
        if k <= 0 or not live:
            return []
        query = as_query(query, self.dim)
        scores, bounds = self._scan(query)
        pos = np.sort(self._candidates(scores, bounds, min(k, live), live))  # id order: ties as brute force
        return rescore(self._ids[pos], query, k, fetch)

    def _scan(self, query: np.ndarray) -> tuple[torch.Tensor, ScoreBounds]:
        """Approximate bfloat16 scores of every row (dead rows -inf) and their error bounds."""
        padded = torch.zeros(1, self.width, dtype=torch.bfloat16)
        padded[0, :self.dim] = torch.from_numpy(query)
        rounded = padded[0, :self.dim].float().numpy()
        bounds = ScoreBounds(float(np.linalg.norm(query.astype(np.float64))),
                             float(np.linalg.norm(query.astype(np.float64) - rounded)))
        scores = scan_kernel.scores(padded, torch.from_numpy(self._codes[:self._n]), self._scales[:self._n])
        if self._dead:
            scores[self._dead_positions()] = -torch.inf
        return scores, bounds

    def _candidates(self, scores: torch.Tensor, bounds: ScoreBounds, k: int, live: int) -> np.ndarray:
        """Positions of every row whose true score can reach the k-th best (never a dead one).

        A partial sort of the best few hundred nearly always reaches past the bound; otherwise it
        widens. Only live rows have finite scores, so taking at most ``live`` never takes a dead one."""
        want = min(live, max(8 * k, 256))
        while True:
            values, positions = torch.topk(scores, want)
            approx, pos = values.float().numpy(), positions.numpy()
            margin = bounds.margin(approx, self._error[pos], self._norm[pos])
            floor = np.partition(approx - margin, want - k)[want - k]  # k rows score at least this
            if want == live or bounds.highest(approx[-1], self._max_error, self._max_norm) < floor:
                return pos[approx + margin >= floor]
            want = min(live, want * 4)

    def _dead_positions(self) -> torch.Tensor:
        if self._dead_cache is None:
            self._dead_cache = torch.from_numpy(np.flatnonzero(~self._alive[:self._n]))
        return self._dead_cache

    def _grow(self, capacity: int) -> None:
        for name in ("_codes", "_scales", "_error", "_norm", "_ids", "_alive"):
            old = getattr(self, name)
            new = (torch.zeros if isinstance(old, torch.Tensor) else np.zeros)((capacity, *old.shape[1:]), dtype=old.dtype)
            new[:self._n] = old[:self._n]
            setattr(self, name, new)

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[:self._n])
        n = len(keep)
        for name in ("_codes", "_error", "_norm", "_ids"):
            array = getattr(self, name)
            array[:n] = array[keep]
        self._scales[:n] = self._scales[torch.from_numpy(keep)]
        self._alive[:n] = True
        self._alive[n:self._n] = False
        self._n, self._dead, self._dead_cache = n, 0, None
        self._max_error = float(self._error[:n].max(initial=0.0))
        self._max_norm = float(self._norm[:n].max(initial=0.0))


def normalise(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise rows in float32 (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)
