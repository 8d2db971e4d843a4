"""NumpyMatrix and QueryStore: the torch-free search gives VectorMatrix's and SearchStore's exact top k."""

from __future__ import annotations

import numpy as np
import pytest
from test_search_vectors import _brute_force, _clustered, _fetcher, _matrix

from executors.search import Chunk, DocKind, SearchStore
from executors.search.query_store import NumpyMatrix, QueryStore


@pytest.mark.parametrize("dim", [384, 100])  # 100: the saved rows are padded to 112 columns
def test_the_numpy_scan_of_saved_rows_finds_the_int8_matrix_top_k(dim):
    vectors = _clustered(5000, dim, 1)
    vectors[:40] *= 0.3  # shorter rows: the bound must not assume unit length
    ids = np.arange(10, 10 + 3 * len(vectors), 3, dtype=np.int64)
    matrix = _matrix(ids, vectors)
    saved = NumpyMatrix.from_saved(dim, matrix.rows())
    floats = NumpyMatrix.from_vectors(ids, vectors)
    fetch = _fetcher(ids, vectors)
    for seed in range(20):
        query = _clustered(1, dim, 100 + seed)[0]
        for k in (1, 10, 57):
            expected = _brute_force(vectors, ids, query, k)
            for found in (m.search(query, k, fetch) for m in (saved, floats, matrix)):
                assert [i for i, _ in found] == [i for i, _ in expected]
                np.testing.assert_allclose([s for _, s in found], [s for _, s in expected], rtol=0, atol=1e-6)


def _store(path, vectors: np.ndarray) -> None:
    words = ["orbit", "launch", "bread", "flour", "garden", "tomato"]
    with SearchStore(path) as store:
        coll = store.collection("c", model_id="m", dim=vectors.shape[1])
        for d, start in enumerate(range(0, len(vectors), 100)):
            block = vectors[start:start + 100]
            chunks = [Chunk(f"{words[(d + i) % 6]} {words[i % 5]} row {start + i}", 0, 0) for i in range(len(block))]
            store.put_document(coll, DocKind.TEXT, f"doc:{d}", str(d), chunks, block)


@pytest.mark.parametrize("saved", [False, True])
def test_query_store_hits_are_the_search_stores(tmp_path, saved):
    vectors = _clustered(1200, 64, 2)
    path = tmp_path / "index.db"
    _store(path, vectors)
    queries = _clustered(8, 64, 3)
    cases = [(q, hybrid) for q in queries for hybrid in (False, True)]
    with SearchStore(path) as store:  # its first search builds the int8 matrix; closing saves it
        expected = [store.search(q, "orbit bread", "c", k=12, hybrid=hybrid) for q, hybrid in cases]
    folder = tmp_path / "index.db-vectors"
    if not saved:
        for file in folder.iterdir():
            file.unlink()
    before = {f.name: f.stat().st_mtime_ns for f in folder.iterdir()}
    with QueryStore(path) as store:
        found = [store.search(q, "orbit bread", "c", k=12, hybrid=hybrid) for q, hybrid in cases]
        assert (store.matrix(store.collection("c"))._codes.dtype == np.int8) == saved  # the saved rows, when current
    assert {f.name: f.stat().st_mtime_ns for f in folder.iterdir()} == before  # it saves no matrix
    assert bool(before) == saved
    for ours, theirs in zip(found, expected):
        assert [(h.chunk_id, h.matched_terms, h.keyword_rank) for h in ours] == \
            [(h.chunk_id, h.matched_terms, h.keyword_rank) for h in theirs]
        np.testing.assert_allclose([h.score for h in ours], [h.score for h in theirs], rtol=0, atol=1e-6)
