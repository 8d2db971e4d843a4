"""BertModelExecutor on the real bundled MiniLM: contract methods, embed order, cache, batching."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from executors.bert import BertModelExecutor, EmbeddingCache
from executors.bert.batching import pad, plan_batches
from executors.core.errors import (
    Cancelled,
    InvalidParameterError,
    ModelError,
    RequestValidationError,
)
from executors.core.types import CancelToken, ExecutorState, ModelType, PrefillInput

TEXTS = [
    "The shuttle launch was delayed by a day.",
    "",
    "Is there a god?",
    "Orbital mechanics decides the launch window for every mission to Mars and beyond.",
    "The shuttle launch was delayed by a day.",  # duplicate on purpose
]


def _ids(executor, text):
    return torch.tensor([executor.tokenizer(text)["input_ids"]])


def test_info_is_a_real_embedding_model(minilm):
    info = minilm.info()
    assert info.model_type is ModelType.EMBEDDING
    assert info.model_id == minilm.model_id == "all-MiniLM-L6-v2"
    assert info.num_parameters == sum(p.numel() for p in minilm.model().parameters())
    assert 20_000_000 < info.num_parameters < 25_000_000
    assert (info.hidden_size, info.num_layers, info.num_heads, info.vocab_size) == (384, 6, 12, 30522)
    assert info.max_sequence_length == minilm.max_seq_length == 256
    assert minilm.embedding_dim == 384


def test_embed_keeps_input_order_and_duplicates(minilm):
    forward = minilm.embed(TEXTS, use_cache=False)
    backward = minilm.embed(TEXTS[::-1], use_cache=False)
    assert forward.shape == (5, 384) and forward.dtype == np.float32
    np.testing.assert_allclose(forward, backward[::-1], atol=1e-5)
    np.testing.assert_array_equal(forward[0], forward[4])
    assert not np.allclose(forward[0], forward[2], atol=1e-2)
    assert minilm.embed([]).shape == (0, 384)


def test_embed_rejects_non_strings(minilm):
    with pytest.raises(RequestValidationError, match="Text 1 is a int"):
        minilm.embed(["fine", 3])


def test_embed_stops_when_cancelled(minilm):
    token = CancelToken()
    token.cancel()
    before = minilm.metrics().computed_texts
    with pytest.raises(Cancelled):
        minilm.embed(["never embedded"], use_cache=False, cancel=token)
    assert minilm.metrics().computed_texts == before


def test_int8_needs_float32_weights(minilm_path):
    with pytest.raises(InvalidParameterError, match="float32"):
        BertModelExecutor.load(minilm_path, device="cpu", dtype="bfloat16", quantize=True)


def test_count_tokens_counts_special_tokens_without_truncation(minilm):
    assert minilm.count_tokens("") == 2
    assert minilm.count_tokens("hello world") == 4
    assert minilm.count_tokens("word " * 600) == 602 > minilm.max_seq_length


async def test_prefill_returns_pooled_embeddings(minilm):
    out = await minilm.prefill(PrefillInput(_ids(minilm, TEXTS[3])))
    assert out.logits is None and out.kv_cache is None  # no vocabulary head, no KV
    assert out.embeddings.shape == (1, 384)
    expected = minilm.embed([TEXTS[3]], use_cache=False)
    np.testing.assert_allclose(out.embeddings.numpy(), expected, atol=1e-5)


async def test_decode_explains_that_bert_does_not_generate(minilm):
    with pytest.raises(ModelError) as err:
        await minilm.decode(None)
    assert "encoder" in err.value.message and "does not generate" in err.value.message
    assert "prefill" in err.value.hint


async def test_batch_prefill_runs_one_forward_pass(minilm):
    texts = [TEXTS[0], TEXTS[2], TEXTS[3]]
    inputs = [PrefillInput(_ids(minilm, t)) for t in texts]
    calls = []
    handle = minilm.model().register_forward_hook(lambda module, args, output: calls.append(1))
    try:
        outputs = await minilm.batch_prefill(inputs)
    finally:
        handle.remove()
    assert len(calls) == 1
    assert [o.embeddings.shape for o in outputs] == [(1, 384)] * 3
    singles = [await minilm.prefill(i) for i in inputs]
    for got, single in zip(outputs, singles):
        np.testing.assert_allclose(got.embeddings.numpy(), single.embeddings.numpy(), atol=1e-5)


async def test_contract_batches_keep_to_max_batch_size(minilm_path):
    """max_batch_size is what a forward gets: five rows at a limit of two run as 2 + 2 + 1."""
    small = BertModelExecutor.load(minilm_path, device="cpu", max_batch_size=2)
    texts = [TEXTS[0], TEXTS[2], TEXTS[3], "a fourth text", "and a fifth one"]
    rows_per_forward = []
    handle = small.model().register_forward_hook(
        lambda module, args, output: rows_per_forward.append(int(output.last_hidden_state.shape[0])))
    try:
        outputs = await small.batch_prefill([PrefillInput(_ids(small, t)) for t in texts])
        ids, mask = pad([_ids(small, t)[0].tolist() for t in texts], 0)
        hidden = await small.forward(PrefillInput(ids, attention_mask=mask))
    finally:
        handle.remove()
    assert small.capabilities().max_batch_size == 2
    assert rows_per_forward == [2, 2, 1, 2, 2, 1]
    expected = small.embed(texts, use_cache=False)
    np.testing.assert_allclose(torch.cat([o.embeddings for o in outputs]).numpy(), expected, atol=1e-5)
    assert hidden.shape == (5, ids.shape[1], 384)
    with torch.inference_mode():
        whole = small.model()(input_ids=ids, attention_mask=mask).last_hidden_state
    real = mask.bool()
    torch.testing.assert_close(hidden[real], whole[real], atol=1e-4, rtol=1e-4)


async def test_contract_work_runs_off_the_event_loop(minilm):
    """The torch work of an async contract method runs on a worker thread; the loop stays free."""
    import asyncio
    import threading

    threads = []
    handle = minilm.model().register_forward_hook(lambda *_: threads.append(threading.get_ident()))
    try:
        task = asyncio.ensure_future(minilm.prefill(PrefillInput(_ids(minilm, TEXTS[3]))))
        await asyncio.sleep(0)
        assert not task.done()  # it waits on a thread: run inline it would have finished in one step
        await task
        await minilm.forward(PrefillInput(_ids(minilm, TEXTS[0])))
    finally:
        handle.remove()
    assert len(threads) == 2 and threading.get_ident() not in threads


async def test_truncate_kv_is_unsupported(minilm):
    from executors.core.errors import UnsupportedError

    with pytest.raises(UnsupportedError) as err:
        await minilm.truncate_kv(None, 1)
    assert "roll" in err.value.message and err.value.hint


async def test_forward_returns_last_hidden_states(minilm):
    ids = _ids(minilm, TEXTS[0])
    hidden = await minilm.forward(PrefillInput(ids))
    assert hidden.shape == (1, ids.shape[1], 384)
    with torch.inference_mode():
        expected = minilm.model()(input_ids=ids).last_hidden_state
    torch.testing.assert_close(hidden, expected)


def test_prefill_rejects_inputs_over_the_position_limit(minilm):
    with pytest.raises(RequestValidationError, match="longer than the model"):
        minilm.get_embeddings(torch.ones((1, 600), dtype=torch.long))


def test_capabilities_and_status_are_live(minilm):
    caps = minilm.capabilities()
    assert caps.max_sequence_length == 256 and caps.max_batch_size >= 1
    assert "cpu" in caps.supported_devices and "float32" in caps.supported_dtypes
    assert caps.supports_dynamic_batching and not caps.supports_speculative_decoding
    assert caps.memory_requirements.parameter_memory >= 4 * minilm.info().num_parameters
    assert caps.memory_requirements.activation_memory_per_token > 0
    before = minilm.status().prefill_operations
    minilm.embed([f"status probe {i}" for i in range(3)], use_cache=False)
    status = minilm.status()
    assert status.prefill_operations > before
    assert status.avg_prefill_time_ms > 0 and status.last_operation is not None
    assert status.state is ExecutorState.READY and status.is_ready
    assert status.memory_usage.used_bytes > 0


def test_memory_is_the_models_own(minilm_path):
    """Weights, tokenizer and the embedding cache, not the process: the cache's growth shows up byte for byte."""
    from executors.core.stats import parameter_bytes, process_rss

    ex = BertModelExecutor.load(minilm_path, device="cpu")
    weights = parameter_bytes(ex.model())
    assert weights == sum(p.numel() * 4 for p in ex.model().parameters()) + sum(
        b.numel() * b.element_size() for b in ex.model().buffers())
    before = ex.status().memory_usage
    assert (before.parameter_bytes, before.cache_bytes, before.kv_bytes) == (weights, 0, 0)
    fixed = weights + before.tokenizer_bytes
    assert before.allocated_bytes == before.used_bytes == fixed < process_rss()
    ex.embed([f"memory probe {i}" for i in range(10)])
    after = ex.status().memory_usage
    assert after.cache_bytes == ex.cache.stats().bytes >= 10 * 384 * 4
    assert after.allocated_bytes == fixed + after.cache_bytes == after.used_bytes
    assert after.peak_bytes >= after.allocated_bytes
    assert 0 < after.utilization_percent < 100
    ex.cache.clear()
    cleared = ex.status().memory_usage
    assert cleared.allocated_bytes == fixed and cleared.peak_bytes == after.peak_bytes


def test_int8_weights_count_at_their_packed_size(minilm, minilm_path):
    ex = BertModelExecutor.load(minilm_path, device="cpu", quantize=True)
    weights = ex.status().memory_usage.parameter_bytes
    assert weights == ex.capabilities().memory_requirements.parameter_memory == ex.info().metadata["parameter_bytes"]
    linears = [m for m in minilm.model().modules() if isinstance(m, torch.nn.Linear)]
    int8_saving = sum(3 * m.weight.numel() - 4 * m.out_features for m in linears)  # 1 byte a weight, a scale a row
    assert weights == minilm.status().memory_usage.parameter_bytes - int8_saving


def _fresh(minilm, cache_bytes):
    """A second executor around the same loaded model, with its own cache."""
    return BertModelExecutor(minilm.model(), minilm.info(), minilm.device, tokenizer=minilm.tokenizer,
                             pooling=minilm.pooling, cache_bytes=cache_bytes)


def test_cache_metrics_report_hits_misses_and_bytes(minilm):
    executor = _fresh(minilm, 1 << 20)
    first = executor.embed(TEXTS)
    stats = executor.cache_metrics_snapshot().caches["embeddings"]
    assert (stats.hits, stats.misses, stats.entries) == (0, 4, 4)  # the duplicate is computed once
    assert 4 * 384 * 4 <= stats.bytes <= stats.capacity_bytes
    second = executor.embed(TEXTS)
    stats = executor.cache_metrics_snapshot().caches["embeddings"]
    assert (stats.hits, stats.misses) == (5, 4)  # every position of the second call is a hit
    np.testing.assert_array_equal(first, second)
    assert executor.metrics().computed_texts == 4


def test_cache_evicts_to_stay_under_its_byte_bound(minilm):
    executor = _fresh(minilm, 4000)  # room for two 384-dim float32 vectors with their texts
    executor.embed([f"sentence number {i}" for i in range(6)])
    stats = executor.cache_metrics_snapshot().caches["embeddings"]
    assert stats.entries == 2 and stats.evictions == 4 and stats.bytes <= 4000


def test_cache_is_lru_and_can_be_disabled():
    cache = EmbeddingCache(capacity_bytes=3 * (384 * 4 + 60))
    vec = np.ones(384, dtype=np.float32)
    for key in "abc":
        cache.put("m", key, vec)
    assert cache.get("m", "a") is not None  # "a" is now the most recent
    cache.put("m", "d", vec)
    assert cache.get("m", "b") is None and cache.get("m", "a") is not None
    assert cache.get("other-model", "a") is None
    off = EmbeddingCache(0)
    off.put("m", "a", vec)
    assert off.get("m", "a") is None and off.stats().entries == 0


def test_plan_batches_covers_every_input_within_the_budget():
    lengths = [5, 300, 12, 12, 64, 1, 7, 128, 33, 2] * 7
    batches = plan_batches(lengths, token_budget=256, max_batch_size=16)
    seen = sorted(i for b in batches for i in b.indices)
    assert seen == list(range(len(lengths)))
    for b in batches:
        assert b.max_len == max(lengths[i] for i in b.indices)
        assert len(b.indices) <= 16
        assert len(b.indices) == 1 or b.padded_tokens <= 256
    widths = [b.max_len for b in batches]
    assert widths == sorted(widths, reverse=True)


def test_pad_right_pads_with_a_mask():
    ids, mask = pad([[101, 7, 102], [101, 102]], pad_id=0)
    assert ids.tolist() == [[101, 7, 102], [101, 102, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 1, 0]]


async def test_from_path_reads_the_model_definition(minilm_path, minilm):
    model_def = json.loads((minilm_path / "config.json").read_text())
    loaded = await BertModelExecutor.from_path(minilm_path, model_def, device="cpu", cache_bytes=0)
    assert loaded.info().num_parameters == minilm.info().num_parameters
    assert loaded.cache_metrics_snapshot().caches["embeddings"].capacity_bytes == 0
    np.testing.assert_allclose(loaded.embed(TEXTS[:2]), minilm.embed(TEXTS[:2], use_cache=False), atol=1e-5)
