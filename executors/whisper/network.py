"""Whisper's encoder-decoder as plain torch modules, loaded straight from safetensors.

The module tree and parameter names are those of transformers' ``WhisperForConditionalGeneration``
(``model.encoder.layers.0.self_attn.q_proj``, ``proj_out`` …), so a Hugging Face checkpoint loads
as-is and the quantiser finds its layers by the same names. The encoder's forward repeats
transformers' SDPA path operation for operation (queries scaled before the attention call, which
then scales by 1.0), so its output is bit-identical; ``tests/test_whisper_network.py`` checks that
against transformers. The decoder has no forward here: ``forward.WhisperRuntime`` runs its layers.

Why not transformers' class: importing its Whisper modelling code pulls in torch's compiler and
distributed-tensor stacks, 2.3 s of every process start on the development machine, for a model
this file describes in a page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from ..core.errors import ModelError


def _linear(n_in: int, n_out: int, bias: bool = True) -> nn.Linear:
    """An ``nn.Linear`` whose tensors are allocated, not initialised: the checkpoint fills them
    (random initialisation of tiny.en's layers alone took 0.36 s)."""
    layer = nn.Linear(1, 1, bias=bias)
    layer.in_features, layer.out_features = n_in, n_out
    layer.weight = nn.Parameter(torch.empty(n_out, n_in))
    if bias:
        layer.bias = nn.Parameter(torch.empty(n_out))
    return layer


def _embedding(n: int, d: int, padding_idx: int | None = None) -> nn.Embedding:
    return nn.Embedding(n, d, padding_idx, _weight=torch.empty(n, d))


class _Attention(nn.Module):
    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.scaling = self.head_dim ** -0.5
        self.k_proj = _linear(d_model, d_model, bias=False)
        self.v_proj = _linear(d_model, d_model)
        self.q_proj = _linear(d_model, d_model)
        self.out_proj = _linear(d_model, d_model)
        # q, k and v side by side in one call, where the runtime made one (forward.WhisperRuntime)
        self.qkv: Callable[[torch.Tensor], torch.Tensor] | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Self-attention without a mask (the encoder's), [B, T, d] -> [B, T, d]."""
        shape = (x.shape[0], -1, self.heads, self.head_dim)
        if self.qkv is None:
            q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        else:
            q, k, v = self.qkv(x).split(self.heads * self.head_dim, dim=-1)
        q = (q * self.scaling).view(shape).transpose(1, 2).contiguous()
        k = k.view(shape).transpose(1, 2).contiguous()
        v = v.view(shape).transpose(1, 2).contiguous()
        out = F.scaled_dot_product_attention(q, k, v, scale=1.0)
        return self.out_proj(out.transpose(1, 2).contiguous().reshape(*x.shape[:-1], -1).contiguous())


class _Block(nn.Module):
    """What encoder and decoder layers share: self-attention and the MLP, each after a layer norm."""

    def __init__(self, d_model: int, heads: int, ffn: int):
        super().__init__()
        self.self_attn = _Attention(d_model, heads)
        self.self_attn_layer_norm = nn.LayerNorm(d_model)
        self.fc1 = _linear(d_model, ffn)
        self.fc2 = _linear(ffn, d_model)
        self.final_layer_norm = nn.LayerNorm(d_model)


class _EncoderLayer(_Block):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.self_attn_layer_norm(x))
        x = x + self.fc2(F.gelu(self.fc1(self.final_layer_norm(x))))
        if x.dtype == torch.float16:  # as the reference: keep float16 activations finite
            limit = torch.finfo(x.dtype).max - 1000
            x = torch.clamp(x, min=-limit, max=limit)
        return x


class _DecoderLayer(_Block):
    """Its steps run in ``forward.WhisperRuntime``; here only the parameters."""

    def __init__(self, d_model: int, heads: int, ffn: int):
        super().__init__(d_model, heads, ffn)
        self.encoder_attn = _Attention(d_model, heads)
        self.encoder_attn_layer_norm = nn.LayerNorm(d_model)


class WhisperEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg.d_model
        self.conv1 = nn.Conv1d(cfg.num_mel_bins, d, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(d, d, kernel_size=3, stride=2, padding=1)
        self.embed_positions = _embedding(cfg.max_source_positions, d)
        self.layers = nn.ModuleList([_EncoderLayer(d, cfg.encoder_attention_heads, cfg.encoder_ffn_dim)
                                     for _ in range(cfg.encoder_layers)])
        self.layer_norm = nn.LayerNorm(d)
        # Set by quantize.bfloat16_matmuls: convolutions, linears and attention then multiply in this
        # dtype (torch.autocast), while the residual stream, layer norms and the output stay float32.
        self.matmul_dtype: torch.dtype | None = None

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """[B, n_mels, 2T] log-mel -> [B, T, d]: a full window has T = 1500; fewer frames encode only
        the audio there is (live dictation's short windows, as whisper.cpp's ``audio_ctx``)."""
        if self.matmul_dtype is None:
            return self._forward(features)
        with torch.autocast(features.device.type, dtype=self.matmul_dtype):
            return self._forward(features.float()).float()

    def _forward(self, features: torch.Tensor) -> torch.Tensor:
        x = F.gelu(self.conv2(F.gelu(self.conv1(features)))).permute(0, 2, 1)
        x = x + self.embed_positions.weight[: x.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.layer_norm(x)


class WhisperDecoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg.d_model
        self.embed_tokens = _embedding(cfg.vocab_size, d, cfg.pad_token_id)
        self.embed_positions = _embedding(cfg.max_target_positions, d)
        self.layers = nn.ModuleList([_DecoderLayer(d, cfg.decoder_attention_heads, cfg.decoder_ffn_dim)
                                     for _ in range(cfg.decoder_layers)])
        self.layer_norm = nn.LayerNorm(d)


class _Body(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.encoder = WhisperEncoder(cfg)
        self.decoder = WhisperDecoder(cfg)


class WhisperNetwork(nn.Module):
    """``.model.encoder``, ``.model.decoder``, ``.proj_out`` (tied to the token embedding), ``.config``."""

    def __init__(self, cfg, generation_config=None):
        super().__init__()
        self.config = cfg
        self.generation_config = generation_config
        self.model = _Body(cfg)
        self.proj_out = _linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.proj_out.weight = self.model.decoder.embed_tokens.weight


def _safetensors_files(folder: Path) -> list[Path]:
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        return [folder / name for name in shards]
    single = folder / "model.safetensors"
    if single.is_file():
        return [single]
    raise ModelError(f"No safetensors weights in {folder}",
                     "Ferrum only loads safetensors; convert or re-export the model with safetensors")


def load_network(folder: Path, cfg, generation_config, dtype: torch.dtype, device: torch.device) -> WhisperNetwork:
    """The network of ``folder`` (its ``config.json`` already read into ``cfg``), in eval mode."""
    from safetensors.torch import load_file

    net = WhisperNetwork(cfg, generation_config)
    state: dict[str, torch.Tensor] = {}
    for path in _safetensors_files(folder):
        state.update(load_file(str(path)))
    if not any(k.startswith("model.") for k in state):  # a bare WhisperModel export
        state = {f"model.{k}": v for k, v in state.items()}
    expected = set(net.state_dict()) - {"proj_out.weight"}  # tied to the token embedding, not read
    missing = sorted(expected - state.keys())
    if missing:
        raise ModelError(f"The Whisper weights in {folder} lack {len(missing)} tensors (first: {missing[0]})",
                         "check the folder is a complete Hugging Face Whisper export")
    # copies, also where the dtype already matches: a tensor left on safetensors' memory map keeps the
    # whole file mapped, and its pages resident once read, after quantisation has replaced it
    net.load_state_dict({k: state[k].to(device=device, dtype=dtype, copy=True) for k in expected},
                        strict=False, assign=True)
    net.proj_out.weight = net.model.decoder.embed_tokens.weight  # assign=True replaced the tied parameter
    return net.to(device=device, dtype=dtype).eval()
