"""One re-transcription pass over the utterance buffer: encode (short context), greedy decode
with timestamps, words out.  The Whisper executor's modules do the work (int8 path included)."""

from __future__ import annotations

import time

import numpy as np

from ..core.turns import Urgency
from ..whisper.decoding import is_silence
from ..whisper.options import TranscribeOptions
from ..whisper.speech_evidence import WindowAudio
from .context import PassContext
from .policy import Word, drop_repeats, words_from_tokens

_COMPRESSION_LIMIT = 2.4


class PassTranscriber:
    def __init__(self, executor, language: str | None, short_context: bool = True,
                 min_context_s: float = 1.0, tokens_per_second: float = 8.0, pad_s: float = 1.0,
                 final_window_s: float = 30.0, task: str = "transcribe"):
        self.ex = executor
        self.options = executor.check_options(TranscribeOptions(language=language, task=task))
        self.language = self.options.language  # this utterance's: the one given, or detected at its first pass
        self.short_context = short_context
        self.min_context_s = min_context_s
        self.pad_s = pad_s
        self.final_window_s = final_window_s
        self.fallbacks = 0
        self.full_fallback = True   # a final pass that looped is redone on the padded 30 s window
        self.collapse_loops = True  # keep a loop's first occurrence instead of discarding the pass
        self.tokens_per_second = tokens_per_second
        self._prompt_text = ""
        self._prompt_tokens: list[int] = []
        self._last_key = None
        self._last_words: list[Word] = []
        self._draft: tuple[tuple, list[int]] = ((), [])  # the last pass's tokens and what they followed
        self.compute_seconds = 0.0
        self.passes = 0

    def new_utterance(self) -> None:
        """A new utterance is heard in the language given, or detected again (people switch languages)."""
        self.language = self.options.language

    def set_prompt(self, text: str) -> None:
        """Committed text that left the buffer: it conditions the next passes."""
        text = text[-1000:]
        if text != self._prompt_text:
            self._prompt_text = text
            self._prompt_tokens = self.ex.encode_text(" " + text.strip()) if text.strip() else []

    def words(self, samples: np.ndarray, final: bool = False, context: PassContext | None = None) -> list[Word] | None:
        """The hypothesis for ``samples`` (16 kHz, the whole buffer), heard after ``context``; None
        when a non-final pass looped.  The same audio under the same prompt is not decoded twice."""
        key = (len(samples), float(samples[-1]) if len(samples) else 0.0, self._prompt_text,
               context.spans if context is not None else None)
        if key == self._last_key and not (final and self._last_words is None):
            return self._last_words
        t0 = time.perf_counter()
        # A live pass goes before file work waiting for the model; a running file job hands the model
        # over at its next window.
        with self.ex.turns.turn(Urgency.LIVE):
            window = (self.final_window_s if final else self.min_context_s) if self.short_context else 30.0
            short = window < 30.0
            words = self._decode(samples, short, context, window)
            if final and short and words is None and self.full_fallback:
                self.fallbacks += 1
                words = self._decode(samples, False, context, 30.0)  # a looping short pass: retry on the full window
        self.compute_seconds += time.perf_counter() - t0
        self.passes += 1
        if final and words is None:
            words = []
        self._last_key, self._last_words = key, words
        return words

    def _decode(self, samples: np.ndarray, short: bool, context: PassContext | None,
                min_seconds: float) -> list[Word] | None:
        """Words, or None when the pass looks like a hallucination loop.  ``short``: the encoder hears
        only the audio there is, padded to at least ``min_seconds``; else the padded 30 s window."""
        ex, st = self.ex, self.ex.tokens
        rate = ex.log_mel.sample_rate
        duration = len(samples) / rate
        offset = context.seconds if context is not None else 0.0
        heard = np.concatenate([context.audio, samples]) if context is not None else samples
        enc = ex.encode_samples(heard, short=short, min_seconds=min_seconds, pad_seconds=self.pad_s)
        if self.language is None:  # a multilingual model and no language given
            # detection, as Whisper was trained for it, reads a padded 30 s window; kept for the utterance
            # so that consecutive passes can agree
            self.language = ex.detect_language_encoded(ex.encode_samples(heard) if short else enc)[0][0]
        prompt = st.prompt(self._prompt_tokens, self.language, self.options.task, timestamps=True)
        cap = int(8 + self.tokens_per_second * duration)
        # The buffer only grew since the last pass (same start, same prompt and context): its tokens are
        # a good guess for this one, checked in one forward instead of decoded one by one.
        after = (self._prompt_text, context.spans if context is not None else None, samples[:400].tobytes())
        draft = self._draft[1] if self._draft[0] == after else []
        result = ex.decode_pass(enc, prompt, max_new_tokens=cap, prefix=self._prefix(context),
                                require_text=context is not None, draft=draft)
        self._draft = (after, result.tokens)
        if is_silence(result, self.options, WindowAudio(heard)):
            return []
        words = words_from_tokens(result.tokens, st.timestamp_begin, st.eot, st.time_precision,
                                  ex.decode_text, offset + duration)
        if offset:  # everything decoded follows the forced context text, so it is all the buffer's
            words = [w.shifted(offset) for w in words]
        if len(result.tokens) >= cap or result.compression_ratio > _COMPRESSION_LIMIT:
            kept = drop_repeats(words)
            return kept if self.collapse_loops and len(kept) < len(words) else None
        return words

    def _prefix(self, context: PassContext | None) -> list[int]:
        """The context's text as forced transcript tokens: ``<|start|> text <|end|>`` per span."""
        if context is None:
            return []
        st = self.ex.tokens
        last = st.timestamp_begin + int(30.0 / st.time_precision)

        def stamp(seconds: float) -> int:
            return min(st.timestamp_begin + round(seconds / st.time_precision), last)

        tokens: list[int] = []
        for start, end, text in context.spans:
            tokens += [stamp(start), *self.ex.encode_text(" " + text), stamp(end)]
        return tokens
