"""Batched long-form mode (batch_windows > 1) against sequential decoding on real speech.

Exact text equality is not expected on multi-window input: batched windows are cut up front at
quiet points and decoded without the previous window's text as prompt, while sequential decoding
seeks to the last timestamp and conditions on earlier text. So the two are compared by normalised
WER against the reference, and by word overlap with each other."""

from __future__ import annotations

import difflib

import pytest
from fixture_data import long_speech, speech_utterances
from speech_eval import corpus_wer, normalize, read_audio

from executors.core.errors import Cancelled
from executors.core.types import CancelToken
from executors.whisper.batched import fixed_windows, transcribe_many
from executors.whisper.options import TranscribeOptions

SR = 16000


@pytest.fixture(scope="module")
def long_input():
    return long_speech(75.0)   # ~75 s: three windows


@pytest.fixture(scope="module")
def both(whisper_tiny, long_input):
    audio, _ = long_input
    seq = whisper_tiny.transcribe(audio, TranscribeOptions(language="en"))
    seen, progress = [], []
    bat = whisper_tiny.transcribe(audio, TranscribeOptions(language="en", batch_windows=4),
                                  on_segment=seen.append, on_progress=progress.append)
    return seq, bat, seen, progress


def test_batched_matches_sequential_quality(both, long_input):
    seq, bat, _, _ = both
    _, ref = long_input
    wer_seq, wer_bat = corpus_wer([ref], [seq.text]), corpus_wer([ref], [bat.text])
    print(f"\nWER sequential {wer_seq:.2f} %  batched {wer_bat:.2f} %")
    assert wer_bat <= wer_seq + 2.0
    overlap = difflib.SequenceMatcher(None, normalize(seq.text).split(), normalize(bat.text).split()).ratio()
    assert overlap > 0.9, overlap


def test_batched_segments_are_ordered_and_reported(both, long_input):
    _, bat, seen, progress = both
    duration = len(long_input[0]) / SR
    assert len(bat.segments) >= 3
    assert [s.text for s in seen] == [s.text for s in bat.segments]
    assert [s.id for s in bat.segments] == list(range(len(bat.segments)))
    for a, b in zip(bat.segments, bat.segments[1:]):
        assert a.start <= a.end <= b.start + 0.02
    assert bat.segments[-1].end <= duration + 0.01
    assert progress and progress[-1].done == pytest.approx(progress[-1].total)


def test_windows_end_in_quiet_places(long_input):
    audio, _ = long_input
    cuts = fixed_windows(audio, 30 * SR, SR)
    assert cuts[0][0] == 0 and cuts[-1][1] == len(audio)
    assert all(a[1] == b[0] for a, b in zip(cuts, cuts[1:]))
    assert all(0 < b - a <= 30 * SR for a, b in cuts)
    for _, cut in cuts[:-1]:   # the clips are joined with 0.5 s of silence: a cut lands in one
        assert abs(audio[cut - 400:cut + 400]).max() < 0.01


def test_many_clips_in_one_batch_give_the_sequential_text(whisper_tiny):
    clips = speech_utterances()[::5]   # 10 clips, both voices
    audios = [read_audio(u.path) for u in clips]
    single = [whisper_tiny.transcribe(a, TranscribeOptions(language="en")).text for a in audios]
    packed = [t.text for t in transcribe_many(whisper_tiny, audios, TranscribeOptions(language="en",
                                                                                     batch_windows=5))]
    same = sum(normalize(a) == normalize(b) for a, b in zip(single, packed))
    assert same >= len(clips) - 1, list(zip(single, packed))
    refs = [u.reference for u in clips]
    assert corpus_wer(refs, packed) <= corpus_wer(refs, single) + 1.0


def test_cancel_returns_partial(whisper_tiny, long_input):
    audio, _ = long_input
    token = CancelToken()
    with pytest.raises(Cancelled) as info:
        whisper_tiny.transcribe(audio, TranscribeOptions(language="en", batch_windows=2),
                                on_segment=lambda s: token.cancel(), cancel=token)
    assert info.value.partial is not None and info.value.partial.segments


def test_files_kept_whole_share_batches_and_each_gets_its_text_alone(whisper_tiny, long_input, both, monkeypatch):
    """``split_files`` off (several files on the command line): a 75 s file and short clips decode in
    shared batches, and each gets, segment for segment, what it gets alone."""
    audio, _ = long_input
    seq = both[0]
    clips = [read_audio(u.path) for u in speech_utterances()[::10]]
    alone = [seq, *(whisper_tiny.transcribe(a, TranscribeOptions(language="en")) for a in clips)]
    sizes = []
    decode_batch = whisper_tiny.decoder.decode_batch

    def counted(encoder_out, prompts, *args, **kwargs):
        sizes.append(len(prompts))
        return decode_batch(encoder_out, prompts, *args, **kwargs)

    monkeypatch.setattr(whisper_tiny.decoder, "decode_batch", counted)
    shared = transcribe_many(whisper_tiny, [audio, *clips],
                             TranscribeOptions(language="en", batch_windows=4, split_files=False))
    assert sizes[0] == 4   # the long file's first window was decoded next to three clips
    assert [t.text for t in shared] == [t.text for t in alone]
    assert [(s.start, s.end) for s in shared[0].segments] == [(s.start, s.end) for s in seq.segments]
