"""The executor contract on the real tiny.en: prefill/decode/batch paths reproduce transcribe's
greedy tokens, handles roll back and verify drafts, and status/metrics are live."""

from __future__ import annotations

import asyncio

import pytest
import torch
from fixture_data import SPEECH

from executors.audio.decode import load_audio
from executors.core.errors import ModelError, NotFoundError
from executors.core.types import DecodeInput, ModelType, PrefillInput, VerifyInput

run = asyncio.run


@pytest.fixture(scope="module")
def clips(whisper_tiny):
    """Three short dev clips, their padded features and transcribe's greedy tokens."""
    out = []
    for name in ("agent-newlocation", "confbridge-invalid", "dir-welcome"):
        path = SPEECH / "asterisk" / f"{name}.flac"
        mel, _ = whisper_tiny.log_mel.window(load_audio(path))
        transcript = whisper_tiny.transcribe(path)
        assert all(s.temperature == 0.0 for s in transcript.segments)
        out.append((mel, [t for s in transcript.segments for t in s.tokens]))
    return out


def _sot(ex) -> list[int]:
    return ex.tokens.sot_sequence(None, "transcribe")


def _greedy(ex, handles, first_logits, steps=224):
    """Greedy decoding through batch_decode with transcribe's own logit rules; one row per handle."""
    filt, eot = ex.decoder.filters[True], ex.tokens.eot
    logits = torch.cat(first_logits).clone()
    sampled = torch.empty((len(handles), 0), dtype=torch.long)
    done = torch.zeros(len(handles), dtype=torch.bool)
    for _ in range(steps):
        filt.apply(logits, sampled)
        nxt = torch.where(done, torch.full((len(handles),), eot), logits.argmax(-1))
        sampled = torch.cat([sampled, nxt[:, None]], dim=1)
        done |= nxt == eot
        if done.all():
            break
        outs = run(ex.batch_decode([DecodeInput(nxt[i:i + 1, None], h) for i, h in enumerate(handles)]))
        logits = torch.cat([o.logits[:, -1] for o in outs])
    rows = sampled.tolist()
    return [r[:r.index(eot)] if eot in r else r for r in rows]


def _release(ex, handles):
    for h in handles:
        ex.release_cache(h.cache_id)


def test_prefill_decode_reproduces_transcribe(whisper_tiny, clips):
    ex = whisper_tiny
    for mel, expected in clips:
        out = run(ex.prefill(PrefillInput(torch.tensor([_sot(ex)]), metadata={"input_features": mel})))
        assert out.logits.shape == (1, 1, ex.model.config.vocab_size)
        assert out.kv_cache.encoder_output.shape[:2] == (1, ex.model.config.max_source_positions)
        tokens = _greedy(ex, [out.kv_cache], [out.logits[:, -1]])[0]
        _release(ex, [out.kv_cache])
        assert tokens == expected


def test_batch_prefill_and_batch_decode_in_one_pass(whisper_tiny, clips):
    ex = whisper_tiny
    before = ex.status()
    outs = run(ex.batch_prefill([PrefillInput(torch.tensor([_sot(ex)]), metadata={"input_features": mel})
                                 for mel, _ in clips]))
    handles = [o.kv_cache for o in outs]
    assert len({id(h.store) for h in handles}) == 1  # one forward pass, one shared cache
    tokens = _greedy(ex, handles, [o.logits[:, -1] for o in outs])
    after = ex.status()
    _release(ex, handles)
    assert tokens == [expected for _, expected in clips]
    assert after.prefill_operations == before.prefill_operations + 1
    assert after.decode_operations - before.decode_operations == max(len(t) for t in tokens)


def test_ragged_batch_matches_single_sequences(whisper_tiny, clips):
    ex = whisper_tiny
    (mel_a, _), (mel_b, _) = clips[0], clips[1]
    long_prompt = ex.tokens.prompt(ex.encode_text(" Please press the pound key."), None, "transcribe")
    inputs = [PrefillInput(torch.tensor([long_prompt]), metadata={"input_features": mel_a}),
              PrefillInput(torch.tensor([_sot(ex)]), metadata={"input_features": mel_b})]
    batched = run(ex.batch_prefill(inputs))
    single = [run(ex.prefill(i)) for i in inputs]
    for b, s in zip(batched, single):
        assert b.logits.shape == s.logits.shape
        torch.testing.assert_close(b.logits[:, -1], s.logits[:, -1], atol=2e-3, rtol=1e-3)
    token = torch.tensor([[ex.tokens.timestamp_begin]])
    for _ in range(3):
        pair = run(ex.batch_decode([DecodeInput(token, o.kv_cache) for o in batched]))
        alone = [run(ex.decode(DecodeInput(token, o.kv_cache))) for o in single]
        for p, a in zip(pair, alone):
            torch.testing.assert_close(p.logits, a.logits, atol=2e-3, rtol=1e-3)
        token = torch.tensor([[int(pair[0].logits[0, -1, :ex.tokens.eot].argmax())]])
    assert [o.kv_cache.num_tokens for o in batched] == [len(long_prompt) + 3, len(_sot(ex)) + 3]
    _release(ex, [o.kv_cache for o in batched + single])


def test_truncate_kv_rolls_back_and_forward_verify_scores_drafts(whisper_tiny, clips):
    ex = whisper_tiny
    mel, expected = clips[1]
    prompt = _sot(ex)
    out = run(ex.prefill(PrefillInput(torch.tensor([prompt]), metadata={"input_features": mel})))
    handle = out.kv_cache
    drafts = expected[:5]
    step_logits = []
    for tok in drafts:
        step_logits.append(run(ex.decode(DecodeInput(torch.tensor([[tok]]), handle))).logits[0, -1])
    assert handle.num_tokens == len(prompt) + 5
    rolled = run(ex.truncate_kv(handle, len(prompt) + 2))
    assert rolled.num_tokens == len(prompt) + 2
    again = run(ex.decode(DecodeInput(torch.tensor([[drafts[2]]]), rolled))).logits[0, -1]
    torch.testing.assert_close(again, step_logits[2], atol=1e-4, rtol=1e-4)

    fresh = run(ex.prefill(PrefillInput(torch.tensor([prompt]), metadata={"input_features": mel})))
    verified = run(ex.forward_verify(VerifyInput(torch.tensor(drafts), fresh.kv_cache)))
    assert verified.logits.shape == (5, ex.model.config.vocab_size)
    torch.testing.assert_close(verified.logits, torch.stack(step_logits), atol=2e-3, rtol=1e-3)
    assert verified.kv_cache.num_tokens == len(prompt) + 5
    _release(ex, [handle, fresh.kv_cache])


def test_encoder_cache_hits_and_handle_reuse(whisper_tiny, clips):
    ex = whisper_tiny
    mel = clips[2][0] * 0.5  # features no other test used
    enc_stats = lambda: ex.cache_metrics_snapshot().caches["encoder_output"]
    start = enc_stats()
    first = run(ex.prefill(PrefillInput(torch.tensor([_sot(ex)]), metadata={"input_features": mel})))
    mid = enc_stats()
    assert (mid.misses, mid.hits) == (start.misses + 1, start.hits)
    second = run(ex.prefill(PrefillInput(torch.tensor([_sot(ex)]), metadata={"input_features": mel})))
    end = enc_stats()
    assert end.hits == mid.hits + 1 and end.misses == mid.misses
    assert end.entries >= 1 and end.bytes > 0
    reused = run(ex.prefill(PrefillInput(torch.tensor([_sot(ex)]), metadata={"encoder_handle": first.kv_cache})))
    torch.testing.assert_close(reused.logits, first.logits)
    torch.testing.assert_close(second.logits, first.logits)
    kv = ex.cache_metrics_snapshot().caches["kv_handles"]
    assert kv.entries >= 3 and kv.bytes > 0
    _release(ex, [first.kv_cache, second.kv_cache, reused.kv_cache])


def test_chunked_prefill_continues_a_handle(whisper_tiny, clips):
    ex = whisper_tiny
    mel = clips[0][0]
    prompt = ex.tokens.prompt(ex.encode_text(" Press the pound key when you are done."), None, "transcribe")
    whole = run(ex.prefill(PrefillInput(torch.tensor([prompt]), metadata={"input_features": mel})))
    head = run(ex.prefill(PrefillInput(torch.tensor([prompt[:4]]), metadata={"input_features": mel})))
    tail = run(ex.prefill(PrefillInput(torch.tensor([prompt[4:]]), kv_cache=head.kv_cache)))
    assert tail.kv_cache is head.kv_cache and tail.kv_cache.num_tokens == len(prompt)
    torch.testing.assert_close(tail.logits, whole.logits[:, 4:], atol=2e-3, rtol=1e-3)
    _release(ex, [whole.kv_cache, head.kv_cache])


def test_release_cache_and_capacity(whisper_tiny, clips):
    ex = whisper_tiny
    active = ex.kv_capacity().active_sequences
    out = run(ex.prefill(PrefillInput(torch.tensor([_sot(ex)]), metadata={"input_features": clips[0][0]})))
    cap = ex.kv_capacity()
    assert cap.max_tokens_per_sequence == ex.model.config.max_target_positions == 448
    assert cap.active_sequences == active + 1 and cap.used_tokens >= len(_sot(ex))
    ex.release_cache(out.kv_cache.cache_id)
    assert not out.kv_cache.is_valid()
    assert ex.kv_capacity().active_sequences == active
    with pytest.raises(NotFoundError):
        run(ex.decode(DecodeInput(torch.tensor([[ex.tokens.timestamp_begin]]), out.kv_cache)))


def test_info_capabilities_and_live_status(whisper_tiny, clips):
    ex = whisper_tiny
    info = ex.info()
    assert info.model_type is ModelType.SPEECH_TO_TEXT
    assert info.num_parameters == sum(p.numel() for p in ex.model.parameters()) > 30_000_000
    assert (info.vocab_size, info.max_sequence_length, info.device) == (51864, 448, "cpu")
    caps = ex.capabilities()
    assert caps.max_sequence_length == 448 and "sdpa" in caps.attention_mechanisms and "cpu" in caps.supported_devices
    assert caps.memory_requirements.parameter_memory > 100_000_000
    before = ex.status()
    run(ex.warmup())
    after = ex.status()
    assert after.is_ready
    assert after.prefill_operations > before.prefill_operations
    assert after.decode_operations >= before.decode_operations + 2
    assert after.avg_prefill_time_ms > 0 and after.avg_decode_time_ms > 0
    assert after.memory_usage.allocated_bytes > 0 and after.last_operation is not None


def test_shutdown_releases_everything(whisper_tiny, clips):
    from executors.whisper.executor import WhisperModelExecutor

    other = WhisperModelExecutor(whisper_tiny.model, whisper_tiny.tokenizer, whisper_tiny.log_mel.settings,
                                 whisper_tiny.generation_config, whisper_tiny.device, "tiny-copy")
    out = run(other.prefill(PrefillInput(torch.tensor([_sot(other)]), metadata={"input_features": clips[0][0]})))
    run(other.shutdown())
    assert not out.kv_cache.is_valid()
    assert other.status().state.value == "Shutdown"
    with pytest.raises(ModelError):
        other.transcribe(clips[0][0].new_zeros(16000).numpy())
    assert whisper_tiny.transcribe(clips[0][0].new_zeros(16000).numpy()).text == ""  # the shared model is untouched


def test_batch_limit_is_enforced_and_reported(whisper_tiny, clips):
    from executors.core.errors import InvalidParameterError, RequestValidationError
    from executors.whisper.options import TranscribeOptions

    ex = whisper_tiny
    caps = ex.capabilities()
    limit = caps.max_batch_size
    assert limit == ex.max_batch_size == 16
    assert not caps.supports_dynamic_batching  # separate requests are never merged into one batch
    assert ex.info().metadata["architecture"] == "WhisperForConditionalGeneration"
    mel = clips[0][0]
    too_many = torch.tensor([_sot(ex)] * (limit + 1))
    with pytest.raises(RequestValidationError, match=f"more than this executor runs at once \\({limit}\\)"):
        run(ex.prefill(PrefillInput(too_many, metadata={"input_features": mel})))
    with pytest.raises(InvalidParameterError, match="best_of"):
        ex.transcribe(mel.new_zeros(16000).numpy(), TranscribeOptions(best_of=limit + 1, temperatures=(0.5,)))
    outs = run(ex.batch_prefill([PrefillInput(torch.tensor([_sot(ex)] * 8), metadata={"input_features": mel}),
                                 PrefillInput(torch.tensor([_sot(ex)] * 8), metadata={"input_features": mel})]))
    try:
        token = torch.full((8, 1), ex.tokens.timestamp_begin)
        run(ex.batch_decode([DecodeInput(token, o.kv_cache) for o in outs]))  # 16 rows: at the limit
        extra = run(ex.prefill(PrefillInput(torch.tensor([_sot(ex)]), metadata={"input_features": mel})))
        with pytest.raises(RequestValidationError):  # 17 rows gathered from three handles
            run(ex.batch_decode([DecodeInput(token, o.kv_cache) for o in outs]
                                + [DecodeInput(token[:1], extra.kv_cache)]))
    finally:
        _release(ex, [o.kv_cache for o in outs] + [extra.kv_cache])


def test_memory_counts_weights_encoder_cache_and_kv(whisper_tiny, clips):
    """The model's own memory: KV of live handles appears on prefill (filled part = tokens held) and
    goes on release; the encoder cache is its entries' bytes; none of it is the process's RSS."""
    import gc

    from executors.core.stats import parameter_bytes

    ex = whisper_tiny
    mel = clips[1][0]
    gc.collect()  # stores of earlier tests that only a reference cycle still held
    base = ex.status().memory_usage
    assert base.parameter_bytes == parameter_bytes(ex.model) == ex.capabilities().memory_requirements.parameter_memory
    assert base.kv_bytes == 0 and base.cache_bytes == ex.encoder_cache.stats().bytes
    prompt = _sot(ex)
    out = run(ex.prefill(PrefillInput(torch.tensor([prompt, prompt]), metadata={"input_features": mel})))
    try:
        mem = ex.status().memory_usage
        cfg, elem = ex.config, 4
        self_kv = 2 * cfg.decoder_layers * 2 * 448 * cfg.d_model * elem  # K and V, 2 rows, 448 positions
        cross_kv = 2 * cfg.decoder_layers * 1 * 1500 * cfg.d_model * elem  # one window, shared by both rows
        assert mem.kv_bytes == self_kv + cross_kv == out.kv_cache.stats()["bytes"]
        assert mem.cache_bytes == ex.encoder_cache.stats().bytes >= 1500 * cfg.d_model * elem
        fixed = mem.parameter_bytes + mem.tokenizer_bytes
        assert mem.allocated_bytes == fixed + mem.cache_bytes + mem.kv_bytes
        filled = self_kv * len(prompt) // 448 + cross_kv
        assert mem.used_bytes == pytest.approx(fixed + mem.cache_bytes + filled, abs=64)
        assert mem.peak_bytes >= mem.allocated_bytes
    finally:
        ex.release_cache(out.kv_cache.cache_id)
    del out
    gc.collect()
    after = ex.status().memory_usage
    assert after.kv_bytes == 0 and after.peak_bytes >= mem.allocated_bytes


def test_int8_weights_count_with_their_packed_copies(whisper_tiny, whisper_tiny_int8):
    """Each int8 weight is held twice, as an int8 tensor and once packed by the kernel, and counted so;
    the self-attention q, k and v of the decoder's layers and of the int8 encoder's, and the decoder's
    cross-attention k and v, are packed only inside the fused layers the runtime calls (that the count is
    what the process holds: tests/test_model_memory.py)."""
    from executors.whisper.int8_linear import RowInt8Linear

    ex = whisper_tiny_int8
    float_weights = whisper_tiny.status().memory_usage.parameter_bytes
    int8_weights = ex.status().memory_usage.parameter_bytes
    head = ex.model.proj_out.qlinear  # the int8 copy beside the float embedding
    layers = [m for m in ex.model.modules() if isinstance(m, RowInt8Linear)]
    unpacked = [m for m in layers if m.packed_bytes == 0]
    fused = ex.config.decoder_layers + sum(layer.self_attn.qkv is not None for layer in ex.runtime.encoder.layers)
    cross = 2 * ex.config.decoder_layers   # every decoder layer's cross-attention k and v, in one layer
    assert len(unpacked) == 3 * fused + cross  # and the self-attention q, k, v of each decoder and int8 encoder layer
    assert all(m.packed_bytes >= m.weight_int8.numel() for m in layers if m not in unpacked)
    assert ex.runtime.packed_bytes >= sum(m.weight_int8.numel() for m in unpacked)
    packs = sum(m.packed_bytes for m in layers) + ex.runtime.packed_bytes
    # a linear's float32 weight became int8 (a byte instead of four) plus its packed copy; the output
    # projection, tied to the token embedding that stays float, adds an int8 copy of its own; linears left
    # in float32 (the encoder's last fc2) count as before, those made bfloat16 (the encoder, with
    # FERRUM_CPU_BF16=1) at two bytes instead of four; per-row scales are within the tolerance
    int8 = sum(m.weight_int8.numel() for m in layers if m is not head)
    bf16 = sum(p.numel() for p in ex.model.parameters() if p.dtype == torch.bfloat16)
    expected = float_weights - 3 * int8 + head.weight_int8.numel() + packs - 2 * bf16
    assert int8_weights == pytest.approx(expected, rel=0.01)


async def test_contract_work_runs_off_the_event_loop(whisper_tiny, clips):
    """prefill/decode/truncate/verify hand their torch work to a worker thread: the loop stays free."""
    import threading

    ex = whisper_tiny
    threads = []
    hook = ex.model.model.encoder.register_forward_hook(lambda *_: threads.append(threading.get_ident()))
    mel = clips[2][0].flip(-1)  # not in the encoder cache yet: the encoder runs
    try:
        task = asyncio.ensure_future(ex.prefill(PrefillInput(torch.tensor([_sot(ex)]), metadata={"input_features": mel})))
        await asyncio.sleep(0)
        assert not task.done()  # run inline it would have finished in one step of the loop
        out = await task
        for call in (ex.decode(DecodeInput(torch.tensor([[ex.tokens.timestamp_begin]]), out.kv_cache)),
                     ex.truncate_kv(out.kv_cache, 1),
                     ex.forward_verify(VerifyInput(torch.tensor([ex.tokens.timestamp_begin, 50364]), out.kv_cache))):
            pending = asyncio.ensure_future(call)
            await asyncio.sleep(0)
            assert not pending.done()
            await pending
        ex.release_cache(out.kv_cache.cache_id)
    finally:
        hook.remove()
    assert threads and threading.get_ident() not in threads
