"""Fast long files (TranscribeOptions.chunked): VAD speech chunks decoded independently in batches, on
the bundled tiny.en (int8, as the CLI runs it) and real speech with a stretch of room noise inside."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from fixture_data import long_speech, speech_utterances
from speech_eval import corpus_wer, load_speech_dev, read_audio, require_eval

from executors.transcripts.exporters import parse_srt, parse_vtt, render_transcript, transcript_from_json
from executors.whisper.batched import transcribe_many
from executors.whisper.chunked import (CHUNK_VAD, ChunkWindow, chunks_heard, continued, group_chunks, split,
                                       stops_short)
from executors.whisper.options import TranscribeOptions
from executors.whisper.quality import word_count
from executors.whisper.speech_evidence import WindowAudio

SR = 16000
QUIET = (40.0, 52.0)   # seconds of faint noise (no speech) inside the test recording
FAST = TranscribeOptions(language="en", chunked=True)


def faint_noise(seconds: float, seed: int) -> np.ndarray:
    """Room noise about 50 dB under full scale: audible to the model, not digital silence."""
    return (np.random.default_rng(seed).standard_normal(int(seconds * SR)) * 0.003).astype(np.float32)


@pytest.fixture(scope="module")
def recording():
    """~80 s: 40 s of speech, 12 s of faint noise, then more speech; and its reference."""
    speech, reference = long_speech(70.0)
    at = int(QUIET[0] * SR)
    audio = np.concatenate([speech[:at], faint_noise(QUIET[1] - QUIET[0], 1), speech[at:]])
    return audio, reference


@pytest.fixture(scope="module")
def fast(whisper_tiny_int8, recording):
    seen = []
    transcript = whisper_tiny_int8.transcribe(recording[0], TranscribeOptions(language="en", chunked=True,
                                                                              word_timestamps=True),
                                              on_segment=seen.append)
    return transcript, seen


def test_groups_hold_at_most_a_window_of_speech_in_order():
    spans = [(0, 100), (150, 400), (420, 500), (900, 2000), (2100, 2150)]
    groups = group_chunks(spans, 300)
    flat = [piece for group in groups for piece in group]
    assert all(sum(b - a for a, b in group) <= 300 for group in groups)
    assert flat[0] == (0, 100) and flat[-1] == (2100, 2150)
    assert all(a < b <= c for (a, b), (c, _) in zip(flat, flat[1:]))
    assert sum(b - a for a, b in flat) == sum(b - a for a, b in spans)   # the long chunk is cut, not lost
    assert len(group_chunks(spans, 300, join=False)) == len(flat)


def test_a_window_that_would_end_inside_speech_ends_at_its_last_pause():
    # the dev file's window of "... press the pound key. | Asterisk is an open source | full-featured PBX":
    # its last chunk touches the next one (a pause shorter than the VAD's padding), one before it does not
    spans = [(0, 155), (156, 187), (189, 257), (268, 295), (295, 354), (358, 398)]   # tenths of a second
    assert group_chunks(spans, 300)[0][-1] == (268, 295)                 # cut inside the sentence
    groups = group_chunks(spans, 300, lookback=80)
    assert groups[0][-1] == (189, 257) and groups[1][:2] == [(268, 295), (295, 354)]
    assert [p for g in groups for p in g] == spans and all(sum(b - a for a, b in g) <= 300 for g in groups)
    # more speech after the last pause than the lookback, or no pause at all: the window is cut as before
    assert group_chunks(spans, 300, lookback=20)[0][-1] == (268, 295)
    touching = [(0, 100), (100, 200), (200, 290), (290, 350)]
    assert group_chunks(touching, 300, lookback=80) == group_chunks(touching, 300)
    # a pause right at the window's end: nothing to move
    paused = [(0, 100), (110, 200), (210, 290), (300, 350)]
    assert group_chunks(paused, 300, lookback=80) == [paused[:3], paused[3:]]


def test_a_window_stops_short_only_when_its_speech_far_outlasts_its_words():
    pad = 2 * CHUNK_VAD.speech_pad_ms * SR // 1000   # the VAD's padding around a chunk is not speech
    sentences = ChunkWindow(0, [(0, 5 * SR), (6 * SR, 11 * SR), (12 * SR, 17 * SR)])   # 15 s, 12.6 s without pads
    assert stops_short(sentences, "Adam understood the haste to go away.", SR)       # 7 words
    assert stops_short(sentences, " ".join(["word"] * 25), SR)     # 1.98 a second: under a slow reader's rate
    assert not stops_short(sentences, " ".join(["word"] * 26), SR)
    # a reader's first sentence, the window's second one left out (speech-wide): 27 words over 17.8 s of speech
    first_sentence = ChunkWindow(0, [(0, int(9.7 * SR)), (10 * SR, int(19.7 * SR))])
    assert stops_short(first_sentence, " ".join(["word"] * 27), SR)
    # twenty one-second commands: 4 s of speech without the VAD's padding, however many words
    commands = ChunkWindow(0, [(i * 2 * SR, i * 2 * SR + SR) for i in range(20)])
    assert not stops_short(commands, "Yes. No. Stop.", SR)
    two = ChunkWindow(0, [(0, 5 * SR + pad), (6 * SR, 11 * SR + pad)])
    assert stops_short(two, "Seven words, no more, and then nothing.", SR)
    assert not stops_short(ChunkWindow(0, [(0, 29 * SR)]), "One chunk.", SR)   # nothing to split it at
    # a chapter heading and then a sentence read in four chunks (speech-wide, LibriSpeech): 7.3 s of speech
    heading = ChunkWindow(0, [(a * SR // 10, b * SR // 10) for a, b in ((0, 21), (21, 37), (45, 76), (76, 113))])
    assert stops_short(heading, "Chapter II.", SR)
    assert not stops_short(heading, "Chapter II. After two years of training on the river, he went to sea at last", SR)


def test_a_split_keeps_every_chunk_and_balances_the_speech():
    window = ChunkWindow(3, [(0, 4 * SR), (5 * SR, 7 * SR), (8 * SR, 9 * SR), (10 * SR, 16 * SR)])
    first, second = split(window)
    assert first.spans + second.spans == window.spans and first.job == second.job == 3
    assert first.spans == [(0, 4 * SR), (5 * SR, 7 * SR)]   # 6 s | 7 s, the boundary nearest half of 13 s
    two = ChunkWindow(0, [(0, 25 * SR), (26 * SR, 27 * SR)])
    assert [w.spans for w in split(two)] == [[(0, 25 * SR)], [(26 * SR, 27 * SR)]]


def test_a_text_heard_the_chunks_that_start_before_its_last_token():
    """Joined chunks of 2, 3 and 4 s start at 0, 2 and 5 s of the window's audio; each chunk's speech
    begins after the VAD's 0.4 s of padding."""
    window = ChunkWindow(0, [(0, 2 * SR), (10 * SR, 13 * SR), (20 * SR, 24 * SR)])
    assert chunks_heard(window, 4.0, SR) == 2      # last token in the second chunk: the third is left out
    assert chunks_heard(window, 5.3, SR) == 2      # 0.3 s into the third chunk: still its padding
    assert chunks_heard(window, 5.6, SR) == 3      # into the third chunk's speech: every chunk heard
    assert chunks_heard(window, 0.2, SR) == 1      # the first chunk counts as heard whatever the alignment


def _greedy_window(ex, samples: np.ndarray):
    """A window of ``samples`` as fast-long files decode it: encoder output, prompt, greedy text without
    timestamp tokens."""
    enc = ex.encode_window(ex.log_mel.window(samples)[0])
    prompt = ex.tokens.prompt([], None, "transcribe", timestamps=False)
    return enc, prompt, ex.decoder.decode_batch(enc, [prompt], 0.0, timestamps=False)[0]


def _encoder_passes(ex, monkeypatch) -> list:
    passes = []
    encode = ex.runtime.encode
    monkeypatch.setattr(ex.runtime, "encode", lambda features: passes.append(1) or encode(features))
    return passes


def test_a_text_that_stopped_short_goes_on_over_the_same_encoder_output(whisper_tiny_int8, monkeypatch):
    """The window's text cut to its first quarter, as a window that ended at a change of voice holds it: the
    continuation brings back the rest of the speech, keeps what was decoded, and needs no encoder pass."""
    ex = whisper_tiny_int8
    samples = long_speech()[0][:25 * SR]
    enc, prompt, whole = _greedy_window(ex, samples)
    kept = whole.tokens[:len(whole.tokens) // 4]
    stopped = replace(whole, tokens=kept, text=ex.decode_text(kept), token_logprobs=whole.token_logprobs[:len(kept)])
    passes = _encoder_passes(ex, monkeypatch)
    more = continued(ex, stopped, enc, prompt, WindowAudio(samples), TranscribeOptions(language="en"))
    assert not passes
    assert more.tokens[:len(kept)] == kept
    assert word_count(stopped.text) < 0.4 * word_count(whole.text)
    assert word_count(more.text) >= 0.9 * word_count(whole.text)
    assert corpus_wer([whole.text], [more.text]) < 10.0


def test_a_text_that_heard_all_the_speech_is_not_continued_into_noise(whisper_tiny_int8):
    """A whole utterance, then 20 s of room noise: forced to go on, the model has nothing to say, and the
    text stays as it was (no words made up over the noise)."""
    ex = whisper_tiny_int8
    sentence = next(u for u in speech_utterances() if len(u.reference.split()) >= 6)
    samples = np.concatenate([read_audio(sentence.path), faint_noise(20.0, 3)])
    enc, prompt, said = _greedy_window(ex, samples)
    assert word_count(said.text) >= 4
    assert continued(ex, said, enc, prompt, WindowAudio(samples), TranscribeOptions(language="en")) == said


def test_accuracy_holds_against_the_sequential_default(whisper_tiny_int8, fast, recording):
    audio, reference = recording
    sequential = whisper_tiny_int8.transcribe(audio, TranscribeOptions(language="en"))
    assert corpus_wer([reference], [fast[0].text]) <= corpus_wer([reference], [sequential.text]) + 2.0


@pytest.mark.eval
def test_a_window_that_ends_at_a_change_of_reader_is_decoded_again(whisper_tiny_int8):
    """143 s of eleven LibriSpeech readers from speech-wide (clips 72-82, in the order the bench's long
    file joins them): without timestamp tokens a window ends after its first reader's sentence,
    dropping the next readers' speech (WER 18.9 % against the sequential default's when nothing is decoded
    again). Its decoding, continued over the same encoder output, hears them (5.33 %, as the sequential
    default and as the previous build, which decoded the chunks after the text anew)."""
    clips = load_speech_dev(require_eval("speech-wide", "transcripts.tsv").parent)[72:83]
    gap = np.zeros(SR // 2, np.float32)
    audio = np.concatenate([part for u in clips for part in (read_audio(u.path), gap)])
    reference = " ".join(u.reference for u in clips)
    fast = whisper_tiny_int8.transcribe(audio, FAST)
    sequential = whisper_tiny_int8.transcribe(audio, TranscribeOptions(language="en"))
    assert corpus_wer([reference], [fast.text]) <= corpus_wer([reference], [sequential.text]) + 2.0
    assert all(a.end <= b.start for a, b in zip(fast.segments, fast.segments[1:]))


def test_subtitles_and_json_have_ordered_times_inside_the_audio(fast, recording):
    transcript, seen = fast
    duration = len(recording[0]) / SR
    assert [s.text for s in seen] == [s.text for s in transcript.segments]   # streamed in order
    for fmt, parse in (("srt", parse_srt), ("vtt", parse_vtt),
                       ("json", lambda text: [(s.start, s.end, s.text) for s in transcript_from_json(text).segments])):
        cues = parse(render_transcript(transcript, fmt))
        assert len(cues) == len(transcript.segments) >= 2, fmt
        assert all(0.0 <= start < end <= duration + 0.01 for start, end, _ in cues), fmt
        assert all(end <= next_start for (_, end, _), (next_start, _, _) in zip(cues, cues[1:])), fmt
    words = [w for s in transcript.segments for w in s.words]
    assert words and all(s.start - 0.01 <= w.start <= w.end <= s.end + 0.01
                         for s in transcript.segments for w in s.words)


def test_noise_between_speech_gives_no_text(fast):
    words = [w for s in fast[0].segments for w in s.words]
    inside = [w.word for w in words if w.start > QUIET[0] + 1.0 and w.end < QUIET[1] - 1.0]
    assert not inside


@pytest.mark.parametrize("silence", [np.zeros(25 * SR, np.float32), faint_noise(25.0, 2)],
                         ids=["digital silence", "faint noise"])
def test_silence_only_gives_no_text(whisper_tiny_int8, silence):
    assert whisper_tiny_int8.transcribe(silence, FAST).segments == []


def test_a_file_gives_the_same_text_alone_and_next_to_others(whisper_tiny_int8, recording):
    clips = [read_audio(u.path) for u in speech_utterances()[:3]]
    inputs = [clips[0], recording[0], clips[1], clips[2]]
    alone = [whisper_tiny_int8.transcribe(a, FAST) for a in inputs]
    together = transcribe_many(whisper_tiny_int8, inputs, FAST)
    assert [t.text for t in together] == [t.text for t in alone]
    assert [[(s.start, s.end) for s in t.segments] for t in together] == \
        [[(s.start, s.end) for s in t.segments] for t in alone]
    assert all(t.text.strip() for t in alone)
