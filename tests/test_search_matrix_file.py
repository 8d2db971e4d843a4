"""The search matrix saved beside the database: reused only when it matches the database."""

from __future__ import annotations

import numpy as np

from executors.search import Chunk, DocKind, SearchStore
from executors.search.vectors import normalise

DIM = 384


def _unit(n: int, seed: int) -> np.ndarray:
    return normalise(np.random.default_rng(seed).standard_normal((n, DIM), dtype=np.float32))


def _put(store: SearchStore, source: str, vectors: np.ndarray) -> None:
    coll = store.collection("c", model_id="m", dim=DIM)
    store.put_document(coll, DocKind.TEXT, source, source, [Chunk(f"{source} {i}", 0, 1) for i in range(len(vectors))],
                       vectors)


def _top(store: SearchStore, query: np.ndarray, k: int = 10) -> list[tuple[str, float]]:
    return [(h.text, round(h.score, 6)) for h in store.search(query, None, "c", k=k)]


def _from_file(store: SearchStore) -> bool:
    return isinstance(store.matrix(store.collection("c")).rows()["codes"], np.memmap)


def _saved_files(tmp_path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "s.db-vectors").glob("*"))


def test_reopening_maps_the_saved_matrix_and_finds_the_same(tmp_path):
    vectors = _unit(900, 1)
    q = _unit(1, 2)[0]
    with SearchStore(tmp_path / "s.db") as store:
        _put(store, "a", vectors[:500])
        _put(store, "b", vectors[500:])
        first = _top(store, q)
        assert not _from_file(store)  # built from the database, then saved
    assert _saved_files(tmp_path) == ["collection-1.bin"]
    with SearchStore(tmp_path / "s.db") as store:
        assert _top(store, q) == first
        assert _from_file(store)


def test_changes_after_loading_are_saved_on_close(tmp_path):
    vectors = _unit(600, 3)
    with SearchStore(tmp_path / "s.db") as store:
        _put(store, "a", vectors[:300])
        _top(store, vectors[0])
        _put(store, "b", vectors[300:])  # kept in step in memory, saved on close
        store.remove_document(store.collection("c"), "a")
    with SearchStore(tmp_path / "s.db") as store:
        assert _top(store, vectors[0], k=3)[0][0].startswith("b ")
        assert _from_file(store) and len(store.matrix(store.collection("c"))) == 300
        # a write that reaches the loaded (memory-mapped) matrix changes memory, never the file
        _put(store, "c", vectors[:1])
        assert _top(store, vectors[0], k=1) == [("c 0", 1.0)]
    with SearchStore(tmp_path / "s.db") as store:
        assert _top(store, vectors[0], k=1) == [("c 0", 1.0)] and _from_file(store)


def test_a_file_from_another_state_or_damaged_is_rebuilt(tmp_path):
    vectors = _unit(400, 4)
    with SearchStore(tmp_path / "s.db") as store:
        _put(store, "a", vectors[:200])
        _top(store, vectors[0])
    with SearchStore(tmp_path / "s.db") as writer:  # never searches: its write leaves the file stale
        _put(writer, "b", vectors[200:])
    with SearchStore(tmp_path / "s.db") as store:
        assert _top(store, vectors[300], k=1) == [("b 100", 1.0)]
        assert not _from_file(store)
    path = tmp_path / "s.db-vectors" / "collection-1.bin"
    path.write_bytes(path.read_bytes()[:-100])  # truncated
    with SearchStore(tmp_path / "s.db") as store:
        assert _top(store, vectors[300], k=1) == [("b 100", 1.0)]
        assert not _from_file(store)
    with SearchStore(tmp_path / "s.db") as store:
        assert _from_file(store)


def test_deleting_a_collection_deletes_its_file(tmp_path):
    with SearchStore(tmp_path / "s.db") as store:
        _put(store, "a", _unit(5, 5))
        _top(store, _unit(1, 6)[0])
        assert _saved_files(tmp_path) == ["collection-1.bin"]
        store.delete_collection("c")
        assert _saved_files(tmp_path) == []
