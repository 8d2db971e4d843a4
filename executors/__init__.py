"""Ferrum Desktop's engine: Qt-free executors for Whisper speech-to-text and BERT embeddings.

Importing this package is cheap (no torch, no Qt); heavy modules load when first used.
"""

from .core.contract import ModelExecutor
from .core.errors import ErrorKind, FerrumError
from .core.types import (
    CacheMetricsSnapshot,
    CacheStats,
    CancelToken,
    DecodeInput,
    DecodeOutput,
    ExecutorCapabilities,
    ExecutorState,
    ExecutorStatus,
    KvCacheHandle,
    KvCapacity,
    MemoryRequirements,
    MemoryUsage,
    ModelInfo,
    ModelType,
    PrefillInput,
    PrefillOutput,
    Progress,
    UnifiedBatch,
    UnifiedBatchItem,
    VerifyInput,
    VerifyOutput,
)

__all__ = [
    "CacheMetricsSnapshot", "CacheStats", "CancelToken", "DecodeInput", "DecodeOutput", "ErrorKind",
    "ExecutorCapabilities", "ExecutorState", "ExecutorStatus", "FerrumError", "KvCacheHandle",
    "KvCapacity", "MemoryRequirements", "MemoryUsage", "ModelExecutor", "ModelInfo", "ModelType",
    "PrefillInput", "PrefillOutput", "Progress", "UnifiedBatch", "UnifiedBatchItem", "VerifyInput",
    "VerifyOutput",
]
