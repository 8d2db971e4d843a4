"""The ``ModelExecutor`` contract: Ferrum's executor trait in Python idiom.

Required methods are abstract; the rest carry the trait's defaults so a thin executor only
implements what it has. Async methods must not run model work on the calling event loop: an
executor hands it to a worker thread (``asyncio.to_thread``) or its own worker.
"""

from __future__ import annotations

import abc

from .errors import UnsupportedError
from .types import (
    CacheMetricsSnapshot,
    DecodeInput,
    DecodeOutput,
    ExecutorCapabilities,
    ExecutorStatus,
    KvCacheHandle,
    KvCapacity,
    ModelInfo,
    PrefillInput,
    PrefillOutput,
    UnifiedBatch,
    UnifiedOutput,
    VerifyInput,
    VerifyOutput,
)


class ModelExecutor(abc.ABC):
    @abc.abstractmethod
    def info(self) -> ModelInfo: ...

    @abc.abstractmethod
    async def prefill(self, input: PrefillInput) -> PrefillOutput: ...

    @abc.abstractmethod
    async def decode(self, input: DecodeInput) -> DecodeOutput: ...

    @abc.abstractmethod
    def capabilities(self) -> ExecutorCapabilities: ...

    @abc.abstractmethod
    def status(self) -> ExecutorStatus: ...

    async def batch_prefill(self, inputs: list[PrefillInput]) -> list[PrefillOutput]:
        return [await self.prefill(item) for item in inputs]

    async def batch_decode(self, inputs: list[DecodeInput]) -> list[DecodeOutput]:
        return [await self.decode(item) for item in inputs]

    async def forward_verify(self, input: VerifyInput) -> VerifyOutput:
        """Default: one decode per draft position; executors with a real KV cache do one forward."""
        import torch

        cache = input.kv_cache
        rows = []
        for token in input.tokens.reshape(-1).tolist():
            out = await self.decode(DecodeInput(torch.tensor([[token]]), cache, metadata=input.metadata))
            cache = out.kv_cache
            rows.append(out.logits.reshape(-1, out.logits.shape[-1])[-1])
        return VerifyOutput(torch.stack(rows), cache)

    async def unified_decode(self, batch: UnifiedBatch) -> UnifiedOutput:
        raise UnsupportedError(
            f"{type(self).__name__} has no unified (mixed prefill/decode) batch path",
            "use batch_prefill and batch_decode",
        )

    async def forward(self, input):  # noqa: A002 - mirrors the trait's name
        raise UnsupportedError(f"{type(self).__name__} does not expose a raw forward pass",
                               "use prefill or the executor's high-level API")

    async def truncate_kv(self, cache: KvCacheHandle, num_tokens: int) -> KvCacheHandle:
        """Roll ``cache`` back to its first ``num_tokens`` tokens. Ferrum's default silently keeps the
        cache; here an executor that cannot roll back says so instead of letting a caller decode on
        from the wrong prefix."""
        raise UnsupportedError(f"{type(self).__name__} cannot roll a KV cache back",
                               "prefill again from the tokens to keep")

    async def warmup(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    def release_cache(self, cache_id: str) -> None:
        return None

    def supports_native_unified_decode(self) -> bool:
        return False

    def kv_capacity(self) -> KvCapacity | None:
        return None

    def cache_metrics_snapshot(self) -> CacheMetricsSnapshot | None:
        return None

    def lora_metrics_snapshot(self) -> dict | None:
        return None
