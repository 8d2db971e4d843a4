"""What a window that fails its first, greedy attempt tries before the temperature ladder
(``decoding.decode_with_fallback``).

A greedy window that runs out in a loop keeps its text up to the loop's second time and seeks there
(``executors/whisper/loop_cut.py``); the tests write the looping result out as the decoder leaves one
(no end of text, one log-probability per token) over real audio (tests/data clips joined with
silences), and the cut's time comes from the real model's cross-attention alignment against it.
A window whose prompt leads the decoder into a loop is decoded greedily once more without it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from fixture_data import LONG_SPEECH, SPEECH
from speech_eval import normalize, read_audio

from executors.whisper.longform import split_window
from executors.whisper.loop_cut import cut_before_loop, tail_loop
from executors.whisper.options import TranscribeOptions
from executors.whisper.quality import DecodeResult, compression_ratio, needs_fallback
from executors.whisper.speech_evidence import WindowAudio

SR = 16000
GAP = np.zeros(SR, np.float32)


def test_the_loop_the_words_end_in():
    repeats = TranscribeOptions().repetition_threshold
    words = "Montreal forced aligner, word, another word, here's some more word, word, word, word, word".split()
    assert tail_loop(words, repeats) == (9, 1)                       # the five "word"s at the end
    assert tail_loop(words[:-1], repeats) == (9, 1)                  # four: one word needs one repeat more
    assert tail_loop(words[:-2], repeats) is None
    assert tail_loop("go to the left go to the left go to the left go to".split(), repeats) == (0, 4)  # cut short
    assert tail_loop("Go. go, GO! go? really".split(), repeats) is None   # the loop must run to the end
    assert tail_loop([], repeats) is None


@pytest.fixture(scope="module")
def joined():
    """"Welcome to the directory", "go forward ten meters", "seven of clubs", a second of silence after each."""
    clips = [read_audio(SPEECH / name) for name in
             ("asterisk/dir-welcome.flac", "pocketsphinx/goforward.flac", "pocketsphinx/cards_003.flac")]
    parts = [p for clip in clips for p in (clip, GAP)]
    bounds = np.cumsum([0] + [len(p) for p in parts]) / SR        # start of each clip and gap, in seconds
    return np.concatenate(parts), bounds


def _looping_result(ex, text: str) -> DecodeResult:
    st = ex.tokens
    tokens = [st.timestamp_begin] + ex.encode_text(text)
    return DecodeResult(tokens, text, -0.2, -0.2 * len(tokens), 0.01, 0.0, compression_ratio(text), end_time=0.0,
                        ran_out=True, token_logprobs=[-0.2] * len(tokens))


def test_a_window_that_runs_out_in_a_loop_keeps_the_loop_once_and_seeks_to_its_repeat(joined, whisper_tiny_int8):
    ex = whisper_tiny_int8
    audio, bounds = joined
    clubs_start = bounds[4]                                       # parts: clip, gap, clip, gap, clip, gap
    go_end = WindowAudio(audio[:int(clubs_start * SR)]).last_speech_end()   # "… ten meters" ends
    options = TranscribeOptions(language="en")
    enc = ex.encode_window(ex.log_mel.window(audio)[0])
    prompt = ex.tokens.prompt([], None, "transcribe", timestamps=True)
    loop = _looping_result(ex, " Welcome to the directory. Go forward ten meters. Go forward ten meters."
                               " Go forward ten meters. Go forward")
    window = WindowAudio(audio)
    assert needs_fallback(loop, options, window)                  # the ladder would run
    cut = cut_before_loop(ex.decoder, enc, prompt, loop, options, window)
    assert cut is not None and cut.loop_cut and not cut.ran_out
    assert cut.text == " Welcome to the directory. Go forward ten meters."
    assert not needs_fallback(cut, options, window)
    # the alignment places the phrase's second time after the first one was said, before the next clip
    assert go_end - 0.3 <= cut.end_time <= clubs_start, (cut.end_time, go_end, clubs_start)
    frames = int(len(audio) / ex.log_mel.hop)
    drafts, seek = split_window(cut.tokens, ex.tokens, 0.0, frames, 2)
    assert seek * ex.log_mel.seconds_per_frame == pytest.approx(cut.end_time)   # the next window starts there
    assert ex.decode_text(drafts[-1].tokens).strip() == "Welcome to the directory. Go forward ten meters."
    assert drafts[-1].end == pytest.approx(cut.end_time)


def test_no_cut_without_a_loop_run_out_or_per_token_probabilities(joined, whisper_tiny_int8):
    ex = whisper_tiny_int8
    audio, _ = joined
    options = TranscribeOptions(language="en")
    enc = ex.encode_window(ex.log_mel.window(audio)[0])
    prompt = ex.tokens.prompt([], None, "transcribe", timestamps=True)
    window = WindowAudio(audio)
    loop = _looping_result(ex, " Welcome to the directory. Go forward. Go forward. Go forward. Go forward.")
    assert cut_before_loop(ex.decoder, enc, prompt, loop, options, window) is not None
    for other in (replace(loop, ran_out=False),                       # it ended: the text is what it says
                  replace(loop, token_logprobs=None)):                # beam search keeps no per-token scores
        assert cut_before_loop(ex.decoder, enc, prompt, other, options, window) is None
    assert cut_before_loop(ex.decoder, enc, prompt, loop, replace(options, repetition_threshold=None), window) is None
    chunks = replace(options, extra={"without_timestamps": True})     # fast long files: no seeking to cut to
    assert cut_before_loop(ex.decoder, enc, prompt, loop, chunks, window) is None


def test_a_prompt_that_leads_into_a_loop_is_dropped_before_going_hotter(whisper_tiny_int8):
    """Prompted with a run of digits that ends in a loop (the previous windows' text where this happened in a
    joined speech-wide file), tiny.en decodes the first 30 s of the telephone prompts as "8. 8. 8. 8. …";
    without the prompt it hears them."""
    ex = whisper_tiny_int8
    audio = read_audio(LONG_SPEECH)[:30 * SR]
    loop_prompt = " 4. 4. 3. 6. 3. 1. 1. 2. 7. 4. 3. 6. 6. 6. 6. 6. 6."
    prompted = ex.tokens.prompt(ex.encode_text(loop_prompt), None, "transcribe")
    enc = ex.encode_window(ex.log_mel.window(audio)[0])
    options = TranscribeOptions(language="en")
    astray = ex.decoder.decode(enc, prompted, 0.0, options, audio=WindowAudio(audio))
    assert needs_fallback(astray, options, WindowAudio(audio)), astray.text       # the prompted attempt fails
    transcript = ex.transcribe(audio, replace(options, initial_prompt=loop_prompt))
    plain = ex.transcribe(audio, options)
    assert [s.temperature for s in transcript.segments] == [0.0] * len(transcript.segments)   # no ladder
    assert normalize(transcript.segments[0].text) == normalize(plain.segments[0].text)
    assert "agent" in normalize(transcript.text)
