"""Greedy / sampled decoding with the KV cache, temperature fallback and the no-speech rule.

``DecodeStrategy`` is the seam: anything with ``decode(encoder_out, prompt, temperature, options)
-> DecodeResult`` (e.g. beam search) plugs into ``decode_with_fallback``.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from typing import Protocol

import torch

from ..core.types import CancelToken
from .forward import WhisperRuntime
from .kv import KvStore
from .loop_cut import cut_before_loop
from .options import TranscribeOptions
from .quality import (
    DecodeResult,
    compression_ratio,
    is_silence,
    loops_so_far,
    needs_fallback,
    pick_final,
    repeats_itself,
    word_count,
)
from .speech_evidence import WindowAudio
from .tokens import LogitFilter, SpecialTokens

__all__ = ["DecodeResult", "DecodeStrategy", "GreedyDecoder", "compression_ratio", "decode_with_fallback",
           "is_silence", "needs_fallback", "sampling_generator"]

_NEG_INF = float("-inf")
LOOP_CHECK_EVERY = 8  # sampled tokens between two looks for a loop in each row's text


class DecodeStrategy(Protocol):
    def decode(self, encoder_out: torch.Tensor, prompt: list[int], temperature: float,
               options: TranscribeOptions, cancel: CancelToken | None = None,
               audio: WindowAudio | None = None) -> DecodeResult: ...


class GreedyDecoder:
    """Greedy (T = 0) or best-of-N sampling (T > 0) over a batch of rows in one forward per step."""

    def __init__(self, runtime: WhisperRuntime, tokens: SpecialTokens, text_of: Callable[[list[int]], str],
                 stats=None):
        self.runtime = runtime
        self.st = tokens
        self.text_of = text_of
        self.stats = stats
        vocab = runtime.proj_out.weight.shape[0]
        self.filters = {ts: LogitFilter(tokens, vocab, runtime.device, timestamps=ts) for ts in (True, False)}

    def _timed(self, kind: str, batch: int):
        return self.stats.operation(kind, batch) if self.stats is not None else contextlib.nullcontext()

    def decode(self, encoder_out, prompt, temperature, options, cancel=None, audio=None,
               generator=None) -> DecodeResult:
        n = options.best_of if temperature > 0 and options.best_of > 1 else 1
        timestamps = not options.extra.get("without_timestamps", False)
        enc = encoder_out[:1].expand(n, -1, -1) if n > 1 else encoder_out[:1]
        results = self.decode_batch(enc, [prompt] * n, temperature, timestamps=timestamps, cancel=cancel,
                                    generator=generator, stop_loops=options.repetition_threshold,
                                    audio=[audio] * n)
        # the reference ranker without a length penalty: mean log-probability per token
        return max(results, key=lambda r: r.sum_logprob / max(1, len(r.tokens)))

    @torch.inference_mode()
    def decode_batch(self, encoder_out: torch.Tensor, prompts: list[list[int]], temperature: float = 0.0, *,
                     timestamps: bool = True, cancel: CancelToken | None = None,
                     max_new_tokens: int | None = None, prefix: list[int] = (),
                     require_text: bool = False, draft: list[int] = (),
                     generator: torch.Generator | None = None, stop_loops: int | None = None,
                     audio: list[WindowAudio | None] | None = None) -> list[DecodeResult]:
        """Decode one row per prompt against ``encoder_out`` [B, T, d] (rows may differ in prompt length);
        ``max_new_tokens`` caps the sampled tokens (live dictation bounds a pass by its audio length).
        ``prefix``: tokens forced at the start of every row's transcript (prefilled with the prompt and
        seen by the timestamp rules, left out of the results), e.g. the text of audio already decoded.
        ``require_text``: no row may end before it has sampled a text token (after a forced prefix Whisper
        otherwise often ends at once, as if the speech that follows were cut off by the window's end).
        ``draft``: a guess of the greedy continuation (one row, T = 0), checked in one forward pass
        and kept up to its first wrong token, so a good guess costs one step instead of one per token.
        ``generator``: the random stream for sampling (T > 0); None = torch's global one.
        ``stop_loops``: a row ends as soon as its text holds a loop (``loops_so_far`` with this many repeats)
        that its window's audio (``audio``, one per row; None: the text alone decides) cannot hold: the
        quality checks reject such a row whatever follows, and a greedy loop would otherwise run to the
        token limit (and hold up every other row of its batch).  Repeats the speech holds decode on."""
        st, rt = self.st, self.runtime
        prefix = list(prefix)
        prompts = [[*p, *prefix] for p in prompts] if prefix else prompts
        batch = len(prompts)
        lens = [len(p) for p in prompts]
        dev = rt.device
        ids = torch.full((batch, max(lens)), st.eot, dtype=torch.long)
        for b, p in enumerate(prompts):
            ids[b, :len(p)] = torch.tensor(p, dtype=torch.long)
        rows = torch.arange(batch, device=dev)
        with self._timed("prefill", batch):
            store = rt.new_store(encoder_out)
            hidden = rt.step(store, ids)
            store.lengths = list(lens)  # right padding: each row holds only its own prompt
            sot_at = torch.tensor([len(p) - 1 - p[::-1].index(st.sot) for p in prompts], device=dev)
            at_sot = rt.logits(hidden[rows, sot_at])
            logits = rt.logits(hidden[rows, torch.tensor(lens, device=dev) - 1])
        if st.no_speech is not None:
            no_speech = at_sot.softmax(dim=-1)[:, st.no_speech].tolist()
        else:
            no_speech = [0.0] * batch
        filt = self.filters[timestamps]
        max_new = min(st.sample_len, st.n_ctx - max(lens) + 1, max_new_tokens or st.sample_len)
        sampled = torch.tensor([prefix] * batch, dtype=torch.long, device=dev).reshape(batch, len(prefix))
        sum_lp = torch.zeros(batch, device=dev)
        done = torch.zeros(batch, dtype=torch.bool, device=dev)
        rule = _Choice(filt, st.eot, len(prefix) if require_text else None, temperature, generator)
        first = 0
        step_lp: list[torch.Tensor] = []   # each step's log-probabilities [B]
        if draft and batch == 1 and temperature == 0:
            sampled, sum_lp, logits, first = self._verify_draft(store, logits, sampled, sum_lp, draft, rule,
                                                                max_new, step_lp)
            if first and int(sampled[0, -1]) == st.eot:
                first = max_new  # the draft's check already ended the transcript
        alive = list(range(batch))   # the rows ``store`` still holds, in its order
        for i in range(first, max_new):
            if cancel is not None:
                cancel.raise_if_cancelled("transcription")
            nxt, lp = rule(logits, sampled)
            step_lp.append(torch.where(done, torch.zeros_like(lp), lp))
            sum_lp += step_lp[-1]
            nxt = torch.where(done, torch.full_like(nxt, st.eot), nxt)
            sampled = torch.cat([sampled, nxt[:, None]], dim=1)
            done |= nxt == st.eot
            if stop_loops is not None and (i + 1) % LOOP_CHECK_EVERY == 0:
                done |= self._looping(sampled[:, len(prefix):], done, stop_loops, audio)
            if i == max_new - 1 or bool(done.all()):
                break
            alive = _drop_finished(store, alive, done)
            with self._timed("decode", len(alive)):
                logits = _full_rows(rt.logits(rt.step(store, nxt[alive][:, None])[:, -1]), alive, batch)
        per_token = torch.stack(step_lp, dim=1).tolist() if step_lp else [[] for _ in range(batch)]
        return [self.result(row[len(prefix):], float(lp), ns, temperature, lps)
                for row, lp, ns, lps in zip(sampled.tolist(), sum_lp.tolist(), no_speech, per_token)]

    def _looping(self, sampled: torch.Tensor, done: torch.Tensor, repeats: int,
                 audio: list[WindowAudio | None] | None) -> torch.Tensor:
        """Which unfinished rows' text so far is a loop their audio does not hold."""
        looping = torch.zeros_like(done)
        for b in (~done).nonzero().flatten().tolist():
            row = sampled[b].tolist()
            text = self._text(row)
            if loops_so_far(text, repeats):
                heard = audio[b] if audio is not None else None
                looping[b] = heard is None or not heard.holds(word_count(text), self._end_time(row))
        return looping

    def _verify_draft(self, store, logits, sampled, sum_lp, draft: list[int], rule: _Choice, max_new: int,
                      step_lp: list[torch.Tensor]):
        """Score ``draft`` in one forward and keep its prefix that greedy decoding would have produced,
        plus greedy's own token where they first differ.  Returns (sampled, sum_lp, next logits, tokens
        consumed), each kept token's log-probability appended to ``step_lp``; the KV store is rolled back
        to hold exactly the kept tokens."""
        rt = self.runtime
        draft = [t for t in draft if t != self.st.eot][:max_new - 1]
        if not draft:
            return sampled, sum_lp, logits, 0
        base = store.lengths[0]
        with self._timed("decode", 1):
            after = rt.logits(rt.step(store, torch.tensor([draft], device=rt.device))[0])  # [n, V]
        for j, token in enumerate(draft):
            nxt, lp = rule(logits if j == 0 else after[j - 1:j].clone(), sampled)
            sum_lp += lp
            step_lp.append(lp)
            sampled = torch.cat([sampled, nxt[:, None]], dim=1)
            if int(nxt) != token:
                store.lengths = [base + j]
                if int(nxt) == self.st.eot:
                    return sampled, sum_lp, logits, j + 1
                with self._timed("decode", 1):
                    return sampled, sum_lp, rt.logits(rt.step(store, nxt[:, None])[:, -1]), j + 1
        return sampled, sum_lp, after[-1:].clone(), len(draft)

    def _text(self, tokens: list[int]) -> str:
        """The text of ``tokens``, special and timestamp tokens left out."""
        return self.text_of([t for t in tokens if t < self.st.eot])

    def _end_time(self, tokens: list[int]) -> float | None:
        """Seconds of the last timestamp token in ``tokens`` (None when there is none)."""
        tb = self.st.timestamp_begin
        last = next((t for t in reversed(tokens) if t >= tb), None)
        return None if last is None else (last - tb) * self.st.time_precision

    def result(self, row: list[int], sum_lp: float, no_speech: float, temperature: float,
               token_logprobs: list[float] | None = None) -> DecodeResult:
        """The ``DecodeResult`` of a decoded ``row`` (sampled tokens, ending in <|endoftext|> unless it ran out)
        whose log-probabilities sum to ``sum_lp``: its text, average log-probability and compression ratio."""
        ended = self.st.eot in row
        tokens = row[:row.index(self.st.eot)] if ended else row
        text = self._text(tokens)
        return DecodeResult(tokens, text, sum_lp / (len(tokens) + 1), sum_lp, no_speech, temperature,
                            compression_ratio(text), end_time=self._end_time(tokens), ran_out=not ended,
                            token_logprobs=None if token_logprobs is None else token_logprobs[:len(tokens)])


def sampling_generator(seed_from: str | torch.Tensor, prompt: list[int], temperature: float,
                       device: torch.device) -> torch.Generator:
    """The random stream for sampling one window at ``temperature``, seeded from the window's content
    (its feature key, or its encoder output), the prompt and the temperature: the same window
    decodes to the same text every run, alone or in a batch."""
    digest = hashlib.blake2b(digest_size=8)
    if isinstance(seed_from, torch.Tensor):
        digest.update(seed_from.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    else:
        digest.update(seed_from.encode())
    digest.update(repr((list(prompt), round(temperature, 6))).encode())
    generator = torch.Generator(device=device)
    generator.manual_seed(int.from_bytes(digest.digest(), "little") & (2 ** 63 - 1))
    return generator


def decode_with_fallback(decoder: GreedyDecoder, encoder_out: torch.Tensor, prompt: list[int],
                         options: TranscribeOptions, cancel: CancelToken | None = None,
                         beam: DecodeStrategy | None = None, *, first: DecodeResult | None = None,
                         seed_from: str | None = None, audio: WindowAudio | None = None) -> DecodeResult:
    """Try each temperature in turn until the result passes the quality checks (``quality``); if none
    does, keep the likeliest attempt that is not a loop.  Before going hotter, a greedy attempt that ran
    out in a loop keeps its text up to the loop's second time (``loop_cut``), and a window prompted with
    previous text whose greedy text repeats itself is decoded greedily once more without it: a prompt that
    ends in a loop leads the next window into one (the reference decoders drop the prompt only after an attempt
    hotter than 0.5).  A merely unlikely text keeps its prompt, which says what was already said before
    a window's start.  ``first``: the result of the first temperature, already decoded (in a
    batch).  ``seed_from``: the window's feature key (else its encoder output seeds the sampling).
    ``audio``: the window's audio, asked whether a repeated phrase is spoken or made up."""
    def attempt(temperature: float, prompt: list[int]) -> DecodeResult:
        if temperature > 0:
            generator = sampling_generator(seed_from if seed_from is not None else encoder_out[:1], prompt,
                                           temperature, encoder_out.device)
            return decoder.decode(encoder_out, prompt, temperature, options, cancel, audio, generator=generator)
        strategy = beam if (beam is not None and options.beam_size > 1) else decoder
        return strategy.decode(encoder_out, prompt, temperature, options, cancel, audio)

    def settled(result: DecodeResult, prompt: list[int]) -> DecodeResult | None:
        """The result to keep without going hotter: it passes, or (greedy) its text before a loop does."""
        if not needs_fallback(result, options, audio):
            return result
        if result.temperature > 0:
            return None
        cut = cut_before_loop(decoder, encoder_out, prompt, result, options, audio)
        return cut if cut is not None and not needs_fallback(cut, options, audio) else None

    attempts: list[DecodeResult] = []
    for i, temperature in enumerate(options.temperatures):
        result = first if i == 0 and first is not None else attempt(temperature, prompt)
        if (kept := settled(result, prompt)) is not None:
            return kept
        attempts.append(result)
        if temperature == 0 and prompt[:1] == [decoder.st.sot_prev] and repeats_itself(result, options):
            bare = prompt[prompt.index(decoder.st.sot):]
            retry = attempt(0.0, bare)
            if (kept := settled(retry, bare)) is not None:
                return kept
            attempts.append(retry)
    return pick_final(attempts, options, audio)


def _drop_finished(store: KvStore, alive: list[int], done: torch.Tensor) -> list[int]:
    """The rows of ``alive`` not yet ``done``; ``store`` keeps only those, so the steps after a row's end
    spend nothing on it (a batch of windows otherwise steps every row as long as its longest text).
    Rows that share one encoder output (best-of samples) keep their rows: one copy serves them all."""
    finished = done.tolist()
    kept = [at for at, row in enumerate(alive) if not finished[row]]
    if len(kept) == len(alive) or store.cross_k[0].stride(0) == 0:
        return alive
    store.reorder(torch.tensor(kept, dtype=torch.long))
    return [alive[at] for at in kept]


def _full_rows(logits: torch.Tensor, alive: list[int], batch: int) -> torch.Tensor:
    """``logits`` of the ``alive`` rows placed in a [batch, V] tensor (finished rows' zeros are never chosen:
    they end again)."""
    if len(alive) == batch:
        return logits
    full = logits.new_zeros(batch, logits.shape[-1])
    full[alive] = logits
    return full


class _Choice:
    """One decoding step's choice: the logit rules, then argmax (T = 0) or a sample; returns the
    tokens [B] and their log-probabilities under the filtered distribution."""

    def __init__(self, filt: LogitFilter, eot: int, text_from: int | None, temperature: float,
                 generator: torch.Generator | None = None):
        self.filt, self.eot, self.text_from, self.temperature = filt, eot, text_from, temperature
        self.generator = generator

    def __call__(self, logits: torch.Tensor, sampled: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.filt.apply(logits, sampled)
        if self.text_from is not None:  # require_text: no end before a text token
            silent = ~(sampled[:, self.text_from:] < self.eot).any(dim=1)
            logits[:, self.eot].masked_fill_(silent, _NEG_INF)
        if self.temperature > 0:
            nxt = _sample(torch.softmax(logits / self.temperature, dim=-1), self.generator)
        else:
            nxt = logits.max(dim=-1).indices  # argmax's first maximum; on the CPU 2-3x quicker over the vocabulary
        return nxt, torch.log_softmax(logits, dim=-1).gather(1, nxt[:, None]).squeeze(1)


def _sample(probs: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """One token per row of ``probs`` [B, V], drawn by inverting the cumulative distribution: the same
    draw as ``torch.multinomial``, which took 5.6 ms for five rows of Whisper's vocabulary on one CPU
    thread against 0.3 ms for this."""
    cdf = probs.cumsum(dim=-1)
    total = cdf[:, -1:].contiguous()
    u = torch.rand(total.shape, generator=generator, dtype=cdf.dtype, device=cdf.device) * total
    # the last token with any probability bounds a draw that rounding pushed to the very end
    last = torch.searchsorted(cdf, total)
    return torch.minimum(torch.searchsorted(cdf, u, right=True), last).squeeze(1)
