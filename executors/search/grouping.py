"""Search hits as a reader wants them: one result per document with its best passages, where the
document lives, and how relevant it is in words rather than a raw score.

A hit's label comes from the very score that orders the list (``hit.score``), so the labels only
ever step down the list: in hybrid mode ``ranking.relevance_score`` (meaning plus the query's
words), without hybrid the cosine alone. A keyword-only hit (no query embedding) has no such score
and says that it matches the words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .transcripts import transcript_record_id
from .types import DocKind, SearchHit

# Lower bounds of the ordering score per label, for sentence-embedding models of the MiniLM/MPNet
# family, read off the bundled MiniLM on the text-dev set (bench/search_relevance.py: its subject
# lines as queries over its 200 posts, a result relevant when in the query's newsgroup). With the
# query's words in the score: from 0.75 every result was on topic, 0.50-0.75 98 %, 0.30-0.50 91 %,
# below 0.30 72 % (two newsgroups: 50 % is chance). Cosine alone: the top ten posts for an unrelated
# query score 0.0-0.18, posts on a query's topic 0.25-0.65.
BANDS = [(0.75, "Very relevant"), (0.50, "Relevant"), (0.30, "Somewhat relevant"), (-1.0, "Loosely related")]
COSINE_BANDS = [(0.50, "Very relevant"), (0.35, "Relevant"), (0.22, "Somewhat relevant"), (-1.0, "Loosely related")]
_FULL_BAR = {True: 1.0, False: 0.70}  # the score drawn as a full bar, with and without the words


@dataclass(frozen=True)
class Relevance:
    label: str          # "Very relevant" … "Loosely related"
    level: int          # 3 (best) … 0
    fraction: float     # 0-1, for a bar
    detail: str         # what the label is based on, for a tooltip


def _words(hit: SearchHit) -> str:
    if not hit.words_total:
        return f"; contains {', '.join(hit.matched_terms[:5])}" if hit.matched_terms else ""
    held = f"; holds {hit.words_matched} of your {hit.words_total} word{'s' if hit.words_total > 1 else ''}"
    return held + (" as one phrase" if hit.exact_phrase else "")


def relevance(hit: SearchHit) -> Relevance:
    """A plain-language relevance for one hit."""
    if hit.vector_score is not None:
        score = float(hit.score)
        with_words = hit.words_total > 0  # the same for every hit of one search
        bands = BANDS if with_words else COSINE_BANDS
        level, label = next((len(bands) - 1 - i, name) for i, (low, name) in enumerate(bands) if score >= low)
        return Relevance(label, level, max(0.0, min(1.0, score / _FULL_BAR[with_words])),
                         f"Score {score:.2f}: meaning similarity {float(hit.vector_score):.2f} "
                         f"(0 = unrelated, 1 = the same){_words(hit)}")
    rank = hit.keyword_rank or 0
    level = 2 if rank and rank <= 3 else 1
    return Relevance("Matches your words", level, 0.6 if level == 2 else 0.35,
                     f"Keyword match, rank {rank}{_words(hit)}" if rank else "Keyword match")


@dataclass
class DocumentResult:
    """One document's hits, best first."""

    hits: list[SearchHit] = field(default_factory=list)

    @property
    def best(self) -> SearchHit:
        return self.hits[0]

    @property
    def source(self) -> str:
        return self.best.source

    @property
    def doc_kind(self) -> DocKind:
        return self.best.doc_kind

    @property
    def record_id(self) -> int | None:
        """The transcript history record, for a transcript from the history."""
        return transcript_record_id(self.source)

    @property
    def path(self) -> str:
        """The file the document came from: the audio of a history transcript, else the source."""
        return (self.best.title or "") if self.record_id is not None else self.source

    @property
    def name(self) -> str:
        path = self.path
        return Path(path).name or path or (f"Transcript {self.record_id}" if self.record_id is not None else "")

    @property
    def folder(self) -> str:
        """The folder holding the document ("" when it is not a file, e.g. a dictation)."""
        path = self.path
        return str(Path(path).parent) if path and Path(path).is_absolute() else ""

    @property
    def relevance(self) -> Relevance:
        return relevance(self.best)


def _key(hit: SearchHit) -> tuple:
    """Hits of one document share a key; so do history transcripts of the same recording, so a file
    transcribed twice (in an index written before re-transcription replaced old entries) is one result."""
    rid = transcript_record_id(hit.source)
    if rid is not None and hit.title and Path(hit.title).is_absolute():
        return ("recording", hit.title)
    return ("document", hit.source)


def group_hits(hits: list[SearchHit], limit: int | None = None) -> list[DocumentResult]:
    """Group ranked ``hits`` by document, documents ordered by their best hit; at most ``limit``.

    Within a recording transcribed more than once only the newest record's hits are kept, and a
    passage whose text repeats one already kept is dropped."""
    groups: dict[tuple, DocumentResult] = {}
    for hit in sorted(hits, key=lambda h: -h.score):
        group = groups.setdefault(_key(hit), DocumentResult())
        group.hits.append(hit)
    results = []
    for group in groups.values():
        newest = max((transcript_record_id(h.source) or 0) for h in group.hits)
        kept, texts = [], set()
        for hit in group.hits:
            rid = transcript_record_id(hit.source)
            text = " ".join(hit.text.split())
            if (rid is not None and rid != newest) or text in texts:
                continue
            texts.add(text)
            kept.append(hit)
        group.hits = kept
        results.append(group)
    results.sort(key=lambda g: -g.best.score)
    return results[:limit] if limit is not None else results
