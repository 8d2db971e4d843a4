"""The trait's default methods, exercised on the smallest executor that satisfies the contract."""

import pytest
import torch

from executors import (
    DecodeInput,
    DecodeOutput,
    ExecutorState,
    ModelExecutor,
    PrefillInput,
    PrefillOutput,
    UnifiedBatch,
    VerifyInput,
)
from executors.core.errors import UnsupportedError
from executors.core.stats import ExecutorStats


class CountingHandle:
    def __init__(self, n):
        self.cache_id, self.num_tokens, self.num_layers, self.num_heads, self.head_dim = "c", n, 1, 1, 1

    def is_valid(self):
        return True

    def stats(self):
        return {"tokens": self.num_tokens}


class EchoExecutor(ModelExecutor):
    """Logits are one-hot on the input token: lets the defaults' looping be checked exactly."""

    def __init__(self):
        self.stats = ExecutorStats("cpu", 0)
        self.stats.set_state(ExecutorState.READY)

    def info(self):
        raise NotImplementedError

    async def prefill(self, input):
        with self.stats.operation("prefill"):
            ids = input.input_ids
            return PrefillOutput(torch.nn.functional.one_hot(ids, 8).float(), CountingHandle(ids.shape[-1]))

    async def decode(self, input):
        with self.stats.operation("decode"):
            if int(input.input_ids.reshape(-1)[0]) == 7:
                raise ValueError("token 7 is poison")
            logits = torch.nn.functional.one_hot(input.input_ids, 8).float()
            return DecodeOutput(logits, CountingHandle(input.kv_cache.num_tokens + 1))

    def capabilities(self):
        raise NotImplementedError

    def status(self):
        return self.stats.status()


async def test_batch_defaults_loop_and_first_error_aborts():
    ex = EchoExecutor()
    outs = await ex.batch_prefill([PrefillInput(torch.tensor([[1, 2]])), PrefillInput(torch.tensor([[3]]))])
    assert [o.kv_cache.num_tokens for o in outs] == [2, 1]
    handle = outs[0].kv_cache
    decoded = await ex.batch_decode([DecodeInput(torch.tensor([[4]]), handle), DecodeInput(torch.tensor([[5]]), handle)])
    assert [int(d.logits.argmax()) for d in decoded] == [4, 5]
    with pytest.raises(ValueError):
        await ex.batch_decode([DecodeInput(torch.tensor([[7]]), handle), DecodeInput(torch.tensor([[1]]), handle)])
    status = ex.status()
    assert status.prefill_operations == 2 and status.decode_operations == 3
    assert status.state is ExecutorState.READY and status.last_operation is not None


async def test_forward_verify_default_scores_each_position_by_decode():
    ex = EchoExecutor()
    out = await ex.forward_verify(VerifyInput(torch.tensor([1, 2, 3]), CountingHandle(4)))
    assert out.logits.shape == (3, 8)
    assert out.logits.argmax(-1).tolist() == [1, 2, 3]
    assert out.kv_cache.num_tokens == 7


async def test_unsupported_and_noop_defaults():
    ex = EchoExecutor()
    with pytest.raises(UnsupportedError):
        await ex.unified_decode(UnifiedBatch(items=[]))
    with pytest.raises(UnsupportedError):
        await ex.forward(torch.zeros(1))
    with pytest.raises(UnsupportedError) as err:  # never a silent no-op: the caller would decode on
        await ex.truncate_kv(CountingHandle(3), 1)    # from a prefix it believes is gone
    assert "EchoExecutor" in err.value.message and err.value.hint
    assert await ex.warmup() is None and await ex.shutdown() is None
    assert ex.release_cache("x") is None
    assert ex.supports_native_unified_decode() is False
    assert ex.kv_capacity() is None and ex.cache_metrics_snapshot() is None and ex.lora_metrics_snapshot() is None
