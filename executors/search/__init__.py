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
from .vectors import VectorMatrix


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
    "search_text",
    "transcript_record_id",
    "transcript_source",
]
