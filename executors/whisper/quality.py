"""Quality checks on one window's decoded text, and which attempt of the temperature ladder to keep.

The reference decoders (openai-whisper, faster-whisper) retry a window at a higher temperature when
its text compresses too well (a repetition loop) or is too unlikely, unless the model says there is
no speech.  The compression check misses short loops ("Blue. Blue. Blue. Blue. Blue." compresses
badly because it is short), so the words are also checked for an n-gram repeated back to back.

Repeating a word is also normal speech ("no, no, no, no", a list, a chant), so a repeated n-gram
counts as a loop only when the window's audio (``speech_evidence.WindowAudio``) cannot hold it: the
decoder ran to its token limit, there are more words than the speech heard allows, or the text runs
on past the last speech.  The audio also has a say in silence: the model's "no speech" stands when
the voice-activity detector does not hear speech through most of the window.  Without the audio the
text alone decides, as before.  When every temperature fails, the attempt kept is the likeliest one
that is not a loop, as faster-whisper keeps the likeliest one under the compression threshold.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .options import TranscribeOptions
    from .speech_evidence import WindowAudio

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
    end_time: float | None = None   # the last timestamp token, in seconds from the window's start
    ran_out: bool = False      # no <|endoftext|>: the decoder hit its token limit or stopped a loop
    token_logprobs: list[float] | None = None   # one per token (greedy and sampled decoding)
    loop_cut: bool = False     # kept up to a loop's second time (``loop_cut``); the rest is decoded again


def compression_ratio(text: str) -> float:
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def plain_words(text: str) -> list[str]:
    """The words of ``text``, lower case, punctuation left out."""
    return [w.lower() for w in _WORD.findall(text)]


def longest_repeat(text: str, max_words: int = MAX_NGRAM_WORDS) -> tuple[int, int, int]:
    """(n, times, words): the n-gram of words (n <= ``max_words``, case and punctuation ignored)
    repeated back to back the most times in ``text``, and how many words ``text`` has;
    n = times = 0 when nothing repeats."""
    words = plain_words(text)
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
    words = plain_words(text)
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


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def audio_holds(result: DecodeResult, audio: WindowAudio | None) -> bool:
    """Whether the window's audio has the speech for ``result``'s text; False without audio (the text
    alone then decides)."""
    if audio is None or result.ran_out:
        return False
    return audio.holds(word_count(result.text), result.end_time)


def is_false_loop(result: DecodeResult, options: TranscribeOptions, audio: WindowAudio | None) -> bool:
    """A repeated n-gram that the audio does not hold: a hallucination loop."""
    return is_loop(result.text, options.repetition_threshold) and not audio_holds(result, audio)


def nobody_speaks(result: DecodeResult, options: TranscribeOptions, audio: WindowAudio | None) -> bool:
    """The model and the voice-activity detector agree that the window holds no speech (faint noise
    decodes to likely-looking text such as ". . ." or "you", which the reference rule keeps)."""
    return (audio is not None and options.no_speech_threshold is not None
            and result.no_speech_prob > options.no_speech_threshold and not audio.hears_speech())


def model_says_silence(result: DecodeResult, options: TranscribeOptions, audio: WindowAudio | None) -> bool:
    """The reference rule: the model says no speech and the text is unlikely; unless the detector hears
    speech through most of the window (a clip cut to its speech), or hears the text said: speech enough
    for its words at a speaking rate, with no slack, ending where the speech ends (a word said once in a
    short clip, "start.", which faint noise's one-word hallucinations do not have)."""
    if options.no_speech_threshold is None or result.no_speech_prob <= options.no_speech_threshold:
        return False
    if options.log_prob_threshold is not None and result.avg_logprob > options.log_prob_threshold:
        return False
    return audio is None or not (audio.mostly_speech() or heard_saying(result, audio))


def heard_saying(result: DecodeResult, audio: WindowAudio) -> bool:
    """Whether the speech the detector hears holds ``result``'s words at a speaking rate (no slack)."""
    return audio.hears_speech() and not result.ran_out and audio.holds(word_count(result.text), result.end_time,
                                                                       slack=0)


def mostly_loop(text: str, repeats: int | None) -> bool:
    """A loop that makes up at least half of the words: the window holds no transcript."""
    n, times, words = longest_repeat(text)
    return is_loop(text, repeats) and 2 * n * times >= words


def too_compressible(result: DecodeResult, options: TranscribeOptions) -> bool:
    return (options.compression_ratio_threshold is not None
            and result.compression_ratio > options.compression_ratio_threshold)


def repetitive(result: DecodeResult, options: TranscribeOptions, audio: WindowAudio | None = None) -> bool:
    """Too compressible or a loop, unless the audio holds the repetition (the speaker said it again and again)."""
    spoken = audio_holds(result, audio)
    return (too_compressible(result, options) and not spoken) or is_false_loop(result, options, audio)


def repeats_itself(result: DecodeResult, options: TranscribeOptions) -> bool:
    """The text is too compressible or holds a loop, whatever the audio says."""
    return too_compressible(result, options) or is_loop(result.text, options.repetition_threshold)


def looks_wrong(result: DecodeResult, options: TranscribeOptions, audio: WindowAudio | None = None) -> bool:
    """Too repetitive (compression, or a loop the audio does not hold) or too unlikely."""
    bad = too_compressible(result, options) or is_false_loop(result, options, audio)
    return bad or (options.log_prob_threshold is not None and result.avg_logprob < options.log_prob_threshold)


def needs_fallback(result: DecodeResult, options: TranscribeOptions, audio: WindowAudio | None = None) -> bool:
    """The reference rule: retry hotter when the text looks wrong, unless the window is silence
    (``model_says_silence``, ``nobody_speaks``): it is then skipped."""
    if model_says_silence(result, options, audio):
        return False
    return looks_wrong(result, options, audio) and not nobody_speaks(result, options, audio)


def is_silence(result: DecodeResult, options: TranscribeOptions, audio: WindowAudio | None = None) -> bool:
    """Skip the window: its audio is digital silence; or the model says no speech (``model_says_silence``,
    ``nobody_speaks``); or the text is still mostly a loop the audio does not hold after every
    fallback; or every temperature failed and the audio does not hold what is left (``made_up``)."""
    if (audio is not None and audio.is_digital_silence()) or nobody_speaks(result, options, audio):
        return True
    if model_says_silence(result, options, audio):
        return True
    if mostly_loop(result.text, options.repetition_threshold) and not audio_holds(result, audio):
        return True
    return made_up(result, options, audio)


def made_up(result: DecodeResult, options: TranscribeOptions, audio: WindowAudio | None) -> bool:
    """Every temperature failed and the audio does not hold what is left, which keeps repeating a phrase,
    or is too unlikely to pass the log-probability check where the detector hears speech through less
    than half of the window (the last word or two of a clip, seeked to, are mostly speech): breath and noise
    decode to such text ("S score Four, S ledfx Four, S le" over six seconds of breath, its last
    timestamp at 18 s); it is not a transcript."""
    if not result.gave_up or audio_holds(result, audio):
        return False
    repeats = options.repetition_threshold
    if repeats is not None and most_repeated_phrase(result.text) >= repeats:
        return True
    return (audio is not None and not audio.mostly_speech() and options.log_prob_threshold is not None
            and result.avg_logprob < options.log_prob_threshold)


def pick_final(attempts: list[DecodeResult], options: TranscribeOptions,
               audio: WindowAudio | None = None) -> DecodeResult:
    """Every temperature failed: the likeliest attempt that is not too repetitive, else the likeliest.
    Repetition that the audio holds (the speaker said it again and again) does not count against one."""
    clean = [r for r in attempts if not repetitive(r, options, audio)]
    return replace(max(clean or attempts, key=lambda r: r.avg_logprob), gave_up=True)
