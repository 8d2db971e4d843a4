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

    @property
    def chunks_per_second(self) -> float:
        return self.chunks_embedded / self.seconds if self.seconds else 0.0
