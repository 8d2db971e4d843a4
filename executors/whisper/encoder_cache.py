"""LRU cache of encoder outputs keyed by a hash of the log-mel features.

Re-encoding the same 30 s window (temperature fallback, language detection then transcription,
a contract caller prefilling twice) costs a full encoder pass; this makes it a dictionary lookup.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import torch

from ..core.types import CacheStats


def feature_key(features: torch.Tensor) -> str:
    """A content hash of one window's features ([n_mels, frames])."""
    data = features.detach().to("cpu", torch.float32).contiguous().numpy().tobytes()
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class EncoderCache:
    def __init__(self, max_entries: int = 8):
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._items: OrderedDict[str, torch.Tensor] = OrderedDict()
        self.hits = self.misses = self.evictions = 0

    def get(self, key: str) -> torch.Tensor | None:
        with self._lock:
            value = self._items.get(key)
            if value is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: str, value: torch.Tensor) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)
                self.evictions += 1

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def stats(self) -> CacheStats:
        with self._lock:
            size = sum(t.numel() * t.element_size() for t in self._items.values())
            return CacheStats(hits=self.hits, misses=self.misses, evictions=self.evictions,
                              entries=len(self._items), bytes=size)
