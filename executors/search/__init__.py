"""Semantic search: a persistent, incremental SQLite index with exact vector and FTS5 hybrid search.

    store = SearchStore()                                  # data_dir()/search.db
    report = index_paths(store, embedder, ["~/notes"])     # incremental; IndexReport
    hits = store.search(embedder.embed([q])[0], q, "default", k=10, hybrid=True)
"""

from collections.abc import Sequence

from .chunking import TimedText, chunk_segments, chunk_text
from .extract import SUPPORTED_SUFFIXES, extract
from .grouping import DocumentResult, Relevance, group_hits, relevance
from .indexer import index_paths, index_text, index_transcript, remove_paths
from .query import reciprocal_rank_fusion
from .store import SearchStore
from .transcripts import (
    TRANSCRIPTS_COLLECTION,
    prune_transcripts,
    remove_transcripts,
    transcript_record_id,
    transcript_source,
)
from .types import (
    Chunk,
    ChunkOptions,
    Collection,
    DocKind,
    Document,
    Embedder,
    IndexReport,
    SearchHit,
)


def __getattr__(name: str):
    if name == "VectorMatrix":  # imports torch, which a process that only searches does without
        from .vectors import VectorMatrix

        return VectorMatrix
    raise AttributeError(name)


def search_text(store: SearchStore, embedder: Embedder, query: str, collection: str | Sequence[str] = "default",
                k: int = 10, hybrid: bool = False) -> list[SearchHit]:
    """Embed ``query`` with ``embedder`` and search one collection, or several ranked as one (their
    model must be the embedder's)."""
    from .query import search

    names = [collection] if isinstance(collection, str) else list(collection)
    colls = [store.collection(name, model_id=embedder.model_id) for name in names]
    if not colls:
        return []
    return search(store, colls, embedder.embed([query])[0], query, k=k, hybrid=hybrid)


def search_index(store: SearchStore, embedder: Embedder, query: str, collections: Sequence[str] | None = None,
                 k: int = 10, hybrid: bool = True, missing_ok: bool = False) -> list[SearchHit]:
    """``search_text`` over ``collections`` ranked as one, or (None) over every collection of the
    embedder's model. A named collection that does not exist raises ``NotFoundError``, or is skipped
    with ``missing_ok`` (a collection nothing was indexed into yet)."""
    existing = {c.name: c for c in store.collections()}
    if collections is None:
        names = [name for name, c in existing.items() if c.model_id == embedder.model_id]
    else:
        names = [name for name in collections if name in existing or not missing_ok]
    return search_text(store, embedder, query, names, k=k, hybrid=hybrid) if names else []


__all__ = [
    "SUPPORTED_SUFFIXES",
    "TRANSCRIPTS_COLLECTION",
    "Chunk",
    "ChunkOptions",
    "Collection",
    "DocKind",
    "Document",
    "DocumentResult",
    "Embedder",
    "IndexReport",
    "Relevance",
    "SearchHit",
    "SearchStore",
    "TimedText",
    "VectorMatrix",
    "chunk_segments",
    "chunk_text",
    "extract",
    "group_hits",
    "index_paths",
    "index_text",
    "index_transcript",
    "prune_transcripts",
    "reciprocal_rank_fusion",
    "relevance",
    "remove_paths",
    "remove_transcripts",
    "search_index",
    "search_text",
    "transcript_record_id",
    "transcript_source",
]
