"""Split documents into chunks the embedding model can take whole, with overlap.

Chunk boundaries come from the model's own tokenizer: a fast Hugging Face tokenizer's character
offsets when the embedder exposes ``tokenizer``, else per-word ``count_tokens``. Every chunk is
checked with ``count_tokens`` so none is ever truncated by the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .types import Chunk, ChunkOptions, Embedder

_WORD = re.compile(r"\S+")
_DEFAULT_MAX_TOKENS = 256


@dataclass
class TimedText:
    """One transcript segment: what the indexer needs of a Whisper ``Segment``."""

    id: int
    start: float
    end: float
    text: str


class _Budget:
    """Token limits of one embedder, and counting with its special tokens left out."""

    def __init__(self, embedder: Embedder, options: ChunkOptions):
        self.embedder = embedder
        self.specials = embedder.count_tokens("")
        limit = int(embedder.max_seq_length)
        self.max_tokens = min(options.max_tokens or min(_DEFAULT_MAX_TOKENS, limit), limit) - self.specials
        if self.max_tokens < 8:
            raise ValueError(f"chunks of {self.max_tokens} tokens are too small to be useful")
        self.overlap = max(0, min(options.overlap_tokens, self.max_tokens // 2))
        self.limit = limit
        self._count_word = lru_cache(maxsize=65536)(self._count)

    def _count(self, text: str) -> int:
        return self.embedder.count_tokens(text) - self.specials

    def fits(self, text: str) -> bool:
        return self.embedder.count_tokens(text) <= self.limit

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character span of every token of ``text`` (special tokens excluded)."""
        tokenizer = getattr(self.embedder, "tokenizer", None)
        if tokenizer is not None and getattr(tokenizer, "is_fast", False):
            enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False)
            return [tuple(span) for span in enc["offset_mapping"]]
        spans: list[tuple[int, int]] = []
        for m in _WORD.finditer(text):  # a word of n tokens becomes n tokens spanning the word
            spans.extend([m.span()] * max(1, self._count_word(m.group())))
        return spans


def chunk_text(text: str, embedder: Embedder, options: ChunkOptions | None = None) -> list[Chunk]:
    """Overlapping windows of at most ``max_tokens`` tokens; offsets index into ``text``."""
    budget = _Budget(embedder, options or ChunkOptions())
    return _windows(text, 0, budget)


def _windows(text: str, offset: int, budget: _Budget) -> list[Chunk]:
    spans = budget.token_spans(text)
    chunks: list[Chunk] = []
    i = 0
    while i < len(spans):
        j = min(i + budget.max_tokens, len(spans))
        while True:
            start, end = spans[i][0], spans[j - 1][1]
            if j - i <= 1 or budget.fits(text[start:end]):
                break
            j -= max(1, (j - i) // 16)  # re-tokenising the piece came out longer: shrink it
        if text[start:end].strip():
            chunks.append(Chunk(text[start:end], offset + start, offset + end))
        if j >= len(spans):
            break
        i = max(i + 1, j - budget.overlap)
    return chunks


def chunk_segments(segments: Sequence[TimedText], embedder: Embedder,
                   options: ChunkOptions | None = None) -> tuple[str, list[Chunk]]:
    """Group consecutive transcript segments into chunks that keep their times and segment ids.

    Returns the transcript's full text (segments joined by single spaces, the text the chunks'
    character offsets index into) and the chunks; each chunk knows where in its text each of its
    segments begins, and when, so a match inside it opens at its own segment. Consecutive chunks
    share up to ``overlap_tokens`` worth of whole segments; a segment longer than a chunk is split.
    """
    budget = _Budget(embedder, options or ChunkOptions())
    parts, starts, pos = [], [], 0
    for seg in segments:
        piece = seg.text.strip()
        starts.append(pos)
        parts.append(piece)
        pos += len(piece) + 1
    full = " ".join(parts)
    sizes = [budget._count(p) if p else 0 for p in parts]
    chunks: list[Chunk] = []
    i = 0
    while i < len(segments):
        if sizes[i] > budget.max_tokens:  # one long segment: split it by tokens, keep its time
            for piece in _windows(parts[i], starts[i], budget):
                piece.start_time, piece.end_time, piece.segment_ids = segments[i].start, segments[i].end, [segments[i].id]
                piece.segment_starts = [(0, segments[i].start)]
                chunks.append(piece)
            i += 1
            continue
        j, total = i, 0
        while j < len(segments) and sizes[j] <= budget.max_tokens and total + sizes[j] <= budget.max_tokens:
            total += sizes[j]
            j += 1
        start, end = starts[i], starts[j - 1] + len(parts[j - 1])
        if full[start:end].strip():
            chunks.append(Chunk(full[start:end], start, end, segments[i].start, segments[j - 1].end,
                                [s.id for s in segments[i:j]],
                                [(starts[n] - start, segments[n].start) for n in range(i, j)]))
        if j >= len(segments):
            break
        back, carried = j, 0  # step back over whole segments that fit in the overlap
        while back - 1 > i and carried + sizes[back - 1] <= budget.overlap:
            back -= 1
            carried += sizes[back]
        i = back
    return full, chunks
