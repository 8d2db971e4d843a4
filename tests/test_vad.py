"""Silero VAD on real speech padded with silence: spans, timeline mapping, streaming events."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from audio_fixtures import speech_with_silence

from executors.audio.vad import (
    SpeechTimeline,
    StreamingVad,
    VadOptions,
    cut_to_speech,
    speech_probabilities,
    speech_spans,
)
from executors.core.errors import InvalidParameterError

SR = 16000


@pytest.fixture(scope="module")
def padded():
    """3 s silence, clip (7.1 s), 4 s silence, clip, 3 s silence; and where the clips are."""
    return speech_with_silence(lead_s=3.0, gap_s=4.0, tail_s=3.0)


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def test_spans_cover_the_speech_and_skip_the_silence(padded):
    audio, truth = padded
    spans = speech_spans(audio, VadOptions(min_silence_ms=1000, speech_pad_ms=200))
    assert len(spans) == 2
    for span, clip in zip(spans, truth):
        assert _overlap(span, clip) >= 0.9 * (clip[1] - clip[0])  # the speech is inside
        assert span[0] >= clip[0] - 0.6 and span[1] <= clip[1] + 0.6  # and little silence around it
    assert spans[0][1] < spans[1][0]


def test_long_min_silence_merges_across_the_gap(padded):
    audio, truth = padded
    spans = speech_spans(audio, VadOptions(min_silence_ms=8000))
    assert len(spans) == 1
    assert spans[0][0] <= truth[0][0] + 0.5 and spans[0][1] >= truth[1][1] - 0.5


def test_silence_and_noise_have_no_speech():
    rng = np.random.default_rng(1)
    assert speech_spans(np.zeros(SR * 8, np.float32)) == []
    noise = (0.02 * rng.standard_normal(SR * 8)).astype(np.float32)
    assert speech_spans(noise) == []
    assert float(speech_probabilities(noise).max()) < 0.5


def test_probabilities_are_high_in_speech_low_in_silence(padded):
    audio, truth = padded
    probs = speech_probabilities(audio)
    assert probs.size == -(-audio.size // 512)
    t = (np.arange(probs.size) * 512 + 256) / SR
    in_speech = (t > truth[0][0] + 0.5) & (t < truth[0][1] - 0.5)
    assert probs[t < truth[0][0] - 0.5].mean() < 0.1
    assert probs[in_speech].mean() > 0.6


def test_probabilities_are_those_of_silero_stepping_window_by_window(padded):
    """The network runs many windows a call (``executors/audio/silero.py``); silero's own wrapper of its ONNX
    model, stepped one 32 ms window at a time, gives the same probabilities but for float rounding."""
    import torch
    from silero_vad import load_silero_vad

    audio, _ = padded
    audio = audio[: SR * 9]                     # silence, then speech: both sides of the threshold
    ours = speech_probabilities(audio)
    reference = load_silero_vad(onnx=True)
    windows = np.zeros(ours.size * 512, np.float32)
    windows[: audio.size] = audio
    theirs = np.array([reference(torch.from_numpy(w), SR).item() for w in windows.reshape(-1, 512)])
    assert ours.shape == theirs.shape
    assert (theirs >= 0.5).sum() > 0.3 * theirs.size and (theirs < 0.1).sum() > 0.2 * theirs.size
    assert np.abs(ours - theirs).max() < 1e-4


def test_a_stream_pushed_in_pieces_hears_what_the_whole_file_gives(padded):
    """``StreamingVad`` carries the network's state across pushes of any size: its probabilities, window by
    window, are the whole recording's."""
    audio, _ = padded
    whole = speech_probabilities(audio)
    vad = StreamingVad()
    pieces = []
    for at in range(0, audio.size, 1234):
        vad.push(audio[at:at + 1234])
        pieces.append((vad.time, vad.last_probability))
    heard = {round(t / 0.032): p for t, p in pieces}
    assert len(heard) > 100
    assert max(abs(whole[n - 1] - p) for n, p in heard.items()) < 1e-5


def test_cancel_stops_detection(padded):
    from executors.core.errors import Cancelled
    from executors.core.types import CancelToken

    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        speech_spans(padded[0], cancel=token)
    assert len(speech_spans(padded[0], cancel=CancelToken())) >= 1


def test_options_are_validated():
    with pytest.raises(InvalidParameterError):
        speech_spans(np.zeros(SR, np.float32), VadOptions(threshold=1.5))
    with pytest.raises(InvalidParameterError):
        StreamingVad(min_silence_ms=-1)


def test_timeline_maps_compacted_times_back():
    timeline = SpeechTimeline([(2.0, 5.0), (10.0, 12.5)])
    assert timeline.speech_duration == pytest.approx(5.5)
    assert timeline.to_original(0.0) == pytest.approx(2.0)
    assert timeline.to_original(1.25) == pytest.approx(3.25)
    assert timeline.to_original(3.0) == pytest.approx(10.0)              # a start at the seam: next span
    assert timeline.to_original(3.0, is_end=True) == pytest.approx(5.0)  # an end at the seam: earlier span
    assert timeline.to_original(4.0) == pytest.approx(11.0)
    assert timeline.to_original(5.5, is_end=True) == pytest.approx(12.5)
    audio = np.arange(SR * 13, dtype=np.float32)
    compact = timeline.compact(audio)
    assert compact.size == int(5.5 * SR)
    assert compact[0] == 2 * SR and compact[3 * SR] == 10 * SR
    assert SpeechTimeline([]).compact(audio).size == 0


def test_remap_moves_segments_and_words_back():
    from executors.transcripts.results import Segment, Word

    timeline = SpeechTimeline([(2.0, 5.0), (10.0, 12.5)])
    seg = Segment(0, 0.5, 3.0, " a b", words=[Word(0.5, 1.0, " a", 0.9), Word(3.0, 4.0, " b", 0.8)])
    (moved,) = timeline.remap([seg])
    assert (moved.start, moved.end) == pytest.approx((2.5, 5.0))
    assert [t for w in moved.words for t in (w.start, w.end)] == pytest.approx([2.5, 3.0, 10.0, 11.0])
    assert seg.start == 0.5 and seg.words[1].start == 3.0  # the input is left alone


def test_cut_to_speech_keeps_only_speech(padded):
    audio, truth = padded
    compact, timeline = cut_to_speech(audio, VadOptions(min_silence_ms=1000, speech_pad_ms=100))
    assert compact.size == pytest.approx(timeline.speech_duration * SR, abs=2)
    assert compact.size < audio.size * 0.8
    # The first loud sample of the compacted audio maps back onto the first loud sample of the original.
    first_loud_compact = np.argmax(np.abs(compact) > 0.05) / SR
    first_loud_original = np.argmax(np.abs(audio) > 0.05) / SR
    assert timeline.to_original(first_loud_compact) == pytest.approx(first_loud_original, abs=0.01)
    assert first_loud_original == pytest.approx(truth[0][0], abs=0.5)


def _stream(vad: StreamingVad, audio: np.ndarray, step: int):
    events = []
    for i in range(0, audio.size, step):
        events += vad.push(audio[i:i + step])
    return events + vad.flush()


def test_streaming_events_follow_the_speech(padded):
    audio, truth = padded
    events = _stream(StreamingVad(min_silence_ms=800), audio, step=1234)  # odd frame size on purpose
    assert [e.kind for e in events] == ["speech_start", "speech_end"] * 2
    for (start, end), clip in zip(zip(events[::2], events[1::2]), truth):
        assert abs(start.time - clip[0]) < 0.5
        assert abs(end.time - clip[1]) < 0.8
    assert events[0].probability >= 0.5


def test_streaming_tolerates_short_pauses_and_reports_probability(padded):
    audio, _ = padded
    merged = _stream(StreamingVad(min_silence_ms=5000), audio, step=4000)
    assert [e.kind for e in merged] == ["speech_start", "speech_end"]  # the 4 s gap is a short pause here
    vad = StreamingVad()
    vad.push(audio[: SR * 2])
    assert vad.last_probability < 0.2 and not vad.in_speech
    vad.push(audio[SR * 3: SR * 6])
    assert vad.in_speech and vad.time == pytest.approx(5.0, abs=0.04)
    (end,) = vad.flush()  # the stream stops mid-speech: the span closes where the audio ends
    assert end.kind == "speech_end" and end.time == pytest.approx(vad.time)
    assert not vad.in_speech and vad.flush() == []


def test_streams_keep_separate_state_across_threads(padded):
    audio, _ = padded
    expected = [(e.kind, e.time) for e in _stream(StreamingVad(), audio, 512)]
    results = []

    def worker():
        results.append([(e.kind, e.time) for e in _stream(StreamingVad(), audio, 512)])

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    spans = speech_spans(audio)  # runs meanwhile on the same shared model
    for t in threads:
        t.join()
    assert results == [expected] * 3
    assert len(spans) >= 1
