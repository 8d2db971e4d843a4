"""The decoder step's CPU kernels: one-token rows through fbgemm one window at a time, best-of rows
sharing one copy of the cross-attention K/V, windows encoded one by one, and the sampler.

Each must give a window the same result whatever it is batched with (that is what makes batched
transcription give the sequential text), and stay close to the float computation it replaces.
"""

from __future__ import annotations

import soundfile as sf
import torch
from torch import nn

from executors.whisper.cpu_attention import cpu_attention
from executors.whisper.decoding import _sample
from executors.whisper.forward import WhisperRuntime, cross_attention_dtype
from executors.whisper.int8_linear import RowInt8Linear
from executors.whisper.projections import fused, token_step


def _relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    return float(((got - want).norm(dim=-1) / want.norm(dim=-1)).max())


@torch.no_grad()
def test_token_rows_do_not_depend_on_the_batch_and_stay_close_to_float():
    torch.manual_seed(3)
    linear = nn.Linear(384, 1536)
    step = token_step(RowInt8Linear.from_linear(linear))
    rows = torch.randn(7, 1, 384) * torch.linspace(0.1, 10, 7)[:, None, None] + torch.linspace(-2, 2, 7)[:, None, None]
    together = step(rows)
    alone = torch.cat([step(rows[i:i + 1]) for i in range(len(rows))])
    assert together.shape == (7, 1, 1536)
    assert torch.equal(together, alone)
    assert _relative_error(together, linear(rows)) < 0.03


@torch.no_grad()
def test_prompts_keep_the_per_row_int8_layer():
    torch.manual_seed(4)
    layer = RowInt8Linear.from_linear(nn.Linear(384, 384))
    prompt = torch.randn(2, 5, 384)
    assert torch.equal(token_step(layer)(prompt), layer(prompt))


@torch.no_grad()
def test_fused_token_rows_equal_their_parts():
    torch.manual_seed(5)
    parts = [RowInt8Linear.from_linear(nn.Linear(384, 384)) for _ in range(3)]
    x = torch.randn(4, 1, 384)
    fusion = fused(parts, token_rows=True)
    # the parts' weights are views of the fused layer's, and only that layer holds a packed copy
    storage = fusion.layer.weight_int8.untyped_storage().data_ptr()
    assert all(p.weight_int8.untyped_storage().data_ptr() == storage and p.packed_bytes == 0 for p in parts)
    assert fusion.layer.packed_bytes >= fusion.layer.weight_int8.numel()
    assert torch.equal(fusion.call(x), torch.cat([token_step(p)(x) for p in parts], dim=-1))


@torch.no_grad()
def test_rows_sharing_one_encoder_output_attend_to_one_copy():
    torch.manual_seed(6)
    k, v = torch.randn(1, 6, 1500, 64), torch.randn(1, 6, 1500, 64)
    q = torch.randn(5, 6, 2, 64) / 8
    shared = cpu_attention(q, k.expand(5, -1, -1, -1), v.expand(5, -1, -1, -1))
    reference = torch.softmax(q @ k.expand(5, -1, -1, -1).transpose(-1, -2), dim=-1) @ v.expand(5, -1, -1, -1)
    assert shared.shape == reference.shape
    assert torch.allclose(shared, reference, atol=1e-5)


@torch.no_grad()
def test_bfloat16_cross_attention_does_not_depend_on_the_batch_and_stays_close_to_float():
    torch.manual_seed(7)
    k, v = torch.randn(3, 6, 1500, 64), torch.randn(3, 6, 1500, 64)
    q = torch.randn(3, 6, 1, 64) / 8
    low_k, low_v = k.bfloat16(), v.bfloat16()
    runtime = WhisperRuntime.__new__(WhisperRuntime)  # _attend reads only the device
    runtime.proj_out = nn.Linear(1, 1)
    together = runtime._attend(q, low_k, low_v)
    alone = torch.cat([runtime._attend(q[i:i + 1], low_k[i:i + 1], low_v[i:i + 1]) for i in range(3)])
    assert together.dtype == torch.float32
    assert torch.equal(together, alone)
    # best-of rows over one window's K/V attend as one block (whose rows stay together to the end)
    shared = runtime._attend(q, low_k[:1].expand(3, -1, -1, -1), low_v[:1].expand(3, -1, -1, -1))
    one_by_one = torch.cat([runtime._attend(q[i:i + 1], low_k[:1], low_v[:1]) for i in range(3)])
    assert _relative_error(shared, one_by_one) < 1e-3
    reference = torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
    assert _relative_error(together, reference) < 0.02


@torch.no_grad()
def test_only_fast_cross_attention_keeps_bfloat16_kv_and_only_where_the_cpu_multiplies_it(whisper_tiny_int8,
                                                                                           monkeypatch):
    from executors.core.device import cpu_multiplies_bfloat16

    runtime = whisper_tiny_int8.runtime
    encoded = torch.randn(1, 1500, 384)
    sequential = runtime.new_store(encoded).cross_k[0]
    assert sequential.dtype == torch.float32 and sequential.is_contiguous()
    with runtime.fast_cross_attention():
        store = runtime.new_store(encoded)
    assert store.cross_k[0].dtype == (torch.bfloat16 if cpu_multiplies_bfloat16() else torch.float32)
    assert store.cross_k[0].is_contiguous() and store.self_k[0].dtype == torch.float32
    assert runtime.new_store(encoded).cross_k[0].dtype == torch.float32   # only inside the block
    cpu = torch.device("cpu")
    assert cross_attention_dtype(torch.device("cuda"), torch.float16, int8=False) == torch.float16
    assert cross_attention_dtype(cpu, torch.float32, int8=False) == torch.float32   # the float reference
    monkeypatch.setenv("FERRUM_CPU_BF16", "0")   # no bfloat16 at all
    assert cross_attention_dtype(cpu, torch.float32, int8=True) == torch.float32


@torch.no_grad()
def test_windows_are_encoded_the_same_alone_or_together(whisper_tiny_int8, speech_dir):
    ex = whisper_tiny_int8
    windows = []
    for name in ("asterisk/activated.flac", "asterisk/confbridge-invalid.flac"):
        audio, _ = sf.read(str(speech_dir / name), dtype="float32")
        windows.append(ex.log_mel.window(audio)[0])
    ex.encoder_cache.clear()
    together, _ = ex.runtime.encode_cached(windows)
    ex.encoder_cache.clear()
    alone = torch.cat([ex.runtime.encode_cached([w])[0] for w in windows])
    assert torch.equal(together, alone)
    assert not torch.equal(together[0], together[1])


def test_sampling_follows_the_distribution_and_never_draws_a_masked_token():
    probs = torch.tensor([[0.0, 0.2, 0.0, 0.5, 0.3, 0.0]]).repeat(20000, 1)
    draws = _sample(probs, torch.Generator().manual_seed(7))
    counts = torch.bincount(draws, minlength=6).float() / len(draws)
    assert counts[[0, 2, 5]].sum() == 0
    assert torch.allclose(counts[[1, 3, 4]], torch.tensor([0.2, 0.5, 0.3]), atol=0.015)
    again = _sample(probs, torch.Generator().manual_seed(7))
    assert torch.equal(draws, again)


def test_rows_that_end_leave_the_batch_and_the_others_decode_as_alone(whisper_tiny_int8, speech_dir):
    """A batch of windows steps only the rows still decoding: a short utterance batched with a long one
    stops costing steps at its end, and both texts are those each window gets alone."""
    ex = whisper_tiny_int8
    windows = []
    for name in ("asterisk/activated.flac", "asterisk/confbridge-invalid.flac"):
        audio, _ = sf.read(str(speech_dir / name), dtype="float32")
        windows.append(ex.log_mel.window(audio)[0])
    enc, _ = ex.runtime.encode_cached(windows)
    prompt = ex.tokens.prompt([], None, "transcribe")
    alone = [ex.decoder.decode_batch(enc[i:i + 1], [prompt])[0] for i in range(2)]
    rows: list[int] = []
    step = ex.runtime.step
    ex.runtime.step = lambda store, ids: rows.append(ids.shape[0]) or step(store, ids)
    try:
        together = ex.decoder.decode_batch(enc, [prompt, prompt])
    finally:
        del ex.runtime.step
    assert [r.tokens for r in together] == [r.tokens for r in alone]
    short, long = sorted(len(r.tokens) for r in alone)
    assert short < long
    # the prompts, a step after each token chosen while both rows decode, then the long row alone
    assert rows == [2] + [2] * short + [1] * (long - short)


@torch.no_grad()
def test_every_layers_cross_attention_kv_in_one_int8_call_equals_each_layers_own(whisper_tiny_int8, speech_dir):
    """The runtime projects the encoder output to all layers' cross-attention K and V in one int8 call; each
    is what the layer's own k_proj and v_proj give, in float32 and in bfloat16, a window alone or in a batch."""
    runtime = whisper_tiny_int8.runtime
    assert runtime._cross_kv is not None
    windows = []
    for name in ("asterisk/activated.flac", "asterisk/confbridge-invalid.flac"):
        audio, _ = sf.read(str(speech_dir / name), dtype="float32")
        windows.append(whisper_tiny_int8.log_mel.window(audio)[0])
    encoded, _ = runtime.encode_cached(windows)
    for dtype in (torch.float32, torch.bfloat16):
        ks, vs = runtime._cross_attention_kv(encoded, dtype)
        alone = runtime._cross_attention_kv(encoded[1:], dtype)
        for i, layer in enumerate(runtime.decoder.layers):
            for got, part, one in ((ks[i], layer.encoder_attn.k_proj, alone[0][i]),
                                   (vs[i], layer.encoder_attn.v_proj, alone[1][i])):
                own = RowInt8Linear(part.weight_int8, part.scales, part.bias, part.kernel)   # the part on its own
                want = runtime._heads(own(encoded)).to(dtype).contiguous()
                assert got.dtype == dtype and got.is_contiguous()
                assert torch.equal(got, want)
                assert torch.equal(one[0], got[1])
