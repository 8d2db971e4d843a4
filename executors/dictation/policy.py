"""LocalAgreement-2: commit the word prefix on which two consecutive hypotheses agree.

Hypotheses are the words Whisper produced for the current utterance buffer, each with an
approximate time inside the buffer (segment timestamps, spread over the segment's characters).
Committed words are final; the engine later trims the buffer at a committed segment end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

_PUNCT = re.compile(r"[^\w']+")


@dataclass(frozen=True)
class Word:
    text: str                   # as Whisper wrote it (punctuation and case kept)
    start: float                # seconds inside the buffer
    end: float
    segment_end: bool = False   # the last word of a segment whose end timestamp Whisper emitted

    @property
    def key(self) -> str:
        return _PUNCT.sub("", self.text.lower())

    def shifted(self, seconds: float) -> Word:
        return replace(self, start=max(0.0, self.start - seconds), end=max(0.0, self.end - seconds))


def words_from_tokens(tokens: list[int], timestamp_begin: int, eot: int, time_precision: float,
                      decode, duration: float) -> list[Word]:
    """Words of one decoded pass (tokens with timestamp tokens); times are clamped to ``duration``.

    A segment that starts at or after the end of the audio is dropped, with all that follows: with a
    shortened encoder context Whisper sometimes goes on "hearing" the padding."""
    words: list[Word] = []
    text_tokens: list[int] = []
    start = None

    def flush(end: float | None) -> None:
        text = decode(text_tokens).strip()
        parts = text.split()
        if not parts:
            return
        s = min(start if start is not None else (words[-1].end if words else 0.0), duration)
        e = min(end if end is not None else duration, duration)
        e = max(e, s)
        total = sum(len(p) + 1 for p in parts)
        pos = 0
        for i, part in enumerate(parts):
            w_start = s + (e - s) * pos / total
            pos += len(part) + 1
            words.append(Word(part, w_start, s + (e - s) * pos / total,
                              segment_end=(end is not None and i == len(parts) - 1)))

    for tok in tokens:
        if tok >= timestamp_begin:
            t = (tok - timestamp_begin) * time_precision
            if not text_tokens and t >= duration - 0.05 and words:
                return words
            if text_tokens:
                flush(t)
                text_tokens = []
                start = None
            else:
                start = t
        elif tok < eot:
            text_tokens.append(tok)
    if text_tokens:
        flush(None)
    return words


def common_prefix(a: list[Word], b: list[Word]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x.key != y.key:
            break
        n += 1
    return n


class LocalAgreement:
    """Tracks the hypothesis of the current buffer and how many of its words are committed."""

    def __init__(self, hold_s: float = 0.0, min_buffer_s: float = 0.0) -> None:
        self.hold_s = hold_s              # a word is committed only once both agreeing passes heard
                                          # this much audio after it (partial words agree wrongly)
        self.min_buffer_s = min_buffer_s  # nothing is committed from a buffer shorter than this
        self.previous: list[Word] = []
        self.previous_duration = 0.0
        self.done: list[str] = []   # keys of the buffer's committed words

    @property
    def committed(self) -> int:
        return len(self.done)

    def _after_committed(self, hypothesis: list[Word]) -> int:
        """Where the uncommitted part of ``hypothesis`` starts.  A new pass may merge, split or drop
        an already committed word, so the committed tail is looked up near its expected place."""
        k = len(self.done)
        if not k or [w.key for w in hypothesis[:k]] == self.done:
            return k
        tail = self.done[-2:]
        for j in sorted(range(max(len(tail), k - 3), min(len(hypothesis), k + 3) + 1), key=lambda j: abs(j - k)):
            if [w.key for w in hypothesis[j - len(tail):j]] == tail:
                return j
        for j in sorted(range(max(1, k - 3), min(len(hypothesis), k + 3) + 1), key=lambda j: abs(j - k)):
            if hypothesis[j - 1].key == tail[-1]:
                return j
        return min(k, len(hypothesis))

    def update(self, hypothesis: list[Word], duration: float = float("inf")) -> tuple[list[Word], list[Word]]:
        """(newly committed words, tentative words) after a new hypothesis for the same buffer of
        ``duration`` seconds."""
        k = self._after_committed(hypothesis)
        p = self._after_committed(self.previous)
        n = common_prefix(self.previous[p:], hypothesis[k:]) if duration >= self.min_buffer_s else 0
        while n and (hypothesis[k + n - 1].end > duration - self.hold_s
                     or self.previous[p + n - 1].end > self.previous_duration - self.hold_s):
            n -= 1
        new = hypothesis[k:k + n]
        self.done.extend(w.key for w in new)
        self.previous, self.previous_duration = hypothesis, duration
        return new, hypothesis[k + n:]

    def flush(self, hypothesis: list[Word]) -> list[Word]:
        """Final pass: every word not committed yet is committed."""
        new = hypothesis[self._after_committed(hypothesis):]
        self.done.extend(w.key for w in new)
        self.previous = hypothesis
        return new

    def trim_point(self, hypothesis: list[Word], min_seconds: float, force: bool = False) -> int:
        """Words to drop from the buffer's start: up to the last committed segment end that lies
        after ``min_seconds`` (or, with ``force``, the last committed word); 0 if none."""
        last = 0
        for i, w in enumerate(hypothesis[:self._after_committed(hypothesis)]):
            if w.segment_end and w.end >= min_seconds:
                last = i + 1
        if not last and force:
            last = self._after_committed(hypothesis)
        return last

    def trim(self, n_words: int, seconds: float) -> None:
        """The buffer lost its first ``seconds`` and with them the first ``n_words`` words."""
        self.done = self.done[n_words:]
        self.previous = [w.shifted(seconds) for w in self.previous[n_words:]]
        self.previous_duration = max(0.0, self.previous_duration - seconds)

    def reset(self) -> None:
        self.previous, self.done, self.previous_duration = [], [], 0.0


def drop_repeats(words: list[Word], min_repeats: int = 3, max_ngram: int = 8) -> list[Word]:
    """Cut a decoding loop ("save 2, save 2, save 2, ...") after its first occurrence."""
    keys = [w.key for w in words]
    for i in range(len(keys)):
        for n in range(1, max_ngram + 1):
            if i + n * min_repeats > len(keys):
                break
            block = keys[i:i + n]
            if all(keys[i + r * n:i + (r + 1) * n] == block for r in range(1, min_repeats)):
                return words[:i + n]
    return words
