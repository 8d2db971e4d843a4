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
