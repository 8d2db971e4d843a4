"""Decoder KV caches: static per-layer tensors (``KvStore``), the contract's ``WhisperKvHandle``
and the registry that owns live handles.

A store holds B rows; each row has its own length, so sequences of different lengths share one
forward pass (rows past their length are masked).  Self-attention K/V are preallocated to the
model's 448 positions, so appending, rolling back (``truncate``) and reordering are cheap.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..core.errors import InvalidParameterError, NotFoundError, RequestValidationError
from ..core.types import CacheStats


class KvStore:
    def __init__(self, self_k, self_v, cross_k, cross_v, lengths: list[int], encoder_out: torch.Tensor):
        self.self_k, self.self_v = self_k, self_v      # per layer [B, H, capacity, head_dim]
        self.cross_k, self.cross_v = cross_k, cross_v  # per layer [B, H, T_enc, head_dim]
        self.lengths = lengths                         # tokens held per row
        self.encoder_out = encoder_out                 # [B, T_enc, d]

    @property
    def batch(self) -> int:
        return len(self.lengths)

    @property
    def capacity(self) -> int:
        return self.self_k[0].shape[2]

    @property
    def num_layers(self) -> int:
        return len(self.self_k)

    @property
    def num_heads(self) -> int:
        return self.self_k[0].shape[1]

    @property
    def head_dim(self) -> int:
        return self.self_k[0].shape[3]

    def nbytes(self) -> int:
        return self.memory(set())[0]

    def memory(self, seen: set[int]) -> tuple[int, int]:
        """(allocated, filled) bytes of K/V, each storage once (expanded views share one; ``seen``
        carries the storages already counted across stores). Self-attention K/V are preallocated to
        ``capacity`` positions; only the rows' lengths are filled. Cross-attention K/V are all used."""
        cap = self.capacity
        filled = sum(min(n, cap) for n in self.lengths) / (self.batch * cap) if self.batch and cap else 0.0
        allocated = used = 0
        for tensors, share in (([*self.self_k, *self.self_v], filled), ([*self.cross_k, *self.cross_v], 1.0)):
            for t in tensors:
                storage = t.untyped_storage()
                if storage.data_ptr() in seen:
                    continue
                seen.add(storage.data_ptr())
                allocated += storage.nbytes()
                used += int(storage.nbytes() * share)
        return allocated, used

    def reorder(self, index: torch.Tensor) -> None:
        """Keep/duplicate rows by ``index`` (beam search); lengths follow their rows."""
        idx = index.to(self.self_k[0].device)
        for name in ("self_k", "self_v", "cross_k", "cross_v"):
            setattr(self, name, [t.index_select(0, idx) for t in getattr(self, name)])
        self.encoder_out = self.encoder_out.index_select(0, idx)
        self.lengths = [self.lengths[i] for i in index.tolist()]

    def rows(self, rows: list[int]) -> KvStore:
        """A copy holding just ``rows`` (in that order)."""
        store = KvStore(self.self_k, self.self_v, self.cross_k, self.cross_v, list(self.lengths), self.encoder_out)
        store.reorder(torch.tensor(rows, dtype=torch.long))
        return store

    @staticmethod
    def gather(parts: list[tuple[KvStore, list[int]]]) -> KvStore:
        """One store holding the given rows of several stores, in order (for one batched forward)."""
        picked = [store.rows(rows) if rows != list(range(store.batch)) else store for store, rows in parts]
        cat = lambda name: [torch.cat(ts, dim=0) for ts in zip(*(getattr(p, name) for p in picked))]
        return KvStore(cat("self_k"), cat("self_v"), cat("cross_k"), cat("cross_v"),
                       [n for p in picked for n in p.lengths],
                       torch.cat([p.encoder_out for p in picked], dim=0))


_ids = itertools.count(1)


@dataclass(eq=False)
class WhisperKvHandle:
    """The contract's KvCacheHandle: some rows of a ``KvStore`` plus the encoder output they attend to."""

    store: KvStore
    rows: list[int]
    feature_key: str | None = None
    _id: str = ""
    _valid: bool = True

    def __post_init__(self):
        if not self._id:
            self._id = f"whisper-kv-{next(_ids)}"

    @property
    def cache_id(self) -> str:
        return self._id

    @property
    def num_tokens(self) -> int:
        return max(self.store.lengths[r] for r in self.rows)

    @property
    def num_layers(self) -> int:
        return self.store.num_layers

    @property
    def num_heads(self) -> int:
        return self.store.num_heads

    @property
    def head_dim(self) -> int:
        return self.store.head_dim

    @property
    def batch(self) -> int:
        return len(self.rows)

    @property
    def encoder_output(self) -> torch.Tensor:
        return self.store.encoder_out[self.rows]

    def is_valid(self) -> bool:
        return self._valid

    def stats(self) -> dict[str, Any]:
        return {"cache_id": self._id, "rows": len(self.rows), "num_tokens": self.num_tokens,
                "capacity": self.store.capacity, "bytes": self.store.nbytes()}


class HandleRegistry:
    """Live handles by id, with the metrics ``cache_metrics_snapshot`` reports."""

    def __init__(self):
        self._lock = threading.Lock()
        self._handles: dict[str, WhisperKvHandle] = {}

    def add(self, handle: WhisperKvHandle) -> WhisperKvHandle:
        with self._lock:
            self._handles[handle.cache_id] = handle
        return handle

    def check(self, handle) -> WhisperKvHandle:
        if not isinstance(handle, WhisperKvHandle):
            raise InvalidParameterError(f"{type(handle).__name__} is not a Whisper KV handle",
                                        "pass a handle returned by this executor's prefill")
        if not handle.is_valid() or handle.cache_id not in self._handles:
            raise NotFoundError(f"KV cache {handle.cache_id} was released",
                                "prefill again to get a fresh handle")
        return handle

    def release(self, cache_id: str) -> bool:
        with self._lock:
            handle = self._handles.pop(cache_id, None)
        if handle is not None:
            handle._valid = False
        return handle is not None

    def clear(self) -> None:
        with self._lock:
            for handle in self._handles.values():
                handle._valid = False
            self._handles.clear()

    def used_tokens(self) -> int:
        with self._lock:
            return sum(h.num_tokens for h in self._handles.values())

    def __len__(self) -> int:
        return len(self._handles)

    def metrics(self) -> CacheStats:
        with self._lock:
            stores = {id(h.store): h.store for h in self._handles.values()}
            return CacheStats(entries=len(self._handles), bytes=sum(s.nbytes() for s in stores.values()))


class LiveStores:
    """Every ``KvStore`` of one model that is still alive (held weakly), so the model's KV memory can be
    reported whoever made the store (transcription, dictation, a contract caller); also where the batch
    limit is enforced, since every store is made through ``add``."""

    def __init__(self, max_batch: int):
        self.max_batch = max_batch
        self.on_grow: Callable[[], object] | None = None  # called after a store is added
        self._lock = threading.Lock()
        self._stores: weakref.WeakSet[KvStore] = weakref.WeakSet()

    def check_batch(self, rows: int) -> None:
        if rows > self.max_batch:
            raise RequestValidationError(
                f"A batch of {rows} sequences is more than this executor runs at once ({self.max_batch})",
                f"split the work into batches of at most {self.max_batch} (capabilities().max_batch_size)")

    def add(self, store: KvStore) -> KvStore:
        self.check_batch(store.batch)
        with self._lock:
            self._stores.add(store)
        if self.on_grow is not None:
            self.on_grow()
        return store

    def memory(self) -> tuple[int, int]:
        """(allocated, filled) bytes of K/V over every live store."""
        with self._lock:
            stores = list(self._stores)
        seen: set[int] = set()
        allocated = used = 0
        for store in stores:
            a, u = store.memory(seen)
            allocated, used = allocated + a, used + u
        return allocated, used
