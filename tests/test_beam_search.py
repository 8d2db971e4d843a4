"""Beam search (temperature 0) on real speech: valid output and no worse than greedy."""

from __future__ import annotations

import pytest
from fixture_data import speech_utterances
from speech_eval import corpus_wer, eval_slice, read_audio

from executors.core.errors import InvalidParameterError
from executors.whisper.beam import Candidate, length_score, rank
from executors.whisper.options import TranscribeOptions


def _decode(whisper_tiny, clips, beams=(1, 5)) -> dict:
    return {beam: [whisper_tiny.transcribe(read_audio(u.path), TranscribeOptions(language="en", beam_size=beam))
                   for u in clips] for beam in beams}


@pytest.fixture(scope="module")
def clips():
    return eval_slice()[::4]   # 15 clips of the fixed slice, both subsets


@pytest.fixture(scope="module")
def decoded(whisper_tiny, clips):
    return _decode(whisper_tiny, clips)


@pytest.fixture(scope="module")
def fixture_clips():
    return speech_utterances()[::7]   # 8 clips of tests/data, both voices


@pytest.mark.eval
def test_beam_is_at_least_as_good_as_greedy(decoded, clips):
    refs = [u.reference for u in clips]
    greedy = corpus_wer(refs, [t.text for t in decoded[1]])
    beam = corpus_wer(refs, [t.text for t in decoded[5]])
    print(f"\nWER greedy {greedy:.2f} %  beam 5 {beam:.2f} %  ({len(clips)} clips)")
    assert beam <= greedy + 0.5


def test_beam_output_is_well_formed(whisper_tiny, fixture_clips):
    st = whisper_tiny.tokens
    for t in _decode(whisper_tiny, fixture_clips, beams=(5,))[5]:
        assert t.text.strip()
        for seg in t.segments:
            text_tokens = [x for x in seg.tokens if x < st.eot]
            assert all(x < st.eot or x >= st.timestamp_begin for x in seg.tokens)
            assert whisper_tiny.decode_text(text_tokens) == seg.text
            assert seg.avg_logprob < 0 and seg.start <= seg.end


def test_patience_and_length_penalty_options(whisper_tiny, fixture_clips):
    audio = read_audio(fixture_clips[-1].path)
    base = whisper_tiny.transcribe(audio, TranscribeOptions(language="en", beam_size=3)).text
    patient = whisper_tiny.transcribe(audio, TranscribeOptions(language="en", beam_size=3,
                                                               extra={"patience": 2.0, "length_penalty": 1.0})).text
    assert base.strip() and patient.strip()
    with pytest.raises(InvalidParameterError):
        whisper_tiny.transcribe(audio, TranscribeOptions(language="en", beam_size=2, extra={"patience": 0}))


def test_ranking_uses_the_reference_length_penalty():
    short, long = Candidate([1, 2], -1.5), Candidate([1, 2, 3, 4, 5, 6], -3.0)
    # plain length: -1.5/3 = -0.5 vs -3/7 = -0.43 -> the longer one wins
    assert rank([short, long], None)[0] is long
    # GNMT penalty ((5 + n) / 6) ** 0: no normalisation, the higher sum wins
    assert rank([short, long], 0.0)[0] is short
    assert length_score(-3.0, 7, 1.0) == pytest.approx(-3.0 / 2.0)
