"""The executor contract for Whisper: prefill/decode over KV handles that hold the encoder output,
batched variants in one forward pass, rollback, draft verification, live status and metrics.

The async methods run their torch work on a worker thread (``asyncio.to_thread``), never on the
caller's event loop; the executor's lock keeps them in turn with a running transcription."""

from __future__ import annotations

import asyncio

import torch
import torch.nn.functional as F

from ..core import verified
from ..core.device import available_devices
from ..core.errors import InvalidParameterError
from ..core.types import (
    CacheMetricsSnapshot,
    DecodeInput,
    DecodeOutput,
    ExecutorCapabilities,
    ExecutorState,
    ExecutorStatus,
    KvCapacity,
    MemoryRequirements,
    ModelInfo,
    ModelType,
    PrefillInput,
    PrefillOutput,
    VerifyInput,
    VerifyOutput,
)
from .kv import KvStore, WhisperKvHandle
from .quantize import int8_kernels


class WhisperContractMixin:
    # -- description ---------------------------------------------------------------------------
    def info(self) -> ModelInfo:
        cfg = self.config
        params = self.num_parameters
        return ModelInfo(
            model_id=self.model_id, model_type=ModelType.SPEECH_TO_TEXT, num_parameters=params,
            hidden_size=cfg.d_model, num_layers=cfg.decoder_layers, num_heads=cfg.decoder_attention_heads,
            num_kv_heads=cfg.decoder_attention_heads, vocab_size=cfg.vocab_size,
            max_sequence_length=self.tokens.n_ctx, dtype=self.device.dtype_name, device=self.device.name,
            metadata={"encoder_layers": cfg.encoder_layers, "n_mels": cfg.num_mel_bins,
                      "multilingual": self.is_multilingual, "languages": sorted(self.tokens.lang_to_id),
                      "quantized": self.quantized, "int8_fallback": self.int8_fallback,
                      "encoder_matmuls": str(self.model.model.encoder.matmul_dtype or self.quantized
                                             or self.device.dtype_name).replace("torch.", ""),
                      "int8_kernels": int8_kernels(self.model),
                      "decoder_step": self.runtime.describe_step(),
                      "attention": {"encoder": "sdpa", "decoder": "sdpa" if self.device.kind != "cpu" else "eager"},
                      "architecture": (getattr(cfg, "architectures", None) or [type(self.model).__name__])[0]})

    def capabilities(self) -> ExecutorCapabilities:
        cfg = self.config
        elem = torch.finfo(self.device.torch_dtype).bits // 8
        kv_per_token = 2 * cfg.decoder_layers * cfg.d_model * elem
        cross_per_sequence = 2 * cfg.decoder_layers * cfg.max_source_positions * cfg.d_model * elem
        claims = verified.claims(verified.WHISPER, self.device.kind, available_devices())
        return ExecutorCapabilities(
            # every KV store goes through runtime.live, which refuses more rows than this
            max_batch_size=self.max_batch_size, max_sequence_length=self.tokens.n_ctx,
            attention_mechanisms=claims.attention,
            # batches are what one caller passes (batch_prefill/batch_decode, batch_windows of one file,
            # transcribe_many); requests arriving apart are never merged into one batch
            supports_dynamic_batching=False, supports_continuous_batching=False,
            supports_speculative_decoding=True, supports_tensor_parallelism=False,
            supports_pipeline_parallelism=False, supported_dtypes=claims.dtypes, supported_devices=claims.devices,
            memory_requirements=MemoryRequirements(
                parameter_memory=self.stats.parameter_bytes,
                activation_memory_per_token=(cfg.d_model + cfg.decoder_ffn_dim) * elem,
                kv_cache_memory_per_token=kv_per_token,
                overhead_memory=cross_per_sequence + cfg.max_source_positions * cfg.d_model * elem))

    def status(self) -> ExecutorStatus:
        return self.stats.status()

    def kv_capacity(self) -> KvCapacity:
        return KvCapacity(max_tokens_per_sequence=self.tokens.n_ctx, active_sequences=len(self.handles),
                          used_tokens=self.handles.used_tokens())

    def cache_metrics_snapshot(self) -> CacheMetricsSnapshot:
        return CacheMetricsSnapshot({"encoder_output": self.encoder_cache.stats(),
                                     "kv_handles": self.handles.metrics()})

    # -- prefill -------------------------------------------------------------------------------
    def _encoder_output(self, inp: PrefillInput) -> tuple[torch.Tensor, str | None]:
        """The audio a prefill attends to: a handle whose encoder output to reuse, an encoder output
        or log-mel features."""
        meta = inp.metadata or {}
        reuse = meta.get("encoder_handle")
        if reuse is not None:
            handle = self.handles.check(reuse)
            return handle.encoder_output, handle.feature_key
        if meta.get("encoder_output") is not None:
            return meta["encoder_output"].to(self.runtime.device, self.runtime.dtype), None
        feats = meta.get("input_features")
        if feats is None:
            raise InvalidParameterError("prefill needs audio: metadata['input_features'] or an encoder handle",
                                        "pass log-mel features [n_mels, frames] or reuse a previous handle")
        feats = torch.as_tensor(feats)
        feats = feats[None] if feats.dim() == 2 else feats
        n_frames = self.runtime.n_frames
        if feats.shape[-1] < n_frames:
            feats = F.pad(feats, (0, n_frames - feats.shape[-1]))
        windows = list(feats[..., :n_frames].unbind(0))
        enc, keys = self.runtime.encode_cached(windows)
        return enc, keys[0] if len(keys) == 1 else None

    @staticmethod
    def _ids(ids: torch.Tensor) -> torch.Tensor:
        ids = torch.as_tensor(ids, dtype=torch.long)
        return ids[None] if ids.dim() == 1 else ids

    @staticmethod
    def _lengths(ids: torch.Tensor, mask: torch.Tensor | None) -> list[int]:
        if mask is None:
            return [ids.shape[1]] * ids.shape[0]
        return [int(n) for n in torch.as_tensor(mask).sum(dim=-1).tolist()]  # right padding

    async def prefill(self, input: PrefillInput) -> PrefillOutput:
        return (await self.batch_prefill([input]))[0]

    async def batch_prefill(self, inputs: list[PrefillInput]) -> list[PrefillOutput]:
        """New sequences in one encoder pass (cache misses only) and one decoder pass; an input with
        ``kv_cache`` set continues that handle instead (chunked prefill)."""
        return await asyncio.to_thread(self._batch_prefill, inputs)

    def _batch_prefill(self, inputs: list[PrefillInput]) -> list[PrefillOutput]:
        self._require_ready()
        with self._lock, self.stats.operation("prefill", len(inputs)):
            outputs: list[PrefillOutput | None] = [None] * len(inputs)
            fresh = [i for i, inp in enumerate(inputs) if inp.kv_cache is None]
            for i, inp in enumerate(inputs):
                if inp.kv_cache is not None:
                    outputs[i] = self._extend(inp)
            if fresh:
                for i, out in zip(fresh, self._prefill_new([inputs[i] for i in fresh])):
                    outputs[i] = out
            return outputs

    def _extend(self, inp: PrefillInput) -> PrefillOutput:
        handle = self.handles.check(inp.kv_cache)
        tok = self._ids(inp.input_ids)
        if tok.shape[0] != handle.batch:
            raise InvalidParameterError(f"{tok.shape[0]} prompt rows for a handle of {handle.batch} rows",
                                        "pass one row per sequence of the handle")
        store = self._store_for([handle])
        return PrefillOutput(self.runtime.logits(self.runtime.step(store, tok)), handle)

    def _prefill_new(self, inputs: list[PrefillInput]) -> list[PrefillOutput]:
        encs, keys, ids, lens = [], [], [], []
        for inp in inputs:
            tok = self._ids(inp.input_ids)
            enc, key = self._encoder_output(inp)
            if enc.shape[0] == 1 and tok.shape[0] > 1:
                enc = enc.expand(tok.shape[0], -1, -1)
            if enc.shape[0] != tok.shape[0]:
                raise InvalidParameterError(
                    f"{enc.shape[0]} audio windows for {tok.shape[0]} prompts",
                    "pass one window per prompt row, or one window for all rows")
            encs.append(enc)
            keys.append(key)
            ids.append(tok)
            lens.append(self._lengths(tok, inp.attention_mask))
        width = max(t.shape[1] for t in ids)
        padded = torch.cat([F.pad(t, (0, width - t.shape[1]), value=self.tokens.eot) for t in ids])
        enc_all = encs[0] if len(encs) == 1 else torch.cat([e.contiguous() for e in encs])
        store = self.runtime.new_store(enc_all)
        logits = self.runtime.logits(self.runtime.step(store, padded))
        store.lengths = [n for row in lens for n in row]
        outputs, row = [], 0
        for tok, key in zip(ids, keys):
            rows = list(range(row, row + tok.shape[0]))
            handle = self.handles.add(WhisperKvHandle(store, rows, key))
            outputs.append(PrefillOutput(logits[rows[0]:rows[-1] + 1, :tok.shape[1]], handle))
            row += tok.shape[0]
        return outputs

    # -- decode --------------------------------------------------------------------------------
    def _store_for(self, handles: list[WhisperKvHandle]) -> KvStore:
        """One store whose rows are exactly the handles' rows, in order (copying only if needed)."""
        first = handles[0].store
        wanted = [(h.store, h.rows) for h in handles]
        if all(h.store is first for h in handles) and [r for h in handles for r in h.rows] == list(range(first.batch)):
            return first
        self.runtime.live.check_batch(sum(len(rows) for _, rows in wanted))
        store = self.runtime.live.add(KvStore.gather(wanted))
        row = 0
        for h in handles:
            h.store, h.rows = store, list(range(row, row + len(h.rows)))
            row += len(h.rows)
        return store

    async def decode(self, input: DecodeInput) -> DecodeOutput:
        return (await self.batch_decode([input]))[0]

    async def batch_decode(self, inputs: list[DecodeInput]) -> list[DecodeOutput]:
        """One decoder step for several handles in one forward pass."""
        return await asyncio.to_thread(self._batch_decode, inputs)

    def _batch_decode(self, inputs: list[DecodeInput]) -> list[DecodeOutput]:
        self._require_ready()
        with self._lock, self.stats.operation("decode", len(inputs)):
            handles = [self.handles.check(inp.kv_cache) for inp in inputs]
            if len({id(h) for h in handles}) != len(handles):
                raise InvalidParameterError("The same KV handle appears twice in one batch",
                                            "decode each sequence once per step")
            ids = [self._ids(inp.input_ids)[:, -1:] for inp in inputs]
            for h, t in zip(handles, ids):
                if t.shape[0] != h.batch:
                    raise InvalidParameterError(f"{t.shape[0]} token rows for a handle of {h.batch} rows",
                                                "pass one token per sequence of the handle")
            store = self._store_for(handles)
            logits = self.runtime.logits(self.runtime.step(store, torch.cat(ids)))
            return [DecodeOutput(logits[h.rows[0]:h.rows[-1] + 1], h) for h in handles]

    async def forward_verify(self, input: VerifyInput) -> VerifyOutput:
        """Score the last accepted token plus N drafts in one forward; logits [N+1, vocab]."""
        return await asyncio.to_thread(self._forward_verify, input)

    def _forward_verify(self, input: VerifyInput) -> VerifyOutput:
        self._require_ready()
        with self._lock, self.stats.operation("decode", 1):
            handle = self.handles.check(input.kv_cache)
            if handle.batch != 1:
                raise InvalidParameterError("forward_verify takes a single-sequence handle",
                                            "verify each sequence separately")
            store = self._store_for([handle])
            tokens = torch.as_tensor(input.tokens, dtype=torch.long).reshape(1, -1)
            logits = self.runtime.logits(self.runtime.step(store, tokens))[0]
            return VerifyOutput(logits, handle)

    async def truncate_kv(self, cache, num_tokens: int):
        """Roll a handle back to its first ``num_tokens`` tokens (later K/V are overwritten)."""
        return await asyncio.to_thread(self._truncate_kv, cache, num_tokens)

    def _truncate_kv(self, cache, num_tokens: int):
        handle = self.handles.check(cache)
        if num_tokens < 0:
            raise InvalidParameterError("num_tokens must not be negative", "pass the length to keep")
        with self._lock:  # not while a decode step reads the lengths
            for r in handle.rows:
                handle.store.lengths[r] = min(handle.store.lengths[r], num_tokens)
        return handle

    def release_cache(self, cache_id: str) -> None:
        self.handles.release(cache_id)

    # -- lifecycle -----------------------------------------------------------------------------
    async def warmup(self) -> None:
        """A short real decode: encode one second of silence, prefill the SOT sequence, two steps."""
        import numpy as np

        mel, _ = await asyncio.to_thread(self.log_mel.window, np.zeros(self.log_mel.sample_rate, dtype=np.float32))
        prompt = torch.tensor([self.tokens.sot_sequence("en" if self.is_multilingual else None, "transcribe")])
        out = await self.prefill(PrefillInput(prompt, metadata={"input_features": mel}))
        try:
            token = out.logits[:, -1].argmax(dim=-1, keepdim=True)
            for _ in range(2):
                token = (await self.decode(DecodeInput(token, out.kv_cache))).logits[:, -1].argmax(-1, keepdim=True)
        finally:
            self.release_cache(out.kv_cache.cache_id)

    async def shutdown(self) -> None:
        await asyncio.to_thread(self._shutdown)

    def _shutdown(self) -> None:
        with self._lock:
            self.handles.clear()
            self.encoder_cache.clear()
            self.stats.set_state(ExecutorState.SHUTDOWN)
            self.model = self.runtime = self.decoder = self._beam = None
