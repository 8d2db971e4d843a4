"""A prompted window whose text leaves out most of its speech is decoded again without the prompt."""

from __future__ import annotations

import numpy as np
import pytest
from audio_fixtures import speech_with_silence

from executors.whisper.longform import SKIP_MIN_SPEECH_S, skips_speech
from executors.whisper.quality import DecodeResult
from executors.whisper.speech_evidence import WindowAudio

SR = 16000


def _result(words: int, end_time: float | None) -> DecodeResult:
    text = " ".join(["word"] * words)
    return DecodeResult(tokens=[], text=text, avg_logprob=-0.2, sum_logprob=-1.0, no_speech_prob=0.1,
                        temperature=0.0, compression_ratio=1.2, end_time=end_time)


@pytest.fixture(scope="module")
def speech():
    """Two real clips with a pause: about 14 s of speech over 19 s; and the seconds of speech heard."""
    audio, _ = speech_with_silence(lead_s=0.5, gap_s=4.0, tail_s=0.5)
    window = WindowAudio(audio)
    return window, window.speech_seconds()


def test_speech_is_counted_up_to_a_time(speech):
    window, heard = speech
    assert heard >= SKIP_MIN_SPEECH_S
    assert window.speech_seconds(until=0.4) == 0.0   # the lead-in silence
    assert 0.0 < window.speech_seconds(until=window.duration / 2) < heard
    assert window.speech_seconds(until=window.duration + 5) == heard


def test_a_text_far_shorter_than_its_speech_skipped_it(speech):
    window, heard = speech
    end = window.duration
    assert skips_speech(_result(6, end), window)                      # "18. The leader has left the conference."
    assert not skips_speech(_result(int(heard) + 1, end), window)       # a word a second or more: kept
    assert not skips_speech(_result(2, SKIP_MIN_SPEECH_S / 2), window)  # too little audio covered to tell
    assert not skips_speech(_result(2, None), window)                   # no timestamps: nothing to measure
    silence = WindowAudio(np.zeros(20 * SR, np.float32))
    assert not skips_speech(_result(0, 19.0), silence)                  # nobody speaks: nothing skipped


@pytest.mark.slow
@pytest.mark.eval
@pytest.mark.timeout(900)
def test_a_prompt_that_leads_the_decoder_astray_is_dropped_for_the_window(whisper_tiny_int8):
    """speech-dev joined in the order of shuffle 1: after a run of segments starting "18." the decoder wrote
    25 s of conference prompts as "18. The leader has left the conference." (WER 11.10 %)."""
    from speech_eval import corpus_wer, in_order, load_speech_dev, long_audio, normalize, require_speech_dev

    from executors.whisper.options import TranscribeOptions

    audio, reference = long_audio(in_order(load_speech_dev(require_speech_dev()), 1), 600.0)
    transcript = whisper_tiny_int8.transcribe(audio, TranscribeOptions(language="en"))
    text = normalize(transcript.text)
    assert "our glorious leader arrives" in text and "zulu has joined the conference" in text
    assert corpus_wer([reference], [transcript.text]) < 8.0
