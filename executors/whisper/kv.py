"""Decoder KV caches: static per-layer tensors (``KvStore``), the contract's ``WhisperKvHandle``
and the registry that owns live handles.

A store holds B rows; each row has its own length, so sequences of different lengths share one
forward pass (rows past their length are masked).  Self-attention K/V are preallocated to the
model's 448 positions, so appending, rolling back (``truncate``) and reordering are cheap.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from typing import Any

import torch

from ..core.errors import InvalidParameterError, NotFoundError
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
        tensors = [*self.self_k, *self.self_v, *self.cross_k, *self.cross_v]
        # expanded views share storage; count each storage once
        seen, total = set(), 0
        for t in tensors:
            key = t.untyped_storage().data_ptr()
            if key not in seen:
                seen.add(key)
                total += t.untyped_storage().nbytes()
        return total

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
