"""Dataclasses and the embedder protocol shared by the search modules."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """What the index needs from an embedding model (``BertModelExecutor`` satisfies it).

    ``embed`` returns one L2-normalised float32 row per text. ``count_tokens`` counts the
    tokens the model would see, special tokens included. An embedder may also expose a fast
    Hugging Face ``tokenizer``; chunking then uses its character offsets.
    """

    model_id: str
    max_seq_length: int

    def embed(self, texts: list[str]) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


class DocKind(str, enum.Enum):
    FILE = "file"
    TEXT = "text"
    TRANSCRIPT = "transcript"


@dataclass
class Chunk:
    """A piece of a document small enough for the model to embed without truncation."""

    text: str
    char_start: int
    char_end: int
    start_time: float | None = None
    end_time: float | None = None
    segment_ids: list[int] | None = None
    # per segment of ``segment_ids``: (where it begins in ``text``, its start time in seconds)
    segment_starts: list[tuple[int, float]] | None = None


@dataclass
class ChunkOptions:
    max_tokens: int | None = None  # None: the model's max_seq_length minus special tokens, at most 256
    overlap_tokens: int = 32


@dataclass
class Collection:
    id: int
    name: str
    model_id: str
    dim: int
    documents: int = 0  # filled in by SearchStore.collections()
    chunks: int = 0


@dataclass
class Document:
    id: int
    collection_id: int
    kind: DocKind
    source: str
    title: str
    content_hash: str
    mtime: float | None
    size: int | None
    chunks: int = 0


@dataclass
class SearchHit:
    score: float
    text: str
    source: str
    doc_kind: DocKind
    title: str = ""
    chunk_id: int = 0
    document_id: int = 0
    char_start: int = 0
    char_end: int = 0
    start_time: float | None = None
    end_time: float | None = None
    segment_ids: list[int] | None = None
    matched_terms: list[str] = field(default_factory=list)
    vector_score: float | None = None  # cosine similarity, when the vector search found it
    keyword_rank: int | None = None  # 1-based BM25 rank, when the keyword search found it
    words_matched: int = 0  # distinct query words (stopwords left out) the passage holds
    words_total: int = 0    # of this many; 0 when the score did not weigh the words (not hybrid)
    exact_phrase: bool = False  # the passage holds the whole query as one phrase
    match_start: int | None = None  # where in ``text`` the best match of the query's words is
    match_end: int | None = None
    segment_starts: list[tuple[int, float]] | None = None  # as ``Chunk.segment_starts``

    @property
    def match_span(self) -> tuple[int, int] | None:
        return (self.match_start, self.match_end) if self.match_start is not None else None

    def _focus_segment(self) -> tuple[int, float] | None:
        """(segment id, start time) of the segment holding the best match, else of the first one."""
        if not self.segment_ids:
            return None
        if not self.segment_starts or len(self.segment_starts) != len(self.segment_ids):
            return self.segment_ids[0], self.start_time
        at = self.match_start or 0
        index = max(i for i, (offset, _time) in enumerate(self.segment_starts) if offset <= at or i == 0)
        return self.segment_ids[index], self.segment_starts[index][1]

    @property
    def focus_segment_id(self) -> int | None:
        """The transcript segment to open this hit at: the one holding the match."""
        focus = self._focus_segment()
        return focus[0] if focus else None

    @property
    def focus_time(self) -> float | None:
        """When the match is said, in seconds (the passage's start when it holds no match)."""
        focus = self._focus_segment()
        return focus[1] if focus else self.start_time

    def to_dict(self) -> dict:
        from dataclasses import asdict

        data = asdict(self)
        data["doc_kind"] = self.doc_kind.value
        return data


@dataclass
class IndexReport:
    files_added: int = 0
    files_updated: int = 0
    files_skipped: int = 0
    files_removed: int = 0
    chunks_embedded: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message) of files left out
    seconds: float = 0.0
    unsupported: dict[str, int] = field(default_factory=dict)  # files of a type not indexed, per suffix

    @property
    def chunks_per_second(self) -> float:
        return self.chunks_embedded / self.seconds if self.seconds else 0.0

    def counts_text(self) -> str:
        """"3 added, 0 updated, 2 unchanged, 1 removed; 12 chunks embedded"."""
        return (f"{self.files_added} added, {self.files_updated} updated, {self.files_skipped} unchanged, "
                f"{self.files_removed} removed; {self.chunks_embedded} chunks embedded")

    def unsupported_text(self) -> str:
        """Which files of the folders were left out for their type, in words ("" when none were)."""
        from .extract import SUPPORTED_SUFFIXES

        if not self.unsupported:
            return ""
        n = sum(self.unsupported.values())
        kinds = ", ".join(f"{suffix} ×{count}" if count > 1 else suffix
                          for suffix, count in sorted(self.unsupported.items(), key=lambda kv: -kv[1]))
        return (f"{n} file{'s' if n != 1 else ''} skipped because their type cannot be indexed ({kinds}); "
                f"supported: {', '.join(sorted(SUPPORTED_SUFFIXES))}")

    def summary(self) -> str:
        """The outcome in a sentence or three, for a status line: what changed, and what was left
        out and why."""
        if self.nothing_found() and not self.errors:
            text = "Nothing to index: no file there can be indexed."
        else:
            parts = [f"{n} {label}" for n, label in ((self.files_added, "added"), (self.files_updated, "updated"),
                                                     (self.files_skipped, "unchanged"),
                                                     (self.files_removed, "removed")) if n]
            text = f"Indexed: {', '.join(parts) or 'nothing changed'}, {self.chunks_embedded} chunks embedded."
        if self.unsupported:
            text += f" {self.unsupported_text()}."
        if self.errors:
            n = len(self.errors)
            message = self.errors[0][1]
            more = f" (and {n - 1} more)" if n > 1 else ""
            text += f" {n} file{'s' if n != 1 else ''} could not be read: {message}{more}."
        return text

    def nothing_found(self) -> bool:
        """True when the paths held no file that could be indexed at all."""
        return not (self.files_added or self.files_updated or self.files_skipped or self.files_removed)
