"""VectorMatrix: the int8 scan's error bound holds and the top k equals numpy's float32 brute force."""

from __future__ import annotations

import numpy as np
import pytest

from executors.search import VectorMatrix
from executors.search.vectors import normalise


def _clustered(n: int, dim: int, seed: int, centres: int = 20, spread: float = 0.3) -> np.ndarray:
    """Unit vectors in tight clusters: many rows score nearly alike, the hard case for a bound."""
    rng = np.random.default_rng(seed)
    middle = rng.standard_normal((centres, dim), dtype=np.float32)
    return normalise(middle[rng.integers(0, centres, n)] + spread * rng.standard_normal((n, dim), dtype=np.float32))


def _matrix(ids: np.ndarray, vectors: np.ndarray, batch: int = 700) -> VectorMatrix:
    matrix = VectorMatrix(vectors.shape[1], capacity=16)
    for start in range(0, len(ids), batch):
        matrix.add(ids[start:start + batch], vectors[start:start + batch])
    return matrix


def _fetcher(ids: np.ndarray, vectors: np.ndarray):
    return lambda chosen: vectors[np.searchsorted(ids, chosen)]


def _brute_force(vectors: np.ndarray, ids: np.ndarray, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    scores = vectors @ query
    order = np.argsort(-scores, kind="stable")[:k]
    return [(int(ids[i]), float(scores[i])) for i in order]


@pytest.mark.parametrize("dim", [384, 100])  # 100: rows padded to the kernel's 16 columns
def test_scan_error_stays_within_the_bound(dim):
    vectors = _clustered(4000, dim, 0)
    vectors[:50] *= 0.2  # shorter rows and a zero row: the bound must not assume unit length
    vectors[50] = 0
    matrix = _matrix(np.arange(1, 4001), vectors)
    queries = [*_clustered(8, dim, 1), vectors[7], 3.0 * vectors[9], normalise(np.ones((1, dim)))[0]]
    for q in queries:
        scores, bounds = matrix._scan(np.asarray(q, dtype=np.float32))
        approx = scores.float().numpy()
        margin = bounds.margin(approx, matrix._error[:4000], matrix._norm[:4000])
        error = np.abs(vectors.astype(np.float64) @ q.astype(np.float64) - approx)
        assert (error <= margin).all()
        assert margin.max() < 0.05 * max(1.0, np.linalg.norm(q))  # a bound, not a blanket


def test_bound_covers_the_rounding_of_scores_to_bfloat16():
    """Rows and a query the int8 codes and bfloat16 represent exactly: only the scores' rounding is left."""
    rng = np.random.default_rng(12)
    codes = rng.integers(-127, 128, (3000, 384)).astype(np.float32)
    codes[:, 0] = 127  # each row's peak, so its scale is exactly the one chosen below
    vectors = codes * np.float32(2.0**-11)
    matrix = _matrix(np.arange(1, 3001), vectors)
    assert not matrix._error[:3000].any()
    q = np.zeros(384, np.float32)
    q[:8] = [0.5, 0.25, -0.125, 0.75, 0.375, -0.5, 0.0625, 0.25]  # exact in bfloat16
    scores, bounds = matrix._scan(q)
    approx = scores.float().numpy()
    error = np.abs(vectors.astype(np.float64) @ q - approx)
    assert error.max() > 0  # the rounding is real ...
    assert (error <= bounds.margin(approx, matrix._error[:3000], matrix._norm[:3000])).all()  # ... and bounded


@pytest.mark.parametrize("k", [1, 10, 100, 1000])
def test_top_k_equals_float32_brute_force_with_deleted_rows(k):
    vectors = _clustered(6000, 384, 2)
    ids = np.arange(1, 6001, dtype=np.int64) * 7
    matrix = _matrix(ids, vectors)
    gone = ids[np.random.default_rng(3).choice(6000, 900, replace=False)]  # below the compaction threshold
    matrix.remove(gone)
    keep = ~np.isin(ids, gone)
    queries = [*_clustered(5, 384, 4), vectors[np.flatnonzero(~keep)[0]], vectors[np.flatnonzero(keep)[0]]]
    for q in queries:
        got = matrix.search(q, k, fetch=_fetcher(ids, vectors))
        expected = _brute_force(vectors[keep], ids[keep], q, k)
        assert [i for i, _ in got] == [i for i, _ in expected]
        np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=0, atol=1e-6)


def test_k_beyond_the_live_rows_returns_them_all_in_order():
    vectors = _clustered(300, 384, 5)
    ids = np.arange(10, 310, dtype=np.int64)
    matrix = _matrix(ids, vectors)
    matrix.remove(ids[:120])
    q = _clustered(1, 384, 6)[0]
    got = matrix.search(q, 1000, fetch=_fetcher(ids, vectors))
    assert len(got) == 180
    assert [i for i, _ in got] == [i for i, _ in _brute_force(vectors[120:], ids[120:], q, 1000)]


def test_identical_rows_tie_in_id_order_as_brute_force():
    vectors = _clustered(2000, 384, 7)
    vectors[1000:1040] = vectors[5]  # 41 equal rows: more than k, order decided by id
    ids = np.arange(1, 2001, dtype=np.int64)
    matrix = _matrix(ids, vectors)
    got = matrix.search(vectors[5], 30, fetch=_fetcher(ids, vectors))
    assert [i for i, _ in got] == [i for i, _ in _brute_force(vectors, ids, vectors[5], 30)]
    assert [i for i, _ in got] == [6, *range(1001, 1030)]


def test_compaction_after_many_removals_keeps_search_exact():
    vectors = _clustered(5000, 384, 8)
    ids = np.arange(1, 5001, dtype=np.int64)
    matrix = _matrix(ids, vectors)
    gone = ids[:3000]  # past the compaction threshold
    matrix.remove(gone)
    more = _clustered(500, 384, 9)
    matrix.add(np.arange(6001, 6501), more)
    all_ids, all_vectors = np.concatenate([ids[3000:], np.arange(6001, 6501)]), np.concatenate([vectors[3000:], more])
    assert len(matrix) == 2500
    for q in _clustered(4, 384, 10):
        got = matrix.search(q, 10, fetch=_fetcher(all_ids, all_vectors))
        assert [i for i, _ in got] == [i for i, _ in _brute_force(all_vectors, all_ids, q, 10)]


def test_query_of_the_wrong_size_is_refused():
    matrix = _matrix(np.arange(1, 11), _clustered(10, 384, 11))
    with pytest.raises(ValueError, match="dimensions"):
        matrix.search(np.ones(100, np.float32), 3, fetch=lambda ids: None)
