"""A window whose greedy text runs into a loop keeps the loop's first time and ends where it repeats.

Greedy decoding sometimes gets a window's speech right and then repeats a word to the token limit
("… 7. 7. 7. 8. 8. 8. 9. 9. 9. 9. …" over a run of spoken digits; "9. 9. 9. …" from the start of
the window after it).  The reference decoders then retry the whole window at five temperatures with
five samples each, which cost a 609 s file a third of its time here, and keep the likeliest attempt.
Here the text up to the loop and the loop's phrase said once are kept when they pass the quality
checks on their own; the window ends where the phrase starts again (a timestamp token there, else
the cross-attention alignment of the text places it), and the next window starts at that point,
so the speech under the loop is decoded again, as a sentence cut by the window's border is.  The
audio has had its say before: the decoder only runs a loop out (``ran_out``) when the speech the
detector hears cannot hold it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .quality import MAX_NGRAM_WORDS, DecodeResult, compression_ratio, plain_words
from .word_timing import align_tokens, merge_punctuation, split_words

if TYPE_CHECKING:
    import torch

    from .decoding import GreedyDecoder
    from .options import TranscribeOptions
    from .speech_evidence import WindowAudio

MIN_CUT_SECONDS = 1.0   # a loop that repeats sooner leaves too little to keep: the temperature ladder runs


def tail_loop(words: list[str], repeats: int) -> tuple[int, int] | None:
    """(index of its first word, n) of the loop that ``words`` end in: an n-gram (n <= 8, case and
    punctuation ignored) said ``repeats`` times back to back (one word: once more), its last time possibly
    cut short; of several such loops, the one that starts first.  None when the words do not end in a loop."""
    norm = [" ".join(plain_words(w)) for w in words]
    best: tuple[int, int] | None = None
    for n in range(1, MAX_NGRAM_WORDS + 1):
        need = repeats + 1 if n == 1 else repeats
        for partial in range(n):            # words of an unfinished last repetition
            end = len(norm) - partial
            if end < need * n:
                break
            unit = norm[end - n:end]
            if norm[end:] != unit[:partial]:
                continue
            times = 1
            while end - (times + 1) * n >= 0 and norm[end - (times + 1) * n:end - times * n] == unit:
                times += 1
            if times >= need and (best is None or end - times * n < best[0]):
                best = (end - times * n, n)
    return best


def _spoken_words(tokens: list[int], decode) -> tuple[list[str], list[int]]:
    """The words of ``tokens`` (punctuation joined to its word, as word timestamps join it) and the token
    index each starts at."""
    words, groups = split_words(tokens, decode, None)
    merged = merge_punctuation([{"word": w, "tokens": g} for w, g in zip(words, groups)])
    starts, at = [], 0
    for item in merged:
        starts.append(at)
        at += len(item["tokens"])
    return [item["word"] for item in merged], starts


def cut_before_loop(decoder: GreedyDecoder, encoder_out: torch.Tensor, prompt: list[int], result: DecodeResult,
                    options: TranscribeOptions, audio: WindowAudio | None) -> DecodeResult | None:
    """``result`` up to the second time of the loop it ran out in, closed by a timestamp pair there (so the
    window seeks there); None when it did not run out in a loop, the cut would fall in the first second
    (or before a timestamp already kept), or the result carries no per-token log-probabilities (beam
    search)."""
    st = decoder.st
    if (not result.ran_out or result.token_logprobs is None or options.repetition_threshold is None
            or options.extra.get("without_timestamps", False)):
        return None
    positions = [i for i, t in enumerate(result.tokens) if t < st.eot]
    text_tokens = [result.tokens[i] for i in positions]
    words, starts = _spoken_words(text_tokens, decoder.text_of)
    loop = tail_loop(words, options.repetition_threshold)
    if loop is None:
        return None
    start, n = loop
    first = starts[start + n]                  # the loop's second time, among the text tokens
    kept = result.tokens[:positions[first]]
    tb, precision = st.timestamp_begin, st.time_precision
    window = audio.duration if audio is not None else 30.0
    if kept[-1] >= tb:                          # the loop opens a segment: its timestamp says when
        cut = (kept[-1] - tb) * precision
    else:
        frames = int(100 * window)
        sot = prompt[prompt.index(st.sot):]
        times, _ = align_tokens(decoder.runtime, encoder_out, sot, text_tokens, frames, eot=st.eot,
                                no_timestamps=st.no_timestamps)
        cut = float(times[first])
        stamps = [t for t in kept if t >= tb]
        if stamps and cut <= (stamps[-1] - tb) * precision:
            return None
    if not MIN_CUT_SECONDS <= cut < window:
        return None
    stamp = tb + round(cut / precision)
    logprobs = result.token_logprobs[:len(kept)]
    text = decoder.text_of([t for t in kept if t < st.eot])
    closed = kept + ([stamp] if kept[-1] >= tb else [stamp, stamp])
    return DecodeResult(closed, text, sum(logprobs) / (len(kept) + 1), sum(logprobs), result.no_speech_prob,
                        result.temperature, compression_ratio(text), end_time=(stamp - tb) * precision,
                        token_logprobs=logprobs, loop_cut=True)
