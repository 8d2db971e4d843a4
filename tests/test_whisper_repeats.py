"""Words the speaker really repeats are transcribed; silence and noise give no text.

Repeating a word is normal speech ("no, no, no", a list read aloud, a name said again and again). The
cases join one real recording of one speaker 3-8 times with short pauses; before the loop checks asked
the audio, each came out empty (the window was judged a hallucination loop by its text alone).
"""

from __future__ import annotations

import numpy as np
import pytest
from fixture_data import SPEECH
from speech_eval import normalize, read_audio

from executors.whisper.options import TranscribeOptions

RATE = 16000
REPEATS = [("asterisk/hello.flac", "hello", 5), ("asterisk/do-not-disturb.flac", "disturb", 3),
           ("asterisk/letters__k.flac", "k", 8), ("asterisk/digits__30.flac", "30", 7),
           ("asterisk/vm-extension.flac", "extension", 5)]


def said_again_and_again(path, times: int, pause: float = 0.3) -> np.ndarray:
    clip, gap = read_audio(path), np.zeros(int(pause * RATE), np.float32)
    return np.concatenate([part for _ in range(times) for part in (clip, gap)])


@pytest.mark.parametrize("clip, word, times", REPEATS, ids=[f"{w} x{n}" for _, w, n in REPEATS])
def test_every_repetition_the_speaker_said_is_transcribed(clip, word, times, whisper_tiny_int8):
    transcript = whisper_tiny_int8.transcribe(said_again_and_again(SPEECH / clip, times),
                                              TranscribeOptions(language="en"))
    heard = normalize(transcript.text).split().count(word)
    assert times <= heard <= 2 * times, transcript.text   # every repeat, and no runaway loop


def test_repetitions_decode_the_same_in_a_batch(whisper_tiny_int8):
    audio = said_again_and_again(SPEECH / "asterisk/hello.flac", 5)
    alone = whisper_tiny_int8.transcribe(audio, TranscribeOptions(language="en"))
    batched = whisper_tiny_int8.transcribe(audio, TranscribeOptions(language="en", batch_windows=4))
    assert normalize(alone.text).split().count("hello") >= 5 and batched.text == alone.text


def faint_noise(seconds: float) -> np.ndarray:
    """White noise 50 dB under full scale: tiny.en read it as ". . . . ." before."""
    return (np.random.default_rng(0).standard_normal(int(seconds * RATE)) * 0.003).astype(np.float32)


@pytest.mark.parametrize("audio", [np.zeros(120 * RATE, np.float32), faint_noise(60)],
                         ids=["120 s of digital silence", "60 s of faint noise"])
@pytest.mark.parametrize("batch", [1, 4])
def test_silence_and_noise_give_no_segments(audio, batch, whisper_tiny_int8):
    transcript = whisper_tiny_int8.transcribe(audio, TranscribeOptions(language="en", batch_windows=batch))
    assert transcript.segments == [], transcript.text
