"""The default CPU int8 path: per-channel weights, per-row activations, results independent of the batch."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from executors.core.kernels import KernelUnavailable
from executors.whisper import fbgemm
from executors.whisper.fbgemm import full_range_is_exact
from executors.whisper.int8_linear import RowInt8Linear, reduce_range
from executors.whisper.quantize import (
    DEFAULT_GROUPS,
    ENCODER_GROUPS,
    GROUPS,
    layer_group,
    quantize_int8,
    quantize_model,
    quantized_layers,
)


@pytest.mark.parametrize("encoder_bfloat16", [False, True], ids=["int8-encoder", "bfloat16-encoder"])
def test_every_linear_of_the_default_groups_is_int8_per_output_channel(whisper_tiny, encoder_bfloat16):
    model = quantize_int8(copy.deepcopy(whisper_tiny.model), encoder_bfloat16=encoder_bfloat16)
    layers = quantized_layers(model)
    depth = model.config.encoder_layers
    float_linears = [n for n, m in model.named_modules() if type(m) is nn.Linear]
    encoder_linears = 4 * 6
    if encoder_bfloat16:   # the encoder multiplies in bfloat16, the decoder is int8 as on any CPU
        assert len(float_linears) == encoder_linears and all(n.startswith("model.encoder.") for n in float_linears)
        assert {model.get_submodule(n).weight.dtype for n in float_linears} == {torch.bfloat16}
        assert model.model.encoder.conv1.weight.dtype == torch.bfloat16
        assert model.model.encoder.layer_norm.weight.dtype == torch.float32
        assert {layer_group(name, depth) for name in layers} == set(DEFAULT_GROUPS) - set(ENCODER_GROUPS)
        encoder_linears = 0
    else:
        assert float_linears == [f"model.encoder.layers.{depth - 1}.fc2"]   # kept float by measurement
        assert layer_group(float_linears[0], depth) not in DEFAULT_GROUPS
        assert {layer_group(name, depth) for name in layers} == set(DEFAULT_GROUPS)
        assert model.model.encoder.matmul_dtype is None
        encoder_linears -= 1
    assert len(layers) == encoder_linears + 4 * 10 + 1  # tiny: 4 decoder layers x 10, the head
    for name, layer in layers.items():
        assert layer.scales.shape == (layer.out_features,), name
        # symmetric per row: every row's largest weight maps to +-127 (a per-tensor scale would leave
        # all but the largest row short of it)
        row_max = layer.weight_int8.abs().amax(dim=1)
        assert bool((row_max == 127).all()), name
    head = model.proj_out
    assert isinstance(head.qlinear, RowInt8Linear) and head.qlinear.out_features == head.weight.shape[0] == 51864


def test_the_encoder_multiplies_in_bfloat16_only_when_asked(monkeypatch):
    """FERRUM_CPU_BF16=1 asks for the bfloat16 encoder; the loaded model says which encoder it runs."""
    from executors.core.device import bfloat16_encoder_requested
    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor

    path = resolve_model("whisper-tiny.en", kind="whisper").path
    monkeypatch.delenv("FERRUM_CPU_BF16", raising=False)
    assert not bfloat16_encoder_requested()
    default = WhisperModelExecutor.from_path(path, device="cpu", quantize="int8")
    assert default.model.model.encoder.matmul_dtype is None
    assert default.info().metadata["encoder_matmuls"] == "int8"
    monkeypatch.setenv("FERRUM_CPU_BF16", "1")
    asked = WhisperModelExecutor.from_path(path, device="cpu", quantize="int8")
    assert asked.model.model.encoder.matmul_dtype == torch.bfloat16
    assert asked.info().metadata["encoder_matmuls"] == "bfloat16"
    assert asked.model.model.encoder.layers[0].fc1.weight.dtype == torch.bfloat16


def test_the_bfloat16_encoder_stays_close_to_float32(whisper_tiny, speech_dir):
    """A real clip through the float32 encoder, the int8 one and the bfloat16 one: the bfloat16 output is
    float32, no further from the float one than int8's is, and decodes to the same words."""
    from executors.audio.decode import load_audio

    first = (speech_dir / "transcripts.tsv").read_text().splitlines()[1].split("\t")[0]
    mel = whisper_tiny.log_mel.window(load_audio(speech_dir / first))[0][None]
    reference = whisper_tiny.runtime.encode(mel)
    outputs = {}
    for bf16 in (False, True):
        model = quantize_int8(copy.deepcopy(whisper_tiny.model), encoder_bfloat16=bf16)
        with torch.inference_mode():
            outputs[bf16] = model.model.encoder(mel)
    assert outputs[True].dtype == torch.float32
    error = {bf16: float((out - reference).norm() / reference.norm()) for bf16, out in outputs.items()}
    assert 0 < error[True] < max(error[False], 0.02), error
    prompt = [whisper_tiny.tokens.sot, whisper_tiny.tokens.no_timestamps]
    texts = {bf16: whisper_tiny.decoder.decode_batch(out, [prompt], timestamps=False)[0].text
             for bf16, out in {**outputs, "float": reference}.items()}
    assert texts[True] == texts["float"] and texts[True].strip(), texts


def test_int8_head_keeps_the_float_embedding(whisper_tiny_int8):
    model = whisper_tiny_int8.model
    assert model.proj_out.weight.dtype == torch.float32
    assert model.proj_out.weight.data_ptr() == model.model.decoder.embed_tokens.weight.data_ptr()


def test_rows_do_not_depend_on_the_batch():
    torch.manual_seed(0)
    linear = nn.Linear(384, 1536)
    layer = RowInt8Linear.from_linear(linear)
    rows = torch.randn(9, 1, 384) * torch.linspace(0.05, 20, 9)[:, None, None] + torch.linspace(-3, 3, 9)[:, None, None]
    together = layer(rows)
    alone = torch.cat([layer(rows[i:i + 1]) for i in range(len(rows))])
    assert torch.equal(together, alone)
    reference = linear(rows)
    relative = ((together - reference).norm(dim=-1) / reference.norm(dim=-1)).max()
    assert relative < 0.03, float(relative)


@pytest.mark.parametrize("kernel", ["fbgemm", "onednn"])
def test_range_columns_give_the_calibration_rows_results_bit_for_bit(kernel):
    """The vocabulary's layer takes the kernel's range from two extra input columns instead of a calibration
    row (one-row calls at every decoder step): the same results, alone or batched."""
    from executors.whisper import onednn

    chosen = fbgemm if kernel == "fbgemm" else onednn
    if chosen.problem() is not None:
        pytest.skip(f"{kernel} does not run here")
    torch.manual_seed(2)
    linear = nn.Linear(384, 1000)
    rows, columns = (RowInt8Linear.from_linear(linear, chosen, range_columns=flag) for flag in (False, True))
    assert columns.range_columns and not rows.range_columns
    x = torch.randn(5, 384) * torch.linspace(0.1, 8, 5)[:, None] + torch.linspace(-1, 1, 5)[:, None]
    assert torch.equal(columns(x), rows(x))
    assert torch.equal(columns(x[:1]), rows(x[:1]))
    assert torch.equal(columns.token_rows(x[:2, None]), rows(x[:2, None]))   # one-token steps too


def test_the_vocabulary_takes_its_range_from_columns(whisper_tiny_int8):
    head = whisper_tiny_int8.model.proj_out.qlinear
    assert head.range_columns
    assert not any(layer.range_columns for name, layer in quantized_layers(whisper_tiny_int8.model).items()
                   if not name.startswith("proj_out"))


def test_per_row_activations_beat_one_range_for_the_whole_input():
    """Rows of very different size (as in an encoder window): per-row ranges keep the small rows."""
    torch.manual_seed(1)
    linear = nn.Linear(384, 384)
    rows = torch.randn(1500, 384) * torch.logspace(-2, 1, 1500)[:, None]
    reference = linear(rows)
    ours = RowInt8Linear.from_linear(linear)(rows)
    with torch.no_grad():
        scales = linear.weight.abs().amax(dim=1).double() / 127
        qweight = torch.quantize_per_channel(linear.weight, scales, torch.zeros(384, dtype=torch.long), 0, torch.qint8)
        packed = torch.ops.quantized.linear_prepack(qweight, linear.bias)
        whole = torch.ops.quantized.linear_dynamic(rows, packed, True)
    quiet = slice(0, 300)
    err = lambda out: float(((out[quiet] - reference[quiet]).norm() / reference[quiet].norm()))  # noqa: E731
    assert err(ours) < 0.03
    assert err(ours) < err(whole) / 3, (err(ours), err(whole))


def test_a_row_is_quantised_on_the_finest_grid_the_kernel_adds_exactly():
    """Identity weights give back the input as the kernel quantised it: each value within half a
    step of the row's grid, 252 steps over [min, max] with the 8-bit range, 125 with the 7-bit one."""
    torch.manual_seed(3)
    layer = RowInt8Linear.quantize(torch.eye(64), None)
    rows = torch.randn(32, 64) * torch.logspace(-2, 2, 32)[:, None] + torch.linspace(-5, 5, 32)[:, None]
    half_range = (rows.amax(dim=1) - rows.amin(dim=1)) / 2
    error = (layer(rows) - rows).abs().amax(dim=1) / half_range
    steps = 126 if not reduce_range() else 62.5   # per unit of the half range
    assert bool((error <= 0.5 / steps * 1.02).all()), float(error.max() * steps)
    assert float(error.max()) > 0.5 / steps * 0.5   # the bound is tight: the grid is not finer than stated


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists() or sys.platform != "linux", reason="reads Linux CPU flags")
def test_the_kernel_probe_matches_the_cpu():
    """8-bit activations are used exactly where the CPU's int8 dot product accumulates in 32 bits (VNNI)."""
    flags = set(Path("/proc/cpuinfo").read_text().split())
    if "avx2" not in flags:
        pytest.skip("not an x86 CPU with AVX2")
    assert full_range_is_exact() == bool(flags & {"avx512_vnni", "avx_vnni"})


def test_fused_projection_equals_its_parts():
    from executors.whisper.projections import fused

    torch.manual_seed(2)
    parts = [RowInt8Linear.from_linear(nn.Linear(384, 384)) for _ in range(3)]
    x = torch.randn(3, 2, 384)
    assert torch.equal(fused(parts).call(x), torch.cat([p(x) for p in parts], dim=-1))


def _two_linears(decoder_outputs: int = 8) -> nn.Module:
    """The least quantize_int8 takes for a Whisper: one encoder linear and one decoder linear."""
    from types import SimpleNamespace

    model = nn.Module()
    model.config = SimpleNamespace(encoder_layers=1)
    model.model = nn.Module()
    model.model.encoder = nn.Sequential(nn.Linear(8, 8))
    model.model.decoder = nn.Sequential(nn.Linear(8, decoder_outputs))
    model.model.encoder.layers = model.model.decoder.layers = []
    return model


def test_groups_can_be_left_in_float():
    model = _two_linears()
    quantize_int8(model, ("decoder_attention",))
    assert isinstance(model.model.decoder[0], RowInt8Linear)
    assert type(model.model.encoder[0]) is nn.Linear
    with pytest.raises(Exception, match="Unknown int8 layer groups"):
        quantize_int8(model, ("attention",))
    assert set(DEFAULT_GROUPS) <= set(GROUPS)


class _FailsOnWideLayers:
    """fbgemm, except that packing a layer of more than 16 outputs raises, as a kernel error would."""

    NAME = "a kernel failing on wide layers"
    full_range_is_exact = staticmethod(fbgemm.full_range_is_exact)
    linear = staticmethod(fbgemm.linear)

    @staticmethod
    def pack(weight_int8, scales):
        if weight_int8.shape[0] > 16:
            raise RuntimeError("cannot pack this shape")
        return fbgemm.pack(weight_int8, scales)

    @staticmethod
    def problem():
        return None


def test_a_kernel_error_on_a_real_layer_leaves_the_float_model(monkeypatch):
    model = _two_linears(decoder_outputs=32)
    monkeypatch.setattr(RowInt8Linear, "kernel", _FailsOnWideLayers)
    with pytest.raises(KernelUnavailable, match="cannot pack this shape"):
        quantize_model(model, "int8", "cpu")
    assert not quantized_layers(model)
    assert type(model.model.encoder[0]) is nn.Linear and type(model.model.decoder[0]) is nn.Linear


def test_rows_are_quantised_block_by_block_as_in_one_pass():
    from executors.core.int8 import ROWS_PER_BLOCK, quantize_rows

    weight = torch.randn(2 * ROWS_PER_BLOCK + 37, 48, generator=torch.Generator().manual_seed(5)) * 0.05
    weight[ROWS_PER_BLOCK] = 0.0   # a row of zeros keeps its smallest scale instead of dividing by zero
    weight[-1, 3] = 2.0            # an outlier sets only its own row's scale
    scales = weight.abs().amax(dim=1).clamp(min=1e-8) / 127.0
    expected = torch.round(weight / scales[:, None]).clamp(-127, 127).to(torch.int8)
    got, got_scales = quantize_rows(weight)
    assert got.dtype == torch.int8 and torch.equal(got_scales, scales)
    assert torch.equal(got, expected)
    assert got[-1, 3] == 127 and bool((got[ROWS_PER_BLOCK] == 0).all())
