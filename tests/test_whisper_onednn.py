"""The layers that take a whole window per call run on oneDNN's int8 matmul where the CPU has AMX tiles:
the same bits as fbgemm's, so switching kernels changes no text."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from executors.whisper import fbgemm, onednn
from executors.whisper.int8_linear import RowInt8Linear
from executors.whisper.quantize import many_rows_kernel, quantize_int8, quantized_layers, takes_many_rows

needs_onednn = pytest.mark.skipif(onednn.problem() is not None,
                                  reason="oneDNN's int8 matmul is missing or inexact in this torch on this CPU")


@needs_onednn
@pytest.mark.parametrize("shape", [(1500, 384, 1152), (1500, 1536, 384), (37, 384, 1536), (1, 384, 384)])
def test_onednn_gives_fbgemms_bits(shape):
    rows, n_in, n_out = shape
    torch.manual_seed(rows + n_in)
    linear = nn.Linear(n_in, n_out)
    on_fbgemm = RowInt8Linear.from_linear(linear, fbgemm)
    on_onednn = RowInt8Linear.from_linear(linear, onednn)
    x = torch.randn(rows, n_in) * torch.logspace(-2, 1, rows)[:, None] + torch.linspace(-2, 3, rows)[:, None]
    assert torch.equal(on_onednn(x), on_fbgemm(x))
    for grid in (False, True):   # the kernels alone, on a whole input's range, 8- and 7-bit grids
        got = onednn.linear(x, on_onednn._packed, grid)
        assert torch.equal(got, fbgemm.linear(x, fbgemm.pack(on_fbgemm.weight_int8, on_fbgemm.scales), grid))


def test_only_the_layers_that_take_a_window_run_on_the_many_rows_kernel(whisper_tiny_int8):
    layers = quantized_layers(whisper_tiny_int8.model)
    many = {name for name in layers if takes_many_rows(name)}
    int8_encoder = whisper_tiny_int8.model.model.encoder.matmul_dtype is None   # not FERRUM_CPU_BF16=1
    # the encoder's linears but its last fc2 (float), and the cross-attention K, V of each decoder layer
    assert len(many) == (4 * 6 - 1 if int8_encoder else 0) + 4 * 2
    assert all(".encoder." in name or name.endswith(("encoder_attn.k_proj", "encoder_attn.v_proj")) for name in many)
    chosen = many_rows_kernel()
    assert chosen is (onednn if onednn.wanted() and onednn.problem() is None else fbgemm)
    for name, layer in layers.items():
        assert layer.kernel is (chosen if name in many else fbgemm), name
    assert whisper_tiny_int8.info().metadata["int8_kernels"] == {   # what `ferrum info` shows
        "window layers": chosen.__name__.rsplit(".", 1)[-1], "decoder steps": "fbgemm"}


@needs_onednn
def test_amx_picks_onednn_and_other_cpus_keep_fbgemm(monkeypatch):
    for amx, expected in ((True, onednn), (False, fbgemm)):
        monkeypatch.setattr(onednn, "wanted", lambda amx=amx: amx)
        model = _encoder_and_decoder_linear()
        quantize_int8(model, ("encoder_first", "decoder_attention"))
        assert model.model.encoder.layers[0].fc1.kernel is expected
        assert model.model.decoder.layers[0].self_attn.q_proj.kernel is fbgemm


def test_the_encoder_gives_the_same_bits_on_either_kernel_and_with_q_k_v_fused(speech_dir, monkeypatch):
    """A real window through the loaded model's encoder, then again with each encoder layer's q, k and
    v called one by one on fbgemm: identical output."""
    monkeypatch.delenv("FERRUM_CPU_BF16", raising=False)   # the int8 encoder
    from executors.audio.decode import load_audio
    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor

    ex = WhisperModelExecutor.from_path(resolve_model("whisper-tiny.en", kind="whisper").path, device="cpu",
                                        quantize="int8")
    audio = load_audio(sorted((speech_dir / "pocketsphinx").iterdir())[0])
    features = ex.log_mel.window(audio)[0][None]
    default = ex.runtime.encode(features)
    encoder_layers = ex.runtime.encoder.layers
    assert all(layer.self_attn.qkv is not None for layer in encoder_layers)
    for layer in encoder_layers:
        layer.self_attn.qkv = None
    for layer in quantized_layers(ex.runtime.encoder).values():
        layer.kernel = fbgemm
        layer._pack()
    assert torch.equal(ex.runtime.encode(features), default)


def _encoder_and_decoder_linear() -> nn.Module:
    from types import SimpleNamespace

    model = nn.Module()
    model.config = SimpleNamespace(encoder_layers=2)
    model.model = nn.Module()
    model.model.encoder = nn.Module()
    model.model.decoder = nn.Module()
    encoder_layer, decoder_layer = nn.Module(), nn.Module()
    encoder_layer.fc1 = nn.Linear(64, 64)
    decoder_layer.self_attn = nn.Module()
    decoder_layer.self_attn.q_proj = nn.Linear(64, 64)
    model.model.encoder.layers = nn.ModuleList([encoder_layer])
    model.model.decoder.layers = nn.ModuleList([decoder_layer])
    return model
