"""The decoder step's TorchScript layers (``scripted_step``) give the Python step's results bit for bit, for
one window, several, best-of rows sharing one window and bfloat16 cross-attention K/V (alone and shared);
models and kernels they do not cover keep the Python step."""

from __future__ import annotations

import contextlib

import pytest
import soundfile as sf
import torch

from executors.whisper import scripted_step


def _windows(ex, speech_dir, names):
    windows = []
    for name in names:
        audio, _ = sf.read(str(speech_dir / name), dtype="float32")
        windows.append(ex.log_mel.window(audio)[0])
    return ex.runtime.encode_cached(windows)[0]


@torch.inference_mode()
def _decode(ex, encoded, steps=12, fast=False):
    """Hidden states of a prompt (previous text, so it runs as one pass of several tokens) and ``steps``
    one-token steps (each row its own tokens)."""
    runtime = ex.runtime
    with runtime.fast_cross_attention() if fast else contextlib.nullcontext():
        store = runtime.new_store(encoded)
    prompt = torch.tensor([ex.tokens.prompt([464, 6193, 318], None, "transcribe")] * encoded.shape[0])
    hidden = [runtime.step(store, prompt)[:, -1:]]
    for _ in range(steps):
        # a different token per row from the second step on, so that rows sharing K/V still differ
        tokens = runtime.logits(hidden[-1][:, -1]).topk(encoded.shape[0], dim=-1).indices.diagonal()[:, None]
        hidden.append(runtime.step(store, tokens))
    return torch.cat(hidden, dim=1)


@pytest.mark.parametrize("case", ["one window", "two windows", "best-of rows", "bfloat16 K/V", "bfloat16 best-of"])
def test_scripted_layers_give_the_python_step_bit_for_bit(whisper_tiny_int8, speech_dir, case):
    ex = whisper_tiny_int8
    assert ex.runtime.scripted is not None and len(ex.runtime.scripted) == 4   # the int8 default runs them
    names = ["asterisk/activated.flac", "asterisk/confbridge-invalid.flac"]
    encoded = _windows(ex, speech_dir, names if case == "two windows" else names[:1])
    if "best-of" in case:
        encoded = encoded.expand(3, -1, -1)
    fast = case.startswith("bfloat16")
    scripted = _decode(ex, encoded, fast=fast)
    with ex.runtime.python_steps():
        python = _decode(ex, encoded, fast=fast)
    assert scripted.shape == (encoded.shape[0], 13, 384)
    assert torch.equal(scripted, python)


def test_the_scripted_step_is_used_for_one_token_steps(whisper_tiny_int8, speech_dir, monkeypatch):
    calls = []
    layer = type(whisper_tiny_int8.runtime.scripted[0])
    call = layer.__call__
    monkeypatch.setattr(layer, "__call__", lambda self, *a: calls.append(a[0].shape) or call(self, *a))
    _decode(whisper_tiny_int8, _windows(whisper_tiny_int8, speech_dir, ["asterisk/activated.flac"]), steps=3)
    assert calls == [(1, 1, 384)] * 4 * 3   # not the prompt: four layers for each of three steps


def test_float_models_keep_the_python_step(whisper_tiny, whisper_tiny_int8):
    from executors.core.device import cpu_multiplies_bfloat16

    assert whisper_tiny.runtime.scripted is None
    # what `ferrum info` says of each
    assert whisper_tiny.info().metadata["decoder_step"] == {
        "one_token_layers": "python", "cross_kv": "float32", "cross_kv_fast_long_files": "float32"}
    assert whisper_tiny_int8.info().metadata["decoder_step"] == {
        "one_token_layers": "torchscript", "cross_kv": "float32",
        "cross_kv_fast_long_files": "bfloat16" if cpu_multiplies_bfloat16() else "float32"}


def test_this_torch_compiles_the_layer():
    assert scripted_step.runs_compiled()   # where it cannot, the layer runs from Python (the same results)


def test_a_function_torchscript_cannot_compile_runs_from_python(monkeypatch, caplog):
    from executors.whisper import torchscript

    def refuse(function):
        raise RuntimeError("TorchScript is gone from this torch")

    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    monkeypatch.setattr(torch.jit, "script", refuse)
    with caplog.at_level("WARNING"):
        runs = torchscript.compiled(double)
    assert runs is double and not torchscript.is_compiled(double)
    assert torch.equal(runs(torch.ones(3)), torch.full((3,), 2.0))
    assert "TorchScript is gone" in caplog.text and "runs from Python" in caplog.text
