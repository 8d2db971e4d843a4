"""LRU cache of sentence embeddings keyed by (model, text), bounded by the bytes it holds."""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict

import numpy as np

from ..core.types import CacheStats


class EmbeddingCache:
    """Thread-safe LRU map ``(model_id, text) -> float32 vector``; ``capacity_bytes=0`` disables it.

    An entry's size is its vector plus its text, so many long texts cannot blow past the bound.
    """

    def __init__(self, capacity_bytes: int = 64 * 1024 * 1024):
        self.capacity_bytes = max(0, int(capacity_bytes))
        self._items: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._bytes = 0
        self._hits = self._misses = self._evictions = 0

    @property
    def enabled(self) -> bool:
        return self.capacity_bytes > 0

    @staticmethod
    def _entry_bytes(key: tuple[str, str], vector: np.ndarray) -> int:
        return vector.nbytes + sys.getsizeof(key[1])

    def get(self, model_id: str, text: str) -> np.ndarray | None:
        if not self.enabled:
            return None
        key = (model_id, text)
        with self._lock:
            vector = self._items.get(key)
            if vector is None:
                self._misses += 1
                return None
            self._items.move_to_end(key)
            self._hits += 1
            return vector

    def put(self, model_id: str, text: str, vector: np.ndarray) -> None:
        if not self.enabled:
            return
        key = (model_id, text)
        vector = np.array(vector, dtype=np.float32, copy=True)
        vector.setflags(write=False)  # callers get this very array back on a hit
        size = self._entry_bytes(key, vector)
        if size > self.capacity_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= self._entry_bytes(key, old)
            self._items[key] = vector
            self._bytes += size
            while self._bytes > self.capacity_bytes:
                old_key, old_vec = self._items.popitem(last=False)
                self._bytes -= self._entry_bytes(old_key, old_vec)
                self._evictions += 1

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(hits=self._hits, misses=self._misses, evictions=self._evictions,
                              entries=len(self._items), bytes=self._bytes,
                              capacity_bytes=self.capacity_bytes)
