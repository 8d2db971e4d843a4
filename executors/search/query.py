"""Search over one collection: exact vector top-k, FTS5 BM25 keywords, reciprocal rank fusion."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import InvalidParameterError
from .types import Collection, DocKind, SearchHit

if TYPE_CHECKING:
    from .store import SearchStore

RRF_K = 60  # the constant of Cormack et al. (2009); ranks beyond a few dozen barely count
_MARK_OPEN, _MARK_CLOSE = "\x02", "\x03"
_WORD = re.compile(r"\w+", re.UNICODE)
_HIGHLIGHT = re.compile(f"{_MARK_OPEN}(.*?){_MARK_CLOSE}", re.DOTALL)
# Words too common to say anything about a match (kept out of keyword queries and highlights).
STOPWORDS = frozenset(["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"])


def keyword_terms(query_text: str | None) -> list[str]:
    """Distinct lower-case words of the query that are worth matching, in order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall((query_text or "").lower()):
        if word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


def fts_query(query_text: str | None) -> str | None:
    """An FTS5 query matching any of the query's words (each quoted, so no operator syntax leaks)."""
    terms = keyword_terms(query_text)
    return " OR ".join(f'"{t}"' for t in terms) or None


def keyword_search(store: SearchStore, collections: Collection | Sequence[Collection], query_text: str | None,
                   limit: int) -> list[int]:
    """Chunk ids of the best BM25 matches over the union of ``collections``, best first (one FTS5 table
    holds every collection, so its scores compare across them)."""
    colls = _as_list(collections)
    match = fts_query(query_text)
    if match is None or limit <= 0 or not colls:
        return []
    with store.lock:
        rows = store.connection.execute(
            "SELECT f.rowid FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
            f" WHERE chunks_fts MATCH ? AND c.collection_id IN ({','.join('?' * len(colls))})"
            " ORDER BY bm25(chunks_fts) LIMIT ?",
            (match, *(c.id for c in colls), limit)).fetchall()
    return [r[0] for r in rows]


def vector_search(store: SearchStore, collections: Collection | Sequence[Collection], query_vec: np.ndarray,
                  k: int) -> list[tuple[int, float]]:
    """(chunk id, cosine) of the ``k`` nearest chunks over the union of ``collections``, best first."""
    query = np.asarray(query_vec, dtype=np.float32).reshape(-1)
    for collection in _as_list(collections):
        if query.shape[0] != collection.dim:
            raise InvalidParameterError(
                f"The query vector has {query.shape[0]} dimensions; collection '{collection.name}' holds "
                f"{collection.dim}", f"embed the query with the collection's model '{collection.model_id}'")
    norm = float(np.linalg.norm(query))
    if norm > 0:
        query = query / norm
    found: list[tuple[int, float]] = []
    with store.lock:
        for collection in _as_list(collections):
            found += store.matrix(collection).search(query, k, fetch=store.vectors)
    return sorted(found, key=lambda hit: (-hit[1], hit[0]))[:k]  # ties by chunk id, as within one


def _as_list(collections: Collection | Sequence[Collection]) -> list[Collection]:
    return [collections] if isinstance(collections, Collection) else list(collections)


def reciprocal_rank_fusion(rankings: list[list[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Fuse ranked id lists: score(id) = sum over lists of 1 / (k + rank), rank from 1."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])


def matched_terms(store: SearchStore, chunk_ids: list[int], query_text: str | None) -> dict[int, list[str]]:
    """For each chunk, the words of its text that match the query (as FTS5 found them: stemmed,
    case- and accent-folded), distinct and in text order, for highlighting."""
    match = fts_query(query_text)
    if match is None or not chunk_ids:
        return {}
    with store.lock:
        rows = store.connection.execute(
            f"SELECT rowid, highlight(chunks_fts, 0, ?, ?) FROM chunks_fts WHERE chunks_fts MATCH ?"
            f" AND rowid IN ({','.join('?' * len(chunk_ids))})",
            (_MARK_OPEN, _MARK_CLOSE, match, *chunk_ids)).fetchall()
    found = {}
    for rowid, marked in rows:
        words = dict.fromkeys(w for w in _HIGHLIGHT.findall(marked) if w.lower() not in STOPWORDS)
        found[rowid] = list(words)
    return found


def search(store: SearchStore, collections: Collection | Sequence[Collection], query_vec: np.ndarray | None,
           query_text: str | None, k: int = 10, hybrid: bool = False) -> list[SearchHit]:
    """Top ``k`` chunks of one collection or of several together. Several are ranked as one: the vector
    and keyword candidates of all of them form one list each before the ranks are fused, so a score
    means the same whichever collections were searched (collections must hold the same model's vectors)."""
    if k <= 0:
        return []
    vector_scores: dict[int, float] = {}
    keyword_ranks: dict[int, int] = {}
    if query_vec is not None:
        pool = max(k * 4, 50) if hybrid else k
        vector_scores = dict(vector_search(store, collections, query_vec, pool))
    if hybrid or query_vec is None:
        pool = max(k * 4, 50) if query_vec is not None else k
        keyword_ranks = {cid: rank for rank, cid in enumerate(keyword_search(store, collections, query_text, pool), 1)}
    if query_vec is not None and hybrid:
        ranked = reciprocal_rank_fusion([list(vector_scores), list(keyword_ranks)])[:k]
    elif query_vec is not None:
        ranked = list(vector_scores.items())[:k]
    else:
        ranked = [(cid, 1.0 / (RRF_K + rank)) for cid, rank in keyword_ranks.items()][:k]
    ids = [cid for cid, _ in ranked]
    if query_vec is not None:  # give keyword-only hits their cosine too
        missing = [cid for cid in ids if cid not in vector_scores]
        if missing:
            query = np.asarray(query_vec, dtype=np.float32).reshape(-1)
            exact = store.vectors(np.array(missing)) @ (query / (np.linalg.norm(query) or 1.0))
            vector_scores.update(zip(missing, exact.tolist()))
    rows = _chunk_rows(store, ids)
    terms = matched_terms(store, ids, query_text)
    hits = []
    for cid, score in ranked:
        text, cstart, cend, tstart, tend, seg_ids, doc_id, kind, source, title = rows[cid]
        hits.append(SearchHit(
            score=float(score), text=text, source=source, doc_kind=DocKind(kind), title=title, chunk_id=cid,
            document_id=doc_id, char_start=cstart, char_end=cend, start_time=tstart, end_time=tend,
            segment_ids=json.loads(seg_ids) if seg_ids else None, matched_terms=terms.get(cid, []),
            vector_score=vector_scores.get(cid), keyword_rank=keyword_ranks.get(cid)))
    return hits


def _chunk_rows(store: SearchStore, ids: list[int]) -> dict[int, tuple]:
    if not ids:
        return {}
    with store.lock:
        rows = store.connection.execute(
            "SELECT c.id, c.text, c.char_start, c.char_end, c.start_time, c.end_time, c.segment_ids,"
            " d.id, d.kind, d.source, d.title FROM chunks c JOIN documents d ON d.id = c.document_id"
            f" WHERE c.id IN ({','.join('?' * len(ids))})", ids).fetchall()
    return {r[0]: r[1:] for r in rows}
