"""Search over one collection or several: exact vector top-k, FTS5 BM25 keywords, and their candidates
ranked together (``ranking``)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import InvalidParameterError
from .matching import STOPWORDS, best_span, keyword_terms
from .ranking import WordEvidence, relevance_score, word_evidence
from .types import Collection, DocKind, SearchHit

if TYPE_CHECKING:
    from .store import SearchStore

RRF_K = 60  # the constant of Cormack et al. (2009); ranks beyond a few dozen barely count
_MARK_OPEN, _MARK_CLOSE = "\x02", "\x03"
_HIGHLIGHT = re.compile(f"{_MARK_OPEN}(.*?){_MARK_CLOSE}", re.DOTALL)


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
    """Top ``k`` chunks of one collection or of several together, ranked as one list.

    Hybrid: the vector and the keyword candidates of all collections are pooled and ordered by
    ``ranking.relevance_score`` (meaning plus the query's words), a score that means the same
    whichever collections were searched (they must hold the same model's vectors). Without
    ``hybrid`` the order is the cosine alone; without ``query_vec`` it is the BM25 rank."""
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
    candidates = list(dict.fromkeys([*vector_scores, *keyword_ranks]))
    if query_vec is not None:  # give keyword-only candidates their cosine too
        _add_cosines(store, query_vec, [cid for cid in candidates if cid not in vector_scores], vector_scores)
    rows = _chunk_rows(store, candidates)
    if query_vec is not None and hybrid:
        evidence = word_evidence(store, {cid: rows[cid][0] for cid in candidates}, query_text)
        scored = [(cid, relevance_score(vector_scores[cid], evidence[cid])) for cid in candidates]
        ranked = sorted(scored, key=lambda hit: (-hit[1], hit[0]))[:k]
    elif query_vec is not None:  # meaning alone
        ranked = list(vector_scores.items())[:k]
        evidence = {cid: WordEvidence() for cid, _ in ranked}
    else:
        ranked = [(cid, 1.0 / (RRF_K + rank)) for cid, rank in keyword_ranks.items()][:k]
        evidence = word_evidence(store, {cid: rows[cid][0] for cid, _ in ranked}, query_text)
    terms = matched_terms(store, [cid for cid, _ in ranked], query_text)
    hits = []
    for cid, score in ranked:
        text, cstart, cend, tstart, tend, seg_ids, seg_starts, doc_id, kind, source, title = rows[cid]
        found = terms.get(cid, [])
        span = best_span(text, found, query_text) if found else None
        hits.append(SearchHit(
            score=float(score), text=text, source=source, doc_kind=DocKind(kind), title=title, chunk_id=cid,
            document_id=doc_id, char_start=cstart, char_end=cend, start_time=tstart, end_time=tend,
            segment_ids=json.loads(seg_ids) if seg_ids else None, matched_terms=found,
            vector_score=vector_scores.get(cid), keyword_rank=keyword_ranks.get(cid),
            words_matched=evidence[cid].matched, words_total=evidence[cid].total,
            exact_phrase=evidence[cid].phrase, match_start=span[0] if span else None,
            match_end=span[1] if span else None,
            segment_starts=[tuple(s) for s in json.loads(seg_starts)] if seg_starts else None))
    return hits


def _add_cosines(store: SearchStore, query_vec: np.ndarray, ids: list[int], scores: dict[int, float]) -> None:
    if ids:
        query = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        exact = store.vectors(np.array(ids)) @ (query / (np.linalg.norm(query) or 1.0))
        scores.update(zip(ids, exact.tolist()))


def _chunk_rows(store: SearchStore, ids: list[int]) -> dict[int, tuple]:
    if not ids:
        return {}
    with store.lock:
        rows = store.connection.execute(
            "SELECT c.id, c.text, c.char_start, c.char_end, c.start_time, c.end_time, c.segment_ids,"
            " c.segment_starts, d.id, d.kind, d.source, d.title FROM chunks c JOIN documents d ON d.id = c.document_id"
            f" WHERE c.id IN ({','.join('?' * len(ids))})", ids).fetchall()
    return {r[0]: r[1:] for r in rows}
