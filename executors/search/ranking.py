"""The one score that orders hybrid results: meaning plus the words the reader typed.

``score = cosine + WORDS_WEIGHT * coverage + PHRASE_WEIGHT * phrase``

* ``cosine``: the sentence embedding's similarity of query and passage.
* ``coverage``: the share of the query's words the passage holds (as the full-text index matches
  them: stemmed, case- and accent-folded), each word weighted by its BM25 inverse document
  frequency, so holding the rare words counts for more than holding a common one.
* ``phrase``: 1 when the passage holds the query's words in order as one phrase.

Why words count besides meaning: a mean-pooled embedding of a long passage is diluted by all its
other sentences, so a passage holding every word of the query among other matter can score a lower
cosine than a short post that holds one of them. Coordination-level matching (more of the query's
words ranks higher) is the classic remedy; its weight is set so that holding every word lifts a
passage by about the spread of cosines among on-topic passages of the bundled MiniLM (0.25-0.65 on
the text-dev set), and the exact phrase lifts it once more. The labels' bands of this score are in
``grouping``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .matching import keyword_terms, phrase_span

if TYPE_CHECKING:
    from .store import SearchStore

WORDS_WEIGHT = 0.4
PHRASE_WEIGHT = 0.2


@dataclass(frozen=True)
class WordEvidence:
    """What a passage holds of the query's words."""

    matched: int = 0        # distinct query words it holds
    total: int = 0          # distinct query words worth matching (stopwords left out)
    coverage: float = 0.0   # 0-1, the matched words' share of the query's IDF weight
    phrase: bool = False    # the whole query, in order


def relevance_score(cosine: float, evidence: WordEvidence) -> float:
    return cosine + WORDS_WEIGHT * evidence.coverage + PHRASE_WEIGHT * evidence.phrase


def word_evidence(store: SearchStore, texts: dict[int, str], query_text: str | None) -> dict[int, WordEvidence]:
    """For each chunk id of ``texts`` (id -> chunk text), what it holds of the query's words."""
    terms = keyword_terms(query_text)
    if not terms or not texts:
        return {cid: WordEvidence() for cid in texts}
    ids = list(texts)
    marks = ",".join("?" * len(ids))
    with store.lock:
        db = store.connection
        total_chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        holders, weights = {}, {}
        for term in terms:
            match = f'"{term}"'
            df = db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (match,)).fetchone()[0]
            weights[term] = math.log(1 + (total_chunks - df + 0.5) / (df + 0.5))  # BM25's IDF
            holders[term] = {r[0] for r in db.execute(
                f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN ({marks})", (match, *ids))}
    whole = sum(weights.values()) or 1.0
    found = {}
    for cid, text in texts.items():
        held = [t for t in terms if cid in holders[t]]
        phrase = len(terms) > 1 and phrase_span(text, query_text) is not None
        found[cid] = WordEvidence(len(held), len(terms), sum(weights[t] for t in held) / whole, phrase)
    return found
