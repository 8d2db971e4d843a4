"""How far a scanned score may lie from a row's true cosine, and the exact re-score of the candidates.

Both search matrices (``vectors.VectorMatrix`` with torch's int8 kernel, ``query_store.NumpyMatrix``
without torch) scan approximate scores, keep every row whose true score can reach the k-th best and
re-score those few in float32 from the database, so both give the exact top k.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# The kernel rounds each score to bfloat16 (8 significant bits): |error| <= 2**-8 |score|,
# taken relative to the rounded value, hence the (1 + 2**-7).
_ROUNDING = 2.0**-8 * (1 + 2.0**-7)
# Float32 accumulation of a few hundred products, in the kernel and in the float32 re-score,
# moves a score by < 2e-6 for unit vectors; this covers it many times over.
_SLACK = 2.0**-13

FetchVectors = Callable[[np.ndarray], np.ndarray]  # chunk ids -> float32 rows in that order


@dataclass(frozen=True)
class ScoreBounds:
    """|true score - scanned score| <= E for a row, where, for query q and its bfloat16 copy q':

    q.r - q'.d = q.(r - d) + (q - q').d, with d the decoded row, so by Cauchy-Schwarz
    E = |q| |r - d| + |q - q'| |d| + rounding of the score to bfloat16 + float32 slack.
    A scan in float32 (q' = q, no bfloat16 rounding) stays inside the same E."""

    query_norm: float
    query_error: float

    def margin(self, approx: np.ndarray, error: np.ndarray, norm: np.ndarray) -> np.ndarray:
        return (self.query_norm * error + (self.query_error + _SLACK * self.query_norm) * norm
                + _ROUNDING * np.abs(approx))

    def highest(self, approx: float, max_error: float, max_norm: float) -> float:
        """An upper bound on the true score of every row whose scanned score is at most ``approx``."""
        return float(approx + self.margin(np.float32(approx), np.float32(max_error), np.float32(max_norm)))


def as_query(query: np.ndarray, dim: int) -> np.ndarray:
    """``query`` as one float32 row of ``dim`` values (a ValueError for another length)."""
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    if query.shape[0] != dim:
        raise ValueError(f"query has {query.shape[0]} dimensions, the index {dim}")
    return query


def rescore(ids: np.ndarray, query: np.ndarray, k: int, fetch: FetchVectors) -> list[tuple[int, float]]:
    """The top ``k`` (chunk id, cosine) of the candidates ``ids`` (ascending, so ties keep id order as a
    brute force would), scored in float32 from the database rows ``fetch`` gives."""
    exact = fetch(ids).astype(np.float32, copy=False) @ query
    order = np.argsort(-exact, kind="stable")[:k]
    return [(int(ids[i]), float(exact[i])) for i in order]
