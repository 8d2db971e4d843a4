"""Our Whisper network (``executors/whisper/network.py``) against transformers' on the same weights.

The encoder must give bit-identical outputs, in float32 and after our int8 quantisation of both,
since every transcript depends on it; the decoder's modules must hold the same tensors under the
same names, because ``WhisperRuntime`` and the quantiser address them by name.
"""

from __future__ import annotations

import pytest
import torch

from executors.core.device import resolve_device
from executors.models.store import resolve_model
from executors.whisper.features import LogMel
from executors.whisper.network import load_network
from executors.whisper.quantize import quantize_model


@pytest.fixture(scope="module")
def pair():
    from transformers import GenerationConfig, WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration

    folder = resolve_model("whisper-tiny.en").path
    reference = WhisperForConditionalGeneration.from_pretrained(folder, dtype=torch.float32,
                                                                attn_implementation="sdpa").eval()
    ours = load_network(folder, WhisperConfig.from_pretrained(folder), GenerationConfig.from_pretrained(folder),
                        torch.float32, torch.device("cpu"))
    return reference, ours, LogMel(WhisperFeatureExtractor.from_pretrained(folder), torch.device("cpu"))


def _features(log_mel, speech_dir, names):
    import soundfile as sf

    windows = []
    for name in names:
        audio, rate = sf.read(str(speech_dir / name), dtype="float32")
        assert rate == 16000
        windows.append(log_mel.window(audio)[0])
    return torch.stack(windows)


def test_the_same_tensors_under_the_same_names(pair):
    reference, ours, _ = pair
    want, got = reference.state_dict(), ours.state_dict()
    assert sorted(got) == sorted(want)
    assert all(torch.equal(got[k], want[k]) for k in want)
    assert ours.proj_out.weight is ours.model.decoder.embed_tokens.weight  # tied, as in the checkpoint


@pytest.mark.parametrize("encoder", ["float32", "int8", "bfloat16"])
def test_encoder_output_is_bit_identical(pair, speech_dir, encoder, monkeypatch):
    """transformers' encoder and ours, as loaded and as quantised (int8 linears; or, with FERRUM_CPU_BF16=1,
    matmuls in bfloat16, which transformers' module runs under torch.autocast)."""
    import contextlib
    import copy

    reference, ours, log_mel = pair
    choice = resolve_device("cpu", "auto", None)
    monkeypatch.setenv("FERRUM_CPU_BF16", "1" if encoder == "bfloat16" else "0")
    if encoder != "float32":
        reference, _ = quantize_model(copy.deepcopy(reference), "int8", choice)
        ours, _ = quantize_model(copy.deepcopy(ours), "int8", choice)
    same_matmuls = (torch.autocast("cpu", dtype=torch.bfloat16) if encoder == "bfloat16"
                    else contextlib.nullcontext())
    clips = sorted(p.relative_to(speech_dir).as_posix() for p in speech_dir.rglob("*.flac"))[:3]
    features = _features(log_mel, speech_dir, clips)
    with torch.inference_mode():
        with same_matmuls:
            want = reference.model.encoder(features).last_hidden_state.float()
        got = ours.model.encoder(features)
    assert got.shape == want.shape == (len(clips), 1500, ours.config.d_model)
    assert torch.equal(got, want)


def test_a_short_window_encodes_as_transformers_layers_do(pair, speech_dir):
    """Live dictation encodes only the frames it has (the positional embedding sliced to them)."""
    import torch.nn.functional as F

    reference, ours, log_mel = pair
    clip = sorted(speech_dir.rglob("*.flac"))[0]
    features = _features(log_mel, speech_dir, [clip.relative_to(speech_dir).as_posix()])[..., :400]  # 4 s
    enc = reference.model.encoder
    with torch.inference_mode():
        x = F.gelu(enc.conv2(F.gelu(enc.conv1(features)))).permute(0, 2, 1)
        x = x + enc.embed_positions.weight[: x.shape[1]]
        for layer in enc.layers:
            x = layer(x, None)
        want = enc.layer_norm(x)
        got = ours.model.encoder(features)
    assert got.shape == (1, 200, ours.config.d_model)
    assert torch.equal(got, want)
