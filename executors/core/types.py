"""Dataclasses of the executor contract, mirroring Ferrum's Rust interface types."""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # torch is heavy; the contract itself never needs it at import time
    import torch


class ModelType(str, enum.Enum):
    LLAMA = "Llama"
    MISTRAL = "Mistral"
    QWEN = "Qwen"
    PHI = "Phi"
    GEMMA = "Gemma"
    CODE = "Code"
    EMBEDDING = "Embedding"
    SPEECH_TO_TEXT = "SpeechToText"
    CUSTOM = "Custom"


class ExecutorState(str, enum.Enum):
    INITIALIZING = "Initializing"
    READY = "Ready"
    BUSY = "Busy"
    ERROR = "Error"
    SHUTDOWN = "Shutdown"


@dataclass
class ModelInfo:
    model_id: str
    model_type: ModelType
    num_parameters: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    vocab_size: int
    max_sequence_length: int
    dtype: str
    device: str
    version: str | None = None
    license: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class MemoryRequirements:
    parameter_memory: int
    activation_memory_per_token: int
    kv_cache_memory_per_token: int
    overhead_memory: int


@dataclass
class ExecutorCapabilities:
    max_batch_size: int
    max_sequence_length: int
    attention_mechanisms: list[str]
    supports_dynamic_batching: bool
    supports_continuous_batching: bool
    supports_speculative_decoding: bool
    supports_tensor_parallelism: bool
    supports_pipeline_parallelism: bool
    supported_dtypes: list[str]
    supported_devices: list[str]
    memory_requirements: MemoryRequirements


@dataclass
class MemoryUsage:
    """One model's memory on its device (not the process's): its weights, its tokenizer, its caches and
    the KV storage of its live sequences, counted from its own tensors on every device."""

    allocated_bytes: int  # weights + caches + KV storage as allocated (preallocated positions included)
    used_bytes: int  # of which holds data now (KV: only the positions filled with tokens)
    peak_bytes: int  # the most allocated at once since loading (sampled on status() and on every KV allocation)
    utilization_percent: float  # allocated_bytes as a share of the device's memory
    parameter_bytes: int = 0  # weights and buffers, and a kernel's packed copies of int8 weights
    cache_bytes: int = 0  # executor caches: encoder outputs (Whisper), embeddings (BERT)
    kv_bytes: int = 0  # KV storage of live sequences (allocated)
    tokenizer_bytes: int = 0  # the tokenizer's tables, as the C allocator counted them at load (0 if it cannot)


@dataclass
class ExecutorStatus:
    state: ExecutorState
    is_ready: bool
    current_batch_size: int
    prefill_operations: int
    decode_operations: int
    avg_prefill_time_ms: float
    avg_decode_time_ms: float
    memory_usage: MemoryUsage
    last_operation: float | None  # unix time of the last finished operation


@runtime_checkable
class KvCacheHandle(Protocol):
    """A per-sequence cache owned by an executor; ``release_cache(cache_id)`` frees it."""

    @property
    def cache_id(self) -> str: ...
    @property
    def num_tokens(self) -> int: ...
    @property
    def num_layers(self) -> int: ...
    @property
    def num_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    def is_valid(self) -> bool: ...
    def stats(self) -> dict[str, Any]: ...


@dataclass
class PrefillInput:
    input_ids: "torch.Tensor"
    attention_mask: "torch.Tensor | None" = None
    position_ids: "torch.Tensor | None" = None
    kv_cache: KvCacheHandle | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class PrefillOutput:
    """Ferrum's PrefillOutput plus ``embeddings``: an encoder with no vocabulary head (BERT) returns its
    pooled sentence embeddings there and leaves ``logits`` None."""

    logits: "torch.Tensor | None" = None  # [B, n, vocab] for a decoder
    kv_cache: KvCacheHandle | None = None
    hidden_states: "list[torch.Tensor] | None" = None
    attention_weights: "list[torch.Tensor] | None" = None
    embeddings: "torch.Tensor | None" = None  # [B, dim] pooled embeddings of an encoder


@dataclass
class DecodeInput:
    input_ids: "torch.Tensor"
    kv_cache: KvCacheHandle
    position_ids: "torch.Tensor | None" = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class DecodeOutput:
    logits: "torch.Tensor"
    kv_cache: KvCacheHandle
    hidden_state: "torch.Tensor | None" = None
    attention_weights: "list[torch.Tensor] | None" = None


@dataclass
class UnifiedBatchItem:
    seq_id: str
    q_tokens: list[int]
    kv_cache: KvCacheHandle | None
    pos_offset: int
    is_final_chunk: bool
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class UnifiedBatch:
    items: list[UnifiedBatchItem]


@dataclass
class UnifiedOutput:
    logits: dict[str, "torch.Tensor"]  # seq_id -> logits of the last position
    kv_caches: dict[str, KvCacheHandle]


@dataclass
class VerifyInput:
    """Score a draft: ``tokens`` (last accepted token plus N drafts) against ``kv_cache``."""

    tokens: "torch.Tensor"
    kv_cache: KvCacheHandle
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class VerifyOutput:
    logits: "torch.Tensor"  # [N+1, vocab]
    kv_cache: KvCacheHandle


@dataclass
class KvCapacity:
    max_tokens_per_sequence: int
    active_sequences: int
    used_tokens: int


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0
    entries: int = 0
    bytes: int = 0
    capacity_bytes: int | None = None

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


@dataclass
class CacheMetricsSnapshot:
    caches: dict[str, CacheStats]


@dataclass
class Progress:
    done: float
    total: float
    unit: str = ""
    message: str = ""

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 0.0


class CancelToken:
    """Thread-safe cancellation flag checked by long operations between steps."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self, what: str = "operation") -> None:
        if self._event.is_set():
            from .errors import Cancelled

            raise Cancelled(f"The {what} was cancelled", "start it again when you are ready")
