"""SearchStore and VectorMatrix: exact top-k, transactions, FTS5, cross-handle consistency.

These tests exercise the storage layer on its own, so they feed it synthetic unit vectors;
the tests that embed real text with the bundled MiniLM are in test_indexer/test_search_quality.
"""

from __future__ import annotations

import numpy as np
import pytest

from executors.core.errors import FerrumError, InvalidParameterError, NotFoundError
from executors.search import (
    Chunk,
    DocKind,
    SearchStore,
    VectorMatrix,
    reciprocal_rank_fusion,
)
from executors.search.vectors import normalise

DIM = 384


def _unit(n: int, seed: int) -> np.ndarray:
    return normalise(np.random.default_rng(seed).standard_normal((n, DIM), dtype=np.float32))


def _chunks(texts: list[str]) -> list[Chunk]:
    return [Chunk(t, 0, len(t)) for t in texts]


def _brute_force(vectors: np.ndarray, ids: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    return [int(ids[i]) for i in np.argsort(-(vectors @ query), kind="stable")[:k]]


def _fetcher(ids: np.ndarray, vectors: np.ndarray):
    """The float32 rows of chosen ids, as the store's ``vectors`` gives them from the database."""
    return lambda chosen: vectors[np.searchsorted(ids, chosen)]


@pytest.fixture()
def store(tmp_path):
    with SearchStore(tmp_path / "index.db") as s:
        yield s


def test_matrix_top_k_is_exact_against_float32_brute_force():
    vectors = _unit(5000, 0)
    # near-duplicates closer together than float16 can tell apart: only the float32 re-score orders them
    vectors[10:110] = normalise(vectors[3] + np.random.default_rng(1).standard_normal((100, DIM)) * 1e-3)
    ids = np.arange(1, 5001, dtype=np.int64) * 3
    matrix = VectorMatrix(DIM)
    matrix.add(ids[:2500], vectors[:2500])
    matrix.add(ids[2500:], vectors[2500:])
    for q in [vectors[3], *_unit(5, 2)]:
        got = matrix.search(q, 10, fetch=_fetcher(ids, vectors))
        assert [i for i, _ in got] == _brute_force(vectors, ids, q, 10)
        np.testing.assert_allclose([s for _, s in got], np.sort(vectors @ q)[::-1][:10], rtol=0, atol=1e-6)


def test_matrix_removal_and_compaction_keep_search_exact():
    vectors = _unit(3000, 3)
    ids = np.arange(1, 3001, dtype=np.int64)
    matrix = VectorMatrix(DIM, capacity=16)  # grows several times
    matrix.add(ids, vectors)
    gone = ids[::2]  # 1500 removals: past the compaction threshold
    matrix.remove(gone)
    matrix.remove(np.array([999_999], dtype=np.int64))  # unknown ids are ignored
    assert len(matrix) == 1500
    keep = ~np.isin(ids, gone)
    for q in _unit(3, 4):
        got = [i for i, _ in matrix.search(q, 25, fetch=_fetcher(ids, vectors))]
        assert got == _brute_force(vectors[keep], ids[keep], q, 25)
        assert not set(got) & set(gone.tolist())


def test_store_search_is_exact_and_survives_reopen(tmp_path):
    vectors = _unit(600, 5)
    with SearchStore(tmp_path / "s.db") as store:
        coll = store.collection("c", model_id="m", dim=DIM)
        for d in range(6):
            store.put_document(coll, DocKind.FILE, f"/doc{d}", f"h{d}", _chunks([f"doc {d} chunk {i}" for i in range(100)]),
                               vectors[d * 100:(d + 1) * 100])
        q = _unit(1, 6)[0]
        first = store.search(q, None, "c", k=8)
    expected = np.argsort(-(vectors @ q))[:8]
    assert [h.text for h in first] == [f"doc {i // 100} chunk {i % 100}" for i in expected]
    with SearchStore(tmp_path / "s.db") as reopened:  # matrix rebuilt from the database
        again = reopened.search(q, None, "c", k=8)
    assert [h.chunk_id for h in again] == [h.chunk_id for h in first]
    assert [h.score for h in again] == pytest.approx([h.score for h in first], abs=1e-6)


def test_replacing_and_removing_documents_updates_search(store):
    coll = store.collection("c", model_id="m", dim=DIM)
    v = _unit(4, 7)
    store.put_document(coll, DocKind.FILE, "/a", "h1", _chunks(["old a"]), v[:1])
    store.put_document(coll, DocKind.FILE, "/b", "h2", _chunks(["b"]), v[1:2])
    assert store.search(v[0], None, "c", k=1)[0].text == "old a"  # matrix now loaded
    store.put_document(coll, DocKind.FILE, "/a", "h3", _chunks(["new a 1", "new a 2"]), v[2:4])
    texts = {h.text for h in store.search(v[0], None, "c", k=10)}
    assert texts == {"new a 1", "new a 2", "b"}
    assert store.remove_document(coll, "/b") and not store.remove_document(coll, "/b")
    assert {h.source for h in store.search(v[1], None, "c", k=10)} == {"/a"}
    assert [d.source for d in store.documents(coll)] == ["/a"] and store.document(coll, "/a").chunks == 2
    assert [(c.name, c.documents, c.chunks) for c in store.collections()] == [("c", 1, 2)]


def test_a_failed_write_leaves_no_partial_document(store):
    coll = store.collection("c", model_id="m", dim=DIM)
    bad = [Chunk("fine", 0, 4), Chunk(None, 0, 0)]  # NOT NULL fails on the second chunk
    with pytest.raises(FerrumError):
        store.put_document(coll, DocKind.FILE, "/x", "h", bad, _unit(2, 8))
    assert store.document(coll, "/x") is None
    assert store.connection.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0
    assert store.search(_unit(1, 9)[0], "fine", "c", k=5, hybrid=True) == []


def test_collection_is_bound_to_one_model(store):
    store.collection("notes", model_id="model-a", dim=DIM)
    with pytest.raises(InvalidParameterError, match="model-a"):
        store.collection("notes", model_id="model-b", dim=DIM)
    with pytest.raises(NotFoundError):
        store.collection("missing")
    with pytest.raises(InvalidParameterError):
        store.search(np.ones(DIM // 2, np.float32), None, "notes")


def test_writes_by_another_handle_are_seen(tmp_path):
    v = _unit(3, 10)
    with SearchStore(tmp_path / "s.db") as one, SearchStore(tmp_path / "s.db") as two:
        coll = one.collection("c", model_id="m", dim=DIM)
        one.put_document(coll, DocKind.TEXT, "text:1", "h", _chunks(["first"]), v[:1])
        assert [h.text for h in two.search(v[1], None, "c", k=5)] == ["first"]
        one.put_document(coll, DocKind.TEXT, "text:2", "h", _chunks(["second"]), v[1:2])
        assert two.search(v[1], None, "c", k=5)[0].text == "second"


def test_keyword_search_ranks_by_bm25_and_reports_matched_words(store):
    coll = store.collection("c", model_id="m", dim=DIM)
    texts = ["The shuttle launches were delayed by weather.",
             "Launch of the probe; another launch next year, launch windows permitting.",
             "Nothing to see here: a recipe for bread."]
    for i, t in enumerate(texts):
        store.put_document(coll, DocKind.TEXT, f"text:{i}", str(i), _chunks([t]), _unit(1, 20 + i))
    hits = store.search(None, "the launch", "c", k=5)
    assert [h.text for h in hits] == texts[1::-1]  # the denser match first; the recipe never
    assert hits[0].matched_terms == ["Launch", "launch"]
    assert hits[1].matched_terms == ["launches"]  # porter stemming; 'the' is a stopword
    assert all(h.keyword_rank == r for r, h in enumerate(hits, 1))


def test_hybrid_fuses_both_rankings():
    fused = reciprocal_rank_fusion([[1, 2, 3], [3, 4]])
    assert [i for i, _ in fused] == [3, 1, 2, 4]
    assert fused[0][1] == pytest.approx(1 / 63 + 1 / 61)


def test_hybrid_search_returns_keyword_only_and_vector_only_hits(store):
    coll = store.collection("c", model_id="m", dim=DIM)
    v = _unit(2, 30)
    store.put_document(coll, DocKind.TEXT, "text:v", "1", _chunks(["semantic neighbour"]), v[:1])
    store.put_document(coll, DocKind.TEXT, "text:k", "2", _chunks(["contains the word telescope"]), v[1:])
    hits = store.search(v[0], "telescope", "c", k=2, hybrid=True)
    by_source = {h.source: h for h in hits}
    assert set(by_source) == {"text:v", "text:k"}
    assert by_source["text:k"].matched_terms == ["telescope"] and by_source["text:k"].keyword_rank == 1
    assert by_source["text:v"].matched_terms == [] and by_source["text:v"].vector_score == pytest.approx(1.0, abs=1e-5)
    assert by_source["text:k"].vector_score == pytest.approx(float(v[1] @ v[0]), abs=1e-6)  # keyword-only hit
