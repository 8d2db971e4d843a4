"""Word timestamps from the alignment heads, on real speech with known silences around it."""

from __future__ import annotations

import numpy as np
import pytest

from executors.whisper.options import TranscribeOptions
from executors.whisper.word_timing import dtw_path, merge_punctuation
from fixture_data import SPEECH
from speech_eval import read_audio

SR = 16000
CLIP_A = "pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0870.flac"
CLIP_B = "pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0880.flac"


def energy_span(audio: np.ndarray) -> tuple[float, float]:
    """First and last 10 ms frame whose RMS exceeds a tenth of the loudest frame (seconds)."""
    rms = np.sqrt(np.convolve(audio ** 2, np.ones(320) / 320, mode="same"))[::160]
    loud = np.nonzero(rms > 0.1 * rms.max())[0]
    return loud[0] / 100, loud[-1] / 100


@pytest.fixture(scope="module")
def two_sentences():
    """1 s silence, sentence A, 2 s silence, sentence B, 1 s silence; with each sentence's speech span."""
    a, b = read_audio(SPEECH / CLIP_A), read_audio(SPEECH / CLIP_B)
    lead, gap = 1.0, 2.0
    audio = np.concatenate([np.zeros(int(lead * SR), np.float32), a, np.zeros(int(gap * SR), np.float32), b,
                            np.zeros(SR, np.float32)])
    a0, a1 = energy_span(a)
    b0, b1 = energy_span(b)
    b_at = lead + len(a) / SR + gap
    return audio, (lead + a0, lead + a1), (b_at + b0, b_at + b1)


@pytest.fixture(scope="module")
def transcript(whisper_tiny, two_sentences):
    return whisper_tiny.transcribe(two_sentences[0], TranscribeOptions(language="en", word_timestamps=True))


def test_every_segment_has_words_within_its_bounds(transcript):
    assert transcript.segments
    for seg in transcript.segments:
        assert seg.words, f"segment without words: {seg.text!r}"
        assert "".join(w.word for w in seg.words).strip() == seg.text.strip()
        for w in seg.words:
            assert seg.start - 1e-6 <= w.start <= w.end <= seg.end + 1e-6, (w, seg.start, seg.end)
            assert 0.0 <= w.probability <= 1.0


def test_words_are_monotonic_and_mostly_confident(transcript):
    words = [w for s in transcript.segments for w in s.words]
    assert all(b.start >= a.start and b.start >= a.end - 1e-6 for a, b in zip(words, words[1:]))
    assert np.mean([w.probability for w in words]) > 0.7


def test_words_follow_the_speech_not_the_silence(transcript, two_sentences):
    _, (a0, a1), (b0, b1) = two_sentences
    words = [w for s in transcript.segments for w in s.words]
    # nothing is said in the middle of the silent gap between the sentences
    gap_lo, gap_hi = a1 + 0.4, b0 - 0.4
    assert not [w for w in words if gap_lo < (w.start + w.end) / 2 < gap_hi]
    assert words[0].start >= a0 - 0.5, words[0]
    assert words[-1].end <= b1 + 0.6, words[-1]
    # the second sentence's first word ("He") starts close to where its speech starts
    first_b = next(w for w in words if w.start > gap_lo)
    assert first_b.word.strip() == "He"
    assert abs(first_b.start - b0) < 0.5, (first_b, b0)
    last_a = [w for w in words if w.end < gap_lo + 0.5][-1]
    assert abs(last_a.end - a1) < 0.7, (last_a, a1)


def test_dtw_follows_the_cheapest_monotonic_path():
    cost = np.full((3, 6), 5.0)
    for i, j in [(0, 0), (0, 1), (1, 2), (1, 3), (2, 4), (2, 5)]:
        cost[i, j] = 0.0
    rows, cols = dtw_path(cost)
    assert list(zip(rows.tolist(), cols.tolist())) == [(0, 0), (0, 1), (1, 2), (1, 3), (2, 4), (2, 5)]


def test_punctuation_joins_its_neighbours():
    words = [{"word": w, "tokens": [i]} for i, w in enumerate([' "', "Hello", ",", " world", "."])]
    merged = merge_punctuation(words)
    assert [w["word"] for w in merged] == [' "Hello,', " world."]
    assert [w["tokens"] for w in merged] == [[0, 1, 2], [3, 4]]
