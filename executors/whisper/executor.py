"""``WhisperModelExecutor``: loading, the public transcription API and the helpers the long-form
loop uses.  The executor contract methods live in ``contract_ops.WhisperContractMixin``."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from ..core.allocator import held_by, release_free_pages
from ..core.contract import ModelExecutor
from ..core.device import DeviceChoice, resolve_device
from ..core.errors import (
    FerrumError,
    InvalidParameterError,
    ModelError,
    NotFoundError,
    UnsupportedError,
    wrap_unexpected,
)
from ..core.kernels import KernelUnavailable
from ..core.stats import ExecutorStats, HeldMemory, parameter_bytes
from ..core.turns import ModelTurns
from ..core.types import CancelToken, ExecutorState, Progress
from ..transcripts.results import Segment, Transcript
from .contract_ops import WhisperContractMixin
from .decoding import DecodeResult, GreedyDecoder, decode_with_fallback
from .features import AudioWindows, LogMel
from .forward import WhisperRuntime
from .kv import HandleRegistry
from .language import detect_language
from .longform import Longform
from .options import TranscribeOptions
from .speech_evidence import WindowAudio
from .tokens import SpecialTokens

DEFAULT_MAX_BATCH = 16


class WhisperModelExecutor(WhisperContractMixin, ModelExecutor):
    def __init__(self, model, tokenizer, mel_settings, generation_config, device: DeviceChoice,
                 model_id: str, quantized: str | None = None, num_parameters: int | None = None,
                 max_batch_size: int | None = None, int8_fallback: str | None = None, tokenizer_bytes: int = 0):
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        self.model_id = model_id
        self.quantized = quantized
        self.int8_fallback = int8_fallback  # why int8 was asked for but the float weights run
        self.generation_config = generation_config
        self.tokens = SpecialTokens.from_model(tokenizer, generation_config, model.config)
        self.config = model.config
        self.num_parameters = num_parameters or sum(p.numel() for p in model.parameters())
        # sequences decoded at once (best_of, beam_size, batch_windows, contract batches); enforced
        self.max_batch_size = max_batch_size or (DEFAULT_MAX_BATCH if device.kind == "cpu" else DEFAULT_MAX_BATCH * 4)
        self.runtime = WhisperRuntime(model, max_batch=self.max_batch_size)
        self.encoder_cache = self.runtime.encoder_cache
        self.log_mel = LogMel(mel_settings, device.torch_device)
        self.stats = ExecutorStats(device.name, parameter_bytes(model) + self.runtime.packed_bytes,
                                   self._held_memory, tokenizer_bytes)
        self.runtime.live.on_grow = self.stats.observe_memory
        self.decoder = GreedyDecoder(self.runtime, self.tokens, self.decode_text, self.stats)
        self.handles = HandleRegistry()
        # Turns on the model: file jobs hand it over between windows to a waiting dictation pass.
        self.turns = self._lock = ModelTurns()
        self._beam = None
        self.load_timings: dict[str, float] = {}   # seconds per loading stage (from_path fills it)
        self.stats.set_state(ExecutorState.READY)

    # -- loading ------------------------------------------------------------------------------
    @classmethod
    def from_path(cls, model_path, device: str = "auto", dtype: str = "auto", threads: int | None = None,
                  quantize: str | None = "auto", model_id: str | None = None) -> WhisperModelExecutor:
        """Load an HF-format Whisper folder (see ``executors.models.store.resolve_model``).

        ``quantize``: "auto" (default) = int8 linear layers on the CPU when ``dtype`` is left on
        "auto" (measured faster at the same WER, see bench/transcribe.py), float weights otherwise;
        "int8"; None/"none" = float weights. Where this torch cannot run the int8 kernel, the float
        weights load and ``int8_fallback`` says why (logged once)."""
        from .model_files import MelSettings, WhisperTokenizer, read_config, read_generation_config
        from .network import load_network

        path = Path(model_path)
        if not (path / "config.json").is_file():
            raise NotFoundError(f"No Whisper model at {path} (config.json missing)",
                                "resolve the model with executors.models.store.resolve_model first")
        choice = resolve_device(device, dtype, threads)
        started = time.perf_counter()
        try:
            generation_config = read_generation_config(path)
            model = load_network(path, read_config(path), generation_config, choice.torch_dtype, choice.torch_device)
            tokenizer, tokenizer_bytes = held_by(lambda: WhisperTokenizer.from_folder(path))
            mel_settings = MelSettings.read(path)
        except FerrumError:
            raise
        except Exception as exc:
            raise ModelError(f"Could not load the Whisper model in {path}: {exc}",
                             "check the folder is a complete Hugging Face Whisper export") from exc
        n_params = sum(p.numel() for p in model.parameters())  # before quantisation packs the weights
        loaded = time.perf_counter()
        applied = fallback = None
        if quantize == "auto" and (dtype or "auto") != "auto":   # (B3) an explicit dtype keeps float weights
            quantize = None
        if quantize not in (None, "none", False):
            try:
                model, applied = cls._quantize(model, quantize, choice)
            except KernelUnavailable as exc:
                fallback = exc.message
        quantized = time.perf_counter()
        ex = cls(model, tokenizer, mel_settings, generation_config, choice, model_id or path.name, applied,
                 n_params, int8_fallback=fallback, tokenizer_bytes=tokenizer_bytes)
        ex.load_timings = {"weights and tokenizer": loaded - started, "quantisation": quantized - loaded,
                           "runtime set-up": time.perf_counter() - quantized}
        release_free_pages()  # the file's float16 tensors, float weights that int8 ones replaced
        return ex

    @staticmethod
    def _quantize(model, mode, choice: DeviceChoice):
        try:
            from .quantize import quantize_model
        except ImportError as exc:
            raise UnsupportedError("Quantisation is not available in this build",
                                   "load the model without quantize") from exc
        return quantize_model(model, "int8" if mode is True else mode, choice)

    def _held_memory(self) -> HeldMemory:
        runtime = self.runtime
        kv, kv_used = runtime.live.memory() if runtime is not None else (0, 0)
        return HeldMemory(cache_bytes=self.encoder_cache.stats().bytes, kv_bytes=kv, kv_used_bytes=kv_used)

    @property
    def is_multilingual(self) -> bool:
        return self.tokens.is_multilingual

    # -- public API ---------------------------------------------------------------------------
    def transcribe(self, audio, options: TranscribeOptions | None = None, *,
                   on_segment: Callable[[Segment], None] | None = None,
                   on_progress: Callable[[Progress], None] | None = None,
                   cancel: CancelToken | None = None, duration: float | None = None) -> Transcript:
        """Transcribe a path, bytes or float32 16 kHz array; blocking (call it from a worker thread).
        ``duration``: the audio's seconds when the caller has probed them already (not probed again)."""
        options = self.check_options(options)
        try:
            with self._lock:
                self._require_ready()
                if options.chunked:
                    from .chunked import transcribe_chunked

                    return transcribe_chunked(
                        self, [audio], options, cancel,
                        on_segment=None if on_segment is None else (lambda _, seg: on_segment(seg)),
                        on_progress=None if on_progress is None else (lambda _, p: on_progress(p)))[0]
                if options.batch_windows > 1:
                    from .batched import transcribe_batched

                    return transcribe_batched(self, audio, options, on_segment=on_segment,
                                              on_progress=on_progress, cancel=cancel)
                timeline = None
                if options.vad_filter:
                    duration, chunks, timeline = self._speech_only(audio, cancel)
                else:
                    duration, chunks = self._open_audio(audio, duration)
                windows = AudioWindows(chunks, self.log_mel.hop, self.log_mel.n_samples)
                return Longform(self, options, duration, on_segment, on_progress, cancel, timeline).run(windows)
        except FerrumError:
            raise
        except Exception as exc:
            raise wrap_unexpected(exc, "transcribing audio") from exc

    def transcribe_file(self, audio_path, language: str | None = None) -> str:
        return self.transcribe(Path(audio_path), TranscribeOptions(language=language)).text

    def transcribe_bytes(self, audio_data: bytes, language: str | None = None) -> str:
        return self.transcribe(bytes(audio_data), TranscribeOptions(language=language)).text

    def detect_language(self, audio) -> list[tuple[str, float]]:
        """(language, probability) for the first 30 s of ``audio``, most likely first."""
        if not self.is_multilingual:
            return [("en", 1.0)]
        with self._lock:
            self._require_ready()
            _, chunks = self._open_audio(audio)
            first = AudioWindows(chunks, self.log_mel.hop, self.log_mel.n_samples).window(0)
            mel, _ = self.log_mel.window(first)
            return self.detect_language_encoded(self.encode_window(mel))

    # -- helpers for the long-form loop, the plug-ins (beam, word timing, batched) and dictation --
    def check_options(self, options: TranscribeOptions | None) -> TranscribeOptions:
        """``options`` validated against this model (languages, tasks, batch limits); English filled in
        for an English-only model."""
        options = (options or TranscribeOptions()).validate()
        self.tokens.check_request(options.language, options.task)
        for name in ("beam_size", "best_of", "batch_windows"):
            if getattr(options, name) > self.max_batch_size:
                raise InvalidParameterError(
                    f"{name}={getattr(options, name)} asks for more sequences than this executor decodes at "
                    f"once ({self.max_batch_size})", f"use {name} of at most {self.max_batch_size}")
        if not self.is_multilingual and options.language is None:
            options = replace(options, language="en")
        return options

    def _open_audio(self, audio, duration: float | None = None) -> tuple[float, object]:
        from ..audio.decode import SAMPLE_RATE, audio_duration, iter_audio

        if isinstance(audio, np.ndarray):
            from ..audio.decode import load_audio

            samples = load_audio(audio)
            return len(samples) / SAMPLE_RATE, [samples]
        if isinstance(audio, (bytes, bytearray, memoryview)):
            audio = bytes(audio)
        return duration if duration is not None else audio_duration(audio), iter_audio(audio, chunk_seconds=30.0)

    def _speech_only(self, audio, cancel: CancelToken | None):
        """VAD: the speech of ``audio`` joined together, and the timeline that maps times back."""
        from ..audio.decode import SAMPLE_RATE, load_audio
        from ..audio.vad import cut_to_speech

        samples = load_audio(audio)
        compact, timeline = cut_to_speech(samples, cancel=cancel)
        return len(samples) / SAMPLE_RATE, [compact], timeline

    def encode_window(self, mel: torch.Tensor) -> torch.Tensor:
        """[1, T, d] encoder output for one padded window ([n_mels, 3000]); cached by content."""
        with self.stats.operation("prefill", 1):
            return self.runtime.encode_cached([mel])[0]

    @torch.inference_mode()
    def encode_samples(self, samples: np.ndarray, *, short: bool = False, min_seconds: float = 1.0,
                       pad_seconds: float = 0.0) -> torch.Tensor:
        """[1, T, d] encoder output for up to 30 s of 16 kHz ``samples``: padded to one 30 s window
        (T = 1500, cached), or with ``short`` only the frames there are plus ``pad_seconds``, at least
        ``min_seconds`` (whisper.cpp's ``audio_ctx``: the positional embedding is sliced, so 3 s cost
        about a tenth of a window and the decoder's cross-attention reads only those positions)."""
        if not short:
            return self.encode_window(self.log_mel.window(samples)[0])
        mel, _ = self.log_mel.short_window(samples, min_seconds, pad_seconds)
        runtime = self.runtime
        with self.stats.operation("prefill", 1):
            return runtime.encode(mel[None])

    def decode_pass(self, encoder_out: torch.Tensor, prompt: list[int], *, max_new_tokens: int,
                    prefix: list[int] | None = None, require_text: bool = False,
                    draft: list[int] | None = None) -> DecodeResult:
        """One greedy pass with timestamps over one encoded window, as live dictation runs it: at most
        ``max_new_tokens``; ``prefix``, transcript tokens forced after the prompt; ``require_text``, no
        end of text before a word; ``draft``, tokens guessed from the last pass, checked in one forward."""
        return self.decoder.decode_batch(encoder_out, [prompt], 0.0, timestamps=True,
                                         max_new_tokens=max_new_tokens, prefix=prefix or [],
                                         require_text=require_text, draft=draft or [])[0]

    def decode_window(self, encoder_out: torch.Tensor, prompt: list[int], options: TranscribeOptions,
                      cancel: CancelToken | None = None, *, first: DecodeResult | None = None,
                      seed_from: str | None = None, audio: WindowAudio | None = None) -> DecodeResult:
        """One window through the temperature ladder (``decoding.decode_with_fallback``); ``seed_from``
        (the window's feature key) seeds its sampling so the same audio always gives the same text;
        ``audio``, the window's samples, is asked whether repeated words are spoken."""
        return decode_with_fallback(self.decoder, encoder_out, prompt, options, cancel, self._beam_strategy(options),
                                    first=first, seed_from=seed_from, audio=audio)

    def _beam_strategy(self, options: TranscribeOptions):
        if options.beam_size <= 1:
            return None
        if self._beam is None:
            try:
                from .beam import BeamSearchDecoder
            except ImportError as exc:
                raise UnsupportedError("Beam search is not available in this build",
                                       "use beam_size=1 (greedy)") from exc
            self._beam = BeamSearchDecoder(self.decoder)
        return self._beam

    def add_word_timestamps(self, segments: list[Segment], encoder_out: torch.Tensor,
                            options: TranscribeOptions, language: str | None = None) -> None:
        try:
            from .word_timing import add_word_timestamps
        except ImportError as exc:
            raise UnsupportedError("Word timestamps are not available in this build",
                                   "transcribe without word_timestamps") from exc
        add_word_timestamps(self, segments, encoder_out, options, language)

    def detect_language_encoded(self, encoder_out: torch.Tensor) -> list[tuple[str, float]]:
        return detect_language(self.runtime, self.tokens, encoder_out)

    def decode_text(self, tokens: list[int]) -> str:
        return self.tokenizer.decode([t for t in tokens if t < self.tokens.eot])

    def encode_text(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _require_ready(self) -> None:
        if self.model is None:
            raise ModelError("The Whisper executor was shut down", "load the model again")
