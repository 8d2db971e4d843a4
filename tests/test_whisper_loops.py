"""Breath and room noise must not come out as a repetition loop.

The clips are made from two recordings of tests/data: the quietest quarter of a recording's 20 ms frames (breaths,
lip noise, the tail of words), joined and looped to 6 s and raised 18 dB. With per-tensor int8 and
no n-gram check, tiny.en decoded the first as "Slicka lamproom! Slicka frroom! Slicka frroom! ..."
and the second as "I'm going to go back. I'm going to go back. I'm going to go back."
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from fixture_data import SPEECH
from speech_eval import normalize, read_audio

from executors.whisper.options import TranscribeOptions
from executors.whisper.quality import is_loop, longest_repeat, loops_so_far

CLIPS = ["pocketsphinx/forever_input_2.flac", "pocketsphinx/cards_004.flac"]


def breath_clip(path, seconds: float = 6.0, gain: float = 8.0) -> np.ndarray:
    audio = read_audio(path)
    frames = audio[: len(audio) // 320 * 320].reshape(-1, 320)
    rms = np.sqrt((frames ** 2).mean(axis=1))
    quiet = frames[rms < np.percentile(rms, 25)].reshape(-1)
    return (np.tile(quiet, int(np.ceil(16000 * seconds / len(quiet))))[: int(16000 * seconds)] * gain).astype(np.float32)


@pytest.fixture(scope="module", params=CLIPS)
def breath(request):
    return breath_clip(SPEECH / request.param)


def _no_loop(text: str) -> None:
    """No word more than twice, and no two-word phrase more than twice (an independent, stricter check
    than the decoder's)."""
    words = normalize(text).split()
    assert not words or max(Counter(words).values()) <= 2, text
    assert not words or max(Counter(zip(words, words[1:])).values(), default=0) <= 2, text


@pytest.mark.parametrize("quantize", ["int8", pytest.param("float32", marks=pytest.mark.slow)])  # int8: the CPU default
def test_breath_is_not_transcribed_as_a_loop(breath, quantize, whisper_tiny, whisper_tiny_int8):
    ex = whisper_tiny_int8 if quantize == "int8" else whisper_tiny
    transcript = ex.transcribe(breath, TranscribeOptions(language="en"))
    _no_loop(transcript.text)
    batched = ex.transcribe(breath, TranscribeOptions(language="en", batch_windows=4))
    assert batched.text == transcript.text


def test_loop_check_on_text():
    repeats = TranscribeOptions().repetition_threshold
    assert longest_repeat("Montreal. Forest. Alinder. Blue. Blue. Blue. Blue. Blue.") == (1, 5, 8)
    assert is_loop("Montreal. Forest. Alinder. Blue. Blue. Blue. Blue. Blue.", repeats)
    assert is_loop("I'm going to go back. I'm going to go back. I'm going to go back.", repeats)
    assert not is_loop("I'm going to go back. I'm going to go back.", repeats)
    assert not is_loop("No, no, no.", repeats)            # one word needs one repeat more
    assert is_loop("No, no, no, no.", repeats)
    assert not is_loop("Press 5 5 to repeat. Press 5 to go back.", repeats)
    assert not is_loop("Blue. Blue. Blue. Blue. Blue.", None)


def test_sampling_stops_at_a_loop_only_once_its_words_are_whole():
    repeats = TranscribeOptions().repetition_threshold
    assert is_loop("No, no, no, no", repeats)
    assert not loops_so_far("No, no, no, no", repeats)    # the last word may still become "nothing"
    assert loops_so_far("No, no, no, no, no", repeats)
    assert loops_so_far("Blue. Blue. Blue. Blue. Bl", repeats)
    assert not loops_so_far("", repeats) and not loops_so_far("Blue", repeats)


def test_loop_check_drives_the_fallback():
    from executors.whisper.quality import DecodeResult, is_silence, needs_fallback, pick_final

    opts = TranscribeOptions()
    loop = DecodeResult([1], "Blue. Blue. Blue. Blue. Blue. Blue.", -0.2, -2.0, 0.1, 0.0, 1.5)
    clean = DecodeResult([1], "Blue sky.", -0.9, -3.0, 0.1, 0.2, 1.0)
    assert needs_fallback(loop, opts) and not needs_fallback(clean, opts)
    kept = pick_final([loop, clean], opts)
    assert kept.text == clean.text and kept.gave_up       # likeliest that is not a loop
    assert is_silence(loop, opts)                          # a window that is all loop holds no transcript
    junk = DecodeResult([1], "Slid the frame, adjoint Slid the frame, oidal the frame, deport.", -2.8, -40, 0.35,
                        1.0, 1.6)
    assert not needs_fallback(replace(junk, avg_logprob=-0.5), opts)
    assert not is_silence(junk, opts) and is_silence(pick_final([junk], opts), opts)


def test_a_repeat_is_a_loop_only_where_the_audio_cannot_hold_it():
    from executors.whisper.quality import DecodeResult, is_silence, needs_fallback
    from executors.whisper.speech_evidence import WindowAudio

    opts = TranscribeOptions()
    spoken = WindowAudio(np.tile(read_audio(SPEECH / "asterisk/hello.flac"), 5))   # "Hello" five times
    silent = WindowAudio(np.zeros(5 * 16000, np.float32))
    five = DecodeResult([1], "Hello. Hello. Hello. Hello. Hello.", -0.2, -2.0, 0.1, 0.0, 1.5, end_time=4.8)
    assert not needs_fallback(five, opts, spoken) and not is_silence(five, opts, spoken)
    assert needs_fallback(five, opts) and is_silence(five, opts)        # no audio: the text alone decides
    assert needs_fallback(five, opts, silent) and is_silence(five, opts, silent)
    assert needs_fallback(replace(five, ran_out=True), opts, spoken)    # ran to the token limit
    assert needs_fallback(replace(five, end_time=29.0), opts, spoken)   # runs on past the speech
    many = replace(five, text=" ".join(["Hello."] * 60))                # more words than 5 s of speech
    assert needs_fallback(many, opts, spoken) and is_silence(many, opts, spoken)


def test_no_speech_stands_only_where_the_detector_does_not_hear_speech_throughout():
    from executors.whisper.quality import DecodeResult, is_silence, needs_fallback
    from executors.whisper.speech_evidence import WindowAudio

    opts = TranscribeOptions()
    word = WindowAudio(read_audio(SPEECH / "asterisk/hello.flac"))        # one word, speech throughout
    faint = WindowAudio((np.random.default_rng(0).standard_normal(5 * 16000) * 0.003).astype(np.float32))
    unsure = DecodeResult([1], "Hello.", -1.2, -3.6, 0.7, 0.0, 0.8, end_time=0.9)  # "no speech", unlikely
    assert word.mostly_speech() and not faint.hears_speech()
    assert not is_silence(unsure, opts, word) and needs_fallback(unsure, opts, word)
    assert is_silence(unsure, opts) and not needs_fallback(unsure, opts)   # the reference rule
    likely = replace(unsure, avg_logprob=-0.3, text=". . .")                # faint noise, likely text
    assert is_silence(likely, opts, faint) and not needs_fallback(likely, opts, faint)
    assert not is_silence(likely, opts)                                     # the reference rule keeps it


def test_an_unlikely_last_attempt_that_the_audio_does_not_hold_is_dropped(breath):
    """What every temperature left over breath (the bfloat16 encoder's attempt on the first clip, its last
    timestamp at 18 s of 6) is no transcript; the same text is kept where the detector hears speech through
    most of the window (a clip's last words, seeked to), where it is likely, or where the audio was not asked."""
    from executors.whisper.quality import DecodeResult, made_up
    from executors.whisper.speech_evidence import WindowAudio

    options = TranscribeOptions(language="en")
    left = DecodeResult([], " S score Four, S ledfx Four, S le", -4.26, -4.26 * 17, 0.34, 1.0, 1.03,
                        gave_up=True, end_time=18.08)
    assert made_up(left, options, WindowAudio(breath))
    assert not made_up(replace(left, avg_logprob=-0.5), options, WindowAudio(breath))
    assert not made_up(replace(left, gave_up=False), options, WindowAudio(breath))
    assert not made_up(left, options, None)   # without the audio the text alone decides: no loop, kept
    speech = read_audio(SPEECH / "pocketsphinx/cards_004.flac")
    assert not made_up(left, options, WindowAudio(speech[: 16000 * 2]))
