"""Quality checks on one window's decoded text, and which attempt of the temperature ladder to keep.

The reference decoders (openai-whisper, faster-whisper) retry a window at a higher temperature when
its text compresses too well (a repetition loop) or is too unlikely, unless the model says there is
no speech.  The compression check misses short loops ("Blue. Blue. Blue. Blue. Blue." compresses
badly because it is short), so the words are also checked for an n-gram repeated back to back.
When every temperature fails, the attempt kept is the likeliest one that is not a loop, as
faster-whisper keeps the likeliest one under the compression threshold.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .options import TranscribeOptions

_WORD = re.compile(r"[\w']+")
MAX_NGRAM_WORDS = 8


@dataclass
class DecodeResult:
    tokens: list[int]          # sampled tokens, without the final <|endoftext|>
    text: str
    avg_logprob: float
    sum_logprob: float
    no_speech_prob: float
    temperature: float
    compression_ratio: float
    gave_up: bool = False      # every temperature failed the checks; this is the attempt kept


def compression_ratio(text: str) -> float:
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def longest_repeat(text: str, max_words: int = MAX_NGRAM_WORDS) -> tuple[int, int, int]:
    """(n, times, words): the n-gram of words (n <= ``max_words``, case and punctuation ignored)
    repeated back to back the most times in ``text``, and how many words ``text`` has;
    n = times = 0 when nothing repeats."""
    words = [w.lower() for w in _WORD.findall(text)]
    best = (0, 0)
    for n in range(1, min(max_words, len(words) // 2) + 1):
        i = 0
        while i + 2 * n <= len(words):
            times = 1
            while words[i + times * n: i + (times + 1) * n] == words[i: i + n]:
                times += 1
            if times > 1 and times * n > best[0] * best[1]:
                best = (n, times)
            i += (times - 1) * n if times > 1 else 1
    return best[0], best[1], len(words)


def most_repeated_phrase(text: str) -> int:
    """How often the most frequent two-word phrase of ``text`` occurs, anywhere in it."""
    words = [w.lower() for w in _WORD.findall(text)]
    pairs: dict[tuple[str, str], int] = {}
    for pair in zip(words, words[1:]):
        pairs[pair] = pairs.get(pair, 0) + 1
    return max(pairs.values(), default=0)


def is_loop(text: str, repeats: int | None) -> bool:
    """An n-gram repeated back to back ``repeats`` times (one word: one time more) is a loop."""
    if repeats is None:
        return False
    n, times, _ = longest_repeat(text)
    return n > 0 and times >= (repeats + 1 if n == 1 else repeats)


def loops_so_far(text: str, repeats: int | None) -> bool:
    """``is_loop`` on a transcript still being decoded: its last word is left out, as it may still grow
    ("no, no, no, no" may go on as "no, no, no, nothing")."""
    return is_loop(" ".join(text.rsplit(None, 1)[:-1]), repeats)


def mostly_loop(text: str, repeats: int | None) -> bool:
    """A loop that makes up at least half of the words: the window holds no transcript."""
    n, times, words = longest_repeat(text)
    return is_loop(text, repeats) and 2 * n * times >= words


def looks_wrong(result: DecodeResult, options: TranscribeOptions) -> bool:
    """Too repetitive (compression or an n-gram loop) or too unlikely."""
    bad = (options.compression_ratio_threshold is not None
           and result.compression_ratio > options.compression_ratio_threshold)
    bad |= is_loop(result.text, options.repetition_threshold)
    return bad or (options.log_prob_threshold is not None and result.avg_logprob < options.log_prob_threshold)


def needs_fallback(result: DecodeResult, options: TranscribeOptions) -> bool:
    """The reference rule: retry hotter when the text looks wrong, unless the model says no speech
    and the text is unlikely (the window is then skipped as silence)."""
    lp_thr = options.log_prob_threshold
    if (options.no_speech_threshold is not None and result.no_speech_prob > options.no_speech_threshold
            and lp_thr is not None and result.avg_logprob < lp_thr):
        return False
    return looks_wrong(result, options)


def is_silence(result: DecodeResult, options: TranscribeOptions) -> bool:
    """Skip the window: the model says no speech and the text it produced is unlikely, or the text
    is still mostly a loop after every fallback, or every temperature failed and what is left keeps
    repeating a phrase (breath and noise decode to such text; it is not a transcript)."""
    if mostly_loop(result.text, options.repetition_threshold):
        return True
    repeats = options.repetition_threshold
    if result.gave_up and repeats is not None and most_repeated_phrase(result.text) >= repeats:
        return True
    if options.no_speech_threshold is None or result.no_speech_prob <= options.no_speech_threshold:
        return False
    return not (options.log_prob_threshold is not None and result.avg_logprob > options.log_prob_threshold)


def pick_final(attempts: list[DecodeResult], options: TranscribeOptions) -> DecodeResult:
    """Every temperature failed: the likeliest attempt that is not too repetitive, else the likeliest."""
    def repetitive(r: DecodeResult) -> bool:
        too_compressible = (options.compression_ratio_threshold is not None
                            and r.compression_ratio > options.compression_ratio_threshold)
        return too_compressible or is_loop(r.text, options.repetition_threshold)

    clean = [r for r in attempts if not repetitive(r)]
    return replace(max(clean or attempts, key=lambda r: r.avg_logprob), gave_up=True)
