"""BERT-family sentence embeddings: ``BertModelExecutor`` (heavy imports load on first use)."""

from __future__ import annotations

__all__ = ["BertModelExecutor", "EmbedMetrics", "EmbeddingCache", "PoolingConfig", "read_pooling_config"]


def __getattr__(name: str):
    if name in ("BertModelExecutor", "EmbedMetrics"):
        from . import executor

        return getattr(executor, name)
    if name == "EmbeddingCache":
        from .embedding_cache import EmbeddingCache

        return EmbeddingCache
    if name in ("PoolingConfig", "read_pooling_config"):
        from . import pooling

        return getattr(pooling, name)
    raise AttributeError(name)
