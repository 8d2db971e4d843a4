"""The model's forward passes: the encoder (with an LRU cache of its outputs) and one decoder step
over a static ``KvStore``.

The decoder step reuses the loaded model's own modules (so quantised linears plug in unchanged)
but keeps K/V in preallocated tensors and computes attention itself: per step there is no cache object
bookkeeping, no mask building for the common equal-length case and no logits for prompt positions
nobody reads.
"""

from __future__ import annotations

import contextlib
import threading

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from ..core.device import bfloat16_attention_wanted
from ..core.errors import ResourceExhaustedError
from .cpu_attention import cpu_attention
from .encoder_cache import EncoderCache, feature_key
from .int8_linear import RowInt8Linear
from .kv import KvStore, LiveStores
from .projections import direct, fused, token_step
from .scripted_step import runs_compiled, scripted_layers


class WhisperRuntime:
    def __init__(self, model, encoder_cache_entries: int = 8, max_batch: int = 16):
        cfg = model.config
        self.model = model
        self.encoder = model.model.encoder
        self.decoder = model.model.decoder
        self.proj_out = model.proj_out
        self.heads = cfg.decoder_attention_heads
        self.d_model = cfg.d_model
        self.head_dim = cfg.d_model // cfg.decoder_attention_heads
        self.n_ctx = cfg.max_target_positions
        self.n_audio_ctx = cfg.max_source_positions
        self.n_frames = cfg.max_source_positions * 2  # two stride-1/stride-2 convolutions: 3000 frames
        self.encoder_cache = EncoderCache(encoder_cache_entries)
        self.live = LiveStores(max_batch)  # every KV store made below, for memory and the batch limit
        # The decoder's key length grows by one every step; cuDNN attention builds a new plan per
        # shape, so on CUDA the step keeps to the flash / memory-efficient / math kernels.
        self._cuda_sdpa = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
        self._vocab = direct(self.proj_out)
        int8 = isinstance(self.decoder.layers[0].fc1, RowInt8Linear)
        self._fast_cross_dtype = cross_attention_dtype(self.device, self.dtype, int8)
        self._local = threading.local()  # the K/V dtype of stores this thread makes (fast_cross_attention)
        self._layers = [_LayerCalls(layer) for layer in self.decoder.layers]
        # one-token steps of every row at the same position run each layer as a TorchScript function
        # (``scripted_step``; None: the Python loop of ``_step`` runs them, as it does every other step)
        on_cpu = self.device.type == "cpu"
        self.scripted = scripted_layers(self.decoder.layers, self._layers, self.heads) if on_cpu else None
        self._encoder_qkv = [_fuse_int8_qkv(layer.self_attn) for layer in self.encoder.layers]
        self._cross_kv = _fuse_int8_cross_kv(self.decoder.layers)

    @property
    def packed_bytes(self) -> int:
        """Kernel-packed weights the runtime made beside the model's own (the fused layers of int8 models)."""
        fused = [layer for layer in [*self._encoder_qkv, self._cross_kv] if layer is not None]
        return sum(calls.packed_bytes for calls in self._layers) + sum(layer.packed_bytes for layer in fused)

    @property
    def device(self) -> torch.device:
        return self.proj_out.weight.device

    @property
    def dtype(self) -> torch.dtype:
        """The activations' dtype: the encoder's output and the decoder's (its matmuls may differ)."""
        return self.decoder.layer_norm.weight.dtype

    # -- encoder -----------------------------------------------------------------------------
    @torch.inference_mode()
    def encode(self, features: torch.Tensor) -> torch.Tensor:
        """[B, n_mels, 3000] log-mel -> [B, 1500, d] encoder output (no caching)."""
        x = features.to(self.device, self.dtype)
        return self.encoder(x)

    def encode_cached(self, windows: list[torch.Tensor]) -> tuple[torch.Tensor, list[str]]:
        """Encode several windows ([n_mels, 3000] each) in one pass, reusing cached outputs."""
        keys = [feature_key(w) for w in windows]
        outs: list[torch.Tensor | None] = [self.encoder_cache.get(k) for k in keys]
        missing = [i for i, o in enumerate(outs) if o is None]
        # On the CPU a window is encoded alone: eight 30 s windows at once took 0.7 s a window against
        # 0.4 s one by one (their activations no longer fit the caches).  GPUs take them in one pass.
        step = 1 if self.device.type == "cpu" else max(1, len(missing))
        for at in range(0, len(missing), step):
            chunk = missing[at:at + step]
            fresh = self.encode(torch.stack([windows[i] for i in chunk]))
            for j, i in enumerate(chunk):
                outs[i] = fresh[j:j + 1]
                self.encoder_cache.put(keys[i], outs[i])
        return torch.cat(outs, dim=0), keys

    # -- decoder -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def fast_cross_attention(self):
        """KV stores this thread makes inside the block keep cross-attention K/V in bfloat16 where
        ``cross_attention_dtype`` allows (else nothing changes).  For windows decoded without a prompt
        (``--fast-long-files``), where the WER did not move; the sequential path keeps float32 (README "Devices")."""
        previous = getattr(self._local, "cross_dtype", None)
        self._local.cross_dtype = self._fast_cross_dtype
        try:
            yield
        finally:
            self._local.cross_dtype = previous

    @contextlib.contextmanager
    def python_steps(self):
        """Inside the block one-token steps run from Python, as without ``scripted``: the reference the scripted
        layers are tested and measured against (not for concurrent use)."""
        scripted, self.scripted = self.scripted, None
        try:
            yield
        finally:
            self.scripted = scripted

    def describe_step(self) -> dict[str, str]:
        """How a decoder step runs (``ferrum info``): the one-token layers' code and the cross-attention K/V
        dtypes of the sequential path and of ``fast_cross_attention`` blocks."""
        scripted = self.scripted is not None and runs_compiled()
        return {"one_token_layers": "torchscript" if scripted else "python",
                "cross_kv": str(self.dtype).replace("torch.", ""),
                "cross_kv_fast_long_files": str(self._fast_cross_dtype).replace("torch.", "")}

    @property
    def cross_dtype(self) -> torch.dtype:
        """The dtype of cross-attention K/V in the stores this thread makes now."""
        return getattr(self._local, "cross_dtype", None) or self.dtype

    @torch.inference_mode()
    def new_store(self, encoder_out: torch.Tensor) -> KvStore:
        """Empty self-attention cache plus cross-attention K/V of ``encoder_out`` [B, T, d].

        Rows that share one encoder output (an expanded view, as for best-of sampling) share one
        copy of its cross-attention K/V.
        """
        batch = encoder_out.shape[0]
        self.live.check_batch(batch)
        shared = batch > 1 and encoder_out.stride(0) == 0
        src = encoder_out[:1] if shared else encoder_out
        cross_k, cross_v = self._cross_attention_kv(src, self.cross_dtype)
        if shared:
            cross_k = [k.expand(batch, -1, -1, -1) for k in cross_k]
            cross_v = [v.expand(batch, -1, -1, -1) for v in cross_v]
        shape = (batch, self.heads, self.n_ctx, self.head_dim)
        self_k = [torch.zeros(shape, dtype=src.dtype, device=src.device) for _ in cross_k]
        self_v = [torch.zeros(shape, dtype=src.dtype, device=src.device) for _ in cross_k]
        return self.live.add(KvStore(self_k, self_v, cross_k, cross_v, [0] * batch, encoder_out))

    def _cross_attention_kv(self, src: torch.Tensor, dtype: torch.dtype) -> tuple[list, list]:
        """Each decoder layer's cross-attention K and V of ``src`` [B, T, d] as contiguous [B, H, T, hd] in
        ``dtype`` (attention on the CPU would otherwise copy strided K/V at every step)."""
        layers = self.decoder.layers
        if self._cross_kv is None:
            pairs = [(layer.encoder_attn.k_proj(src), layer.encoder_attn.v_proj(src)) for layer in layers]
            return ([_contiguous_as(self._heads(k), dtype) for k, _ in pairs],
                    [_contiguous_as(self._heads(v), dtype) for _, v in pairs])
        b, t, d = src.shape
        ks, vs = ([torch.empty(b, self.heads, t, self.head_dim, dtype=dtype, device=src.device) for _ in layers]
                  for _ in range(2))
        for w in range(b):  # a window at a time: its [T, 2 x layers x d] output stays small
            kv = self._cross_kv(src[w:w + 1])
            for i, (k, v) in enumerate(zip(ks, vs)):
                k[w] = self._heads(kv[..., 2 * i * d:(2 * i + 1) * d])[0]
                v[w] = self._heads(kv[..., (2 * i + 1) * d:(2 * i + 2) * d])[0]
        return ks, vs

    def step(self, store: KvStore, input_ids: torch.Tensor) -> torch.Tensor:
        kernels = sdpa_kernel(self._cuda_sdpa) if self.device.type == "cuda" else contextlib.nullcontext()
        with kernels:
            return self._step(store, input_ids)

    @torch.inference_mode()
    def _step(self, store: KvStore, input_ids: torch.Tensor) -> torch.Tensor:
        """Append ``input_ids`` [B, q] to every row of ``store``; returns hidden states [B, q, d].

        Each row continues at its own length; rows shorter than others are masked, so ragged
        batches (different prompts, rolled-back handles) share the pass.
        """
        batch, q = input_ids.shape
        lengths = store.lengths
        first = lengths[0]
        uniform = all(n == first for n in lengths)
        if max(lengths) + q > store.capacity:
            raise ResourceExhaustedError(
                f"The decoder context is full ({store.capacity} tokens)",
                "shorten the prompt or roll the cache back with truncate_kv")
        dev = self.device
        dec = self.decoder
        x = dec.embed_tokens(input_ids.to(dev))
        if uniform:
            kmax = first + q
            x = x + dec.embed_positions.weight[first:kmax]
            mask = None if q == 1 else torch.ones(q, kmax, dtype=torch.bool, device=dev).tril(first)[None]
        else:
            pos = torch.tensor(lengths, device=dev)[:, None] + torch.arange(q, device=dev)[None, :]
            kmax = max(lengths) + q
            mask = (torch.arange(kmax, device=dev)[None, None, :] <= pos[:, :, None]).unsqueeze(1)
            rows = torch.arange(batch, device=dev)[:, None].expand(batch, q)
            x = x + dec.embed_positions.weight[pos]
        if uniform and q == 1 and self.scripted is not None:
            for i, layer in enumerate(self.scripted):
                x = layer(x, store.self_k[i], store.self_v[i], first, store.cross_k[i], store.cross_v[i])
            store.lengths = [n + 1 for n in lengths]
            return dec.layer_norm(x)
        d = self.d_model
        for i, (layer, calls) in enumerate(zip(dec.layers, self._layers)):
            qkv = calls.self_qkv(layer.self_attn_layer_norm(x))
            qs = self._heads(qkv[..., :d] * calls.self_scaling)
            k, v = self._heads(qkv[..., d:2 * d]), self._heads(qkv[..., 2 * d:])
            keys, vals = store.self_k[i], store.self_v[i]
            if uniform:
                keys[:, :, first:kmax] = k
                vals[:, :, first:kmax] = v
            else:
                keys[rows, :, pos] = k.transpose(1, 2)
                vals[rows, :, pos] = v.transpose(1, 2)
            o = self._attend(qs, keys[:, :, :kmax], vals[:, :, :kmax], mask)
            x = x + calls.self_out(self._merge(o))
            h = layer.encoder_attn_layer_norm(x)
            o = self._attend(self._heads(calls.cross_q(h) * calls.cross_scaling), store.cross_k[i], store.cross_v[i])
            x = x + calls.cross_out(self._merge(o))
            x = x + calls.fc2(F.gelu(calls.fc1(layer.final_layer_norm(x))))
        store.lengths = [n + q for n in lengths]
        return dec.layer_norm(x)

    @torch.inference_mode()
    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self._vocab(hidden).float()

    def _attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        """Attention of [B, H, q, hd] queries (already scaled) over [B, H, k, hd] keys and values; on the
        CPU as ``cpu_attention`` says why."""
        if self.device.type != "cpu":
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0)
        return cpu_attention(q, k, v, mask)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        b, q, _ = x.shape
        return x.view(b, q, self.heads, self.head_dim).transpose(1, 2)

    def _merge(self, x: torch.Tensor) -> torch.Tensor:
        b, _, q, _ = x.shape
        return x.transpose(1, 2).reshape(b, q, self.d_model)


def cross_attention_dtype(device: torch.device, dtype: torch.dtype, int8: bool) -> torch.dtype:
    """The dtype ``fast_cross_attention`` keeps cross-attention K/V in.  They are the largest thing a
    decoder step reads (18 MB a window for tiny.en in float32, more than its int8 weights), so where the CPU
    multiplies bfloat16 in hardware an ``int8`` decoder keeps them in bfloat16 (README "Devices"); a float
    model keeps its own dtype, the reference the int8 model is measured against."""
    if int8 and device.type == "cpu" and dtype == torch.float32 and bfloat16_attention_wanted():
        return torch.bfloat16
    return dtype


def _contiguous_as(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``x`` contiguous in ``dtype``, copied once (``Tensor.to`` with the same dtype returns ``x`` as it is,
    strides and all, even when asked for the contiguous format)."""
    return x.contiguous() if x.dtype == dtype else x.to(dtype, memory_format=torch.contiguous_format)


def _fuse_int8_qkv(attention) -> RowInt8Linear | None:
    """An encoder layer's int8 q, k and v as one layer (one kernel call instead of three)."""
    qkv = _fuse_int8([attention.q_proj, attention.k_proj, attention.v_proj])
    if qkv is not None:
        attention.qkv = qkv.forward
    return qkv


def _fuse_int8_cross_kv(layers) -> RowInt8Linear | None:
    """Every decoder layer's int8 cross-attention k and v as one layer over the encoder output (one kernel call
    a window instead of eight: 5.6 ms instead of 11.5 ms for a 30 s window, eight windows in 102 ms instead of
    179 ms)."""
    return _fuse_int8([proj for layer in layers for proj in (layer.encoder_attn.k_proj, layer.encoder_attn.v_proj)])


def _fuse_int8(parts) -> RowInt8Linear | None:
    """``parts`` (int8 layers of one input) as one layer: the input's rows quantised once, the same results;
    None where any part is a float layer (it stays as it is)."""
    if not all(isinstance(p, RowInt8Linear) for p in parts):
        return None
    return fused(parts).layer


class _LayerCalls:
    """One decoder layer's projections as direct calls (see ``projections``)."""

    def __init__(self, layer):
        sa, ca = layer.self_attn, layer.encoder_attn
        qkv = fused([sa.q_proj, sa.k_proj, sa.v_proj], token_rows=True)
        self.self_qkv = qkv.call
        self.qkv_layer = qkv.layer  # the int8 layer made for the fused call (None for float layers)
        self.packed_bytes = qkv.layer.packed_bytes if qkv.layer is not None else 0  # outside the model
        self.self_scaling, self.cross_scaling = sa.scaling, ca.scaling
        self.self_out, self.cross_q = token_step(sa.out_proj), token_step(ca.q_proj)
        self.cross_out, self.fc1, self.fc2 = token_step(ca.out_proj), token_step(layer.fc1), token_step(layer.fc2)
