"""WhisperModelExecutor on the real bundled tiny.en and real speech: the seed API, accuracy,
long-form windowing, streaming, progress, cancellation and the English-only rules."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import soundfile as sf
import torch
from fixture_data import long_speech, speech_utterances
from speech_eval import corpus_wer, load_speech_dev, normalize, require_speech_dev

from executors.core.errors import Cancelled, InvalidParameterError, NotFoundError
from executors.core.types import CancelToken
from executors.whisper.executor import WhisperModelExecutor
from executors.whisper.features import AudioWindows
from executors.whisper.longform import split_window
from executors.whisper.options import TranscribeOptions
from executors.whisper.tokens import LogitFilter

SR = 16000


def _clips(count: int):
    rows = speech_utterances()
    return [rows[(i * len(rows)) // count] for i in range(count)]


@pytest.fixture(scope="module")
def long_input(tmp_path_factory):
    """About 150 s of speech (the joined minute, then the short clips) with short pauses, written to FLAC
    (read back by streaming)."""
    audio, reference = long_speech(seconds=150.0)
    path = tmp_path_factory.mktemp("long") / "joined.flac"
    sf.write(str(path), audio, SR)
    return path, audio, reference


@pytest.fixture(scope="module")
def long_result(whisper_tiny, long_input):
    path, _, _ = long_input
    produced, progress = [], []
    transcript = whisper_tiny.transcribe(path, on_segment=produced.append, on_progress=progress.append)
    return transcript, produced, progress


def test_seed_api_file_and_bytes(whisper_tiny):
    clip = _clips(8)[1]
    text = whisper_tiny.transcribe_file(clip.path)
    assert corpus_wer([clip.reference], [text]) <= 20.0, (text, clip.reference)
    assert whisper_tiny.transcribe_bytes(clip.path.read_bytes()) == text
    assert whisper_tiny.transcribe_file(clip.path, language="en") == text


def test_from_path_rejects_a_folder_without_a_model(tmp_path):
    with pytest.raises(NotFoundError):
        WhisperModelExecutor.from_path(tmp_path, "cpu", "float32")


@pytest.mark.eval
def test_dev_clips_are_transcribed_accurately(whisper_tiny):
    require_speech_dev()
    sentences = [u for u in load_speech_dev() if len(u.reference.split()) >= 6]
    clips = [sentences[(i * len(sentences)) // 6] for i in range(6)]
    hyps = [whisper_tiny.transcribe(c.path).text for c in clips]
    per_clip = [corpus_wer([c.reference], [h]) for c, h in zip(clips, hyps)]
    assert corpus_wer([c.reference for c in clips], hyps) <= 15.0, list(zip(hyps, per_clip))
    assert sum(w <= 20.0 for w in per_clip) >= 5, list(zip(hyps, per_clip))


def test_array_input_matches_file_input(whisper_tiny):
    clip = _clips(8)[3]
    audio, _ = sf.read(str(clip.path), dtype="float32")
    assert whisper_tiny.transcribe(audio).text == whisper_tiny.transcribe_file(clip.path)


def test_long_input_segments_are_ordered_and_complete(long_input, long_result):
    _, audio, reference = long_input
    transcript = long_result[0]
    duration = len(audio) / SR
    segs = transcript.segments
    assert transcript.duration == pytest.approx(duration, abs=0.05)
    assert len(segs) >= 10
    assert [s.id for s in segs] == list(range(len(segs)))
    for prev, cur in itertools.pairwise(segs):
        assert cur.start >= prev.end - 1e-6, (prev, cur)
    assert all(s.start < s.end <= duration + 1e-6 for s in segs)
    assert segs[-1].end > duration - 10.0  # the last window was transcribed too
    # nothing lost or doubled at the window borders: few deletions or insertions against the references
    import jiwer

    out = jiwer.process_words(normalize(reference), normalize(transcript.text))
    n_ref = len(normalize(reference).split())
    assert out.deletions <= 0.05 * n_ref and out.insertions <= 0.05 * n_ref, (out.deletions, out.insertions)
    assert corpus_wer([reference], [transcript.text]) <= 20.0


def test_segments_arrive_incrementally_with_monotonic_progress(long_result):
    transcript, produced, progress = long_result
    assert produced == transcript.segments
    done = [p.done for p in progress]
    assert len(done) >= 5
    assert all(b >= a for a, b in itertools.pairwise(done))
    assert all(p.unit == "s" and p.total == pytest.approx(transcript.duration) for p in progress)
    assert done[-1] == pytest.approx(transcript.duration)
    assert done[0] < transcript.duration / 2


def test_stream_and_array_agree_on_long_input(whisper_tiny, long_input, long_result):
    _, audio, _ = long_input
    head = audio[: 40 * SR]  # two windows
    transcript = whisper_tiny.transcribe(head)
    streamed = [s.text for s in long_result[0].segments if s.end <= 25.0]
    assert len(streamed) >= 2
    assert [s.text for s in transcript.segments if s.end <= 25.0] == streamed


def test_cancel_mid_file_raises_with_partial_segments(whisper_tiny, long_input, long_result):
    path, _, _ = long_input
    token = CancelToken()
    seen = []

    def on_segment(seg):
        seen.append(seg)
        if len(seen) == 2:
            token.cancel()

    with pytest.raises(Cancelled) as info:
        whisper_tiny.transcribe(path, on_segment=on_segment, cancel=token)
    partial = info.value.partial
    assert 2 <= len(partial.segments) < len(long_result[0].segments)
    assert [s.text for s in partial.segments] == [s.text for s in long_result[0].segments[: len(partial.segments)]]


def test_silence_produces_no_text(whisper_tiny):
    assert whisper_tiny.transcribe(np.zeros(8 * SR, dtype=np.float32)).text == ""


def test_english_only_model_rejects_other_languages_and_translate(whisper_tiny):
    clip = _clips(8)[0]
    with pytest.raises(InvalidParameterError):
        whisper_tiny.transcribe(clip.path, TranscribeOptions(language="de"))
    with pytest.raises(InvalidParameterError):
        whisper_tiny.transcribe(clip.path, TranscribeOptions(task="translate"))
    with pytest.raises(InvalidParameterError):
        whisper_tiny.transcribe_file(clip.path, language="fr")
    assert not whisper_tiny.is_multilingual
    assert whisper_tiny.detect_language(clip.path) == [("en", 1.0)]


def test_initial_prompt_is_sent_after_startofprev(whisper_tiny):
    st = whisper_tiny.tokens
    previous = list(range(1000, 1400))
    prompt = st.prompt(previous, None, "transcribe")
    assert prompt[0] == st.sot_prev and prompt[-1] == st.sot
    assert prompt[1:-1] == previous[-223:]
    clip = _clips(8)[5]
    text = whisper_tiny.transcribe(clip.path, TranscribeOptions(initial_prompt="Telephone menu prompts.")).text
    assert corpus_wer([clip.reference], [text]) <= 30.0


def test_special_tokens_and_suppression_come_from_the_model(whisper_tiny):
    st = whisper_tiny.tokens
    tok = whisper_tiny.tokenizer
    assert st.eot == tok.convert_tokens_to_ids("<|endoftext|>")
    assert st.timestamp_begin == tok.convert_tokens_to_ids("<|0.00|>")
    assert st.sot == whisper_tiny.generation_config.decoder_start_token_id
    filt = LogitFilter(st, whisper_tiny.model.config.vocab_size, "cpu")
    logits = torch.zeros(1, whisper_tiny.model.config.vocab_size)
    filt.apply(logits, torch.empty(1, 0, dtype=torch.long))
    allowed = torch.isfinite(logits[0]).nonzero().flatten().tolist()
    # the first token must be a timestamp no later than max_initial_timestamp
    assert allowed == list(range(st.timestamp_begin, st.timestamp_begin + st.max_initial_timestamp_index + 1))
    later = torch.zeros(1, whisper_tiny.model.config.vocab_size)
    filt.apply(later, torch.tensor([[st.timestamp_begin, 400]]))
    suppressed = whisper_tiny.generation_config.suppress_tokens
    assert torch.isinf(later[0, suppressed]).all()
    assert torch.isinf(later[0, st.timestamp_begin]).all()  # timestamps never go backwards


def test_split_window_seeks_to_the_last_complete_segment(whisper_tiny):
    st = whisper_tiny.tokens
    ts = lambda s: st.timestamp_begin + round(s / st.time_precision)
    tokens = [ts(0.0), 100, 101, ts(2.0), ts(2.0), 102, ts(4.0), ts(4.4), 103]  # last segment unfinished
    drafts, advance = split_window(tokens, st, 10.0, 3000, 2)
    assert [(d.start, d.end) for d in drafts] == [(10.0, 12.0), (12.0, 14.0)]
    assert advance == 400  # back to 4.0 s: the unfinished segment is decoded again in the next window
    drafts, advance = split_window([ts(0.0), 100, ts(1.0), ts(1.0), 101, ts(3.0)], st, 0.0, 1500, 2)
    assert [(d.start, d.end) for d in drafts] == [(0.0, 1.0), (1.0, 3.0)] and advance == 1500


def test_audio_windows_stream_with_bounded_memory():
    chunk = 30 * SR
    chunks = (np.full(chunk, i, dtype=np.float32) for i in range(40))  # 20 minutes
    windows = AudioWindows(chunks, hop=160, window_samples=chunk)
    seek, biggest = 0, 0
    while True:
        w = windows.window(seek)
        biggest = max(biggest, len(windows._buf))
        if len(w) == 0:
            break
        assert w[0] == (seek * 160) // chunk
        seek += 2345
    assert windows.exhausted and windows.samples_seen == 40 * chunk
    assert biggest <= 3 * chunk


@pytest.fixture(scope="module")
def whisper_base():
    from executors.models.store import resolve_model

    resolved = resolve_model("whisper-base", kind="whisper")
    return WhisperModelExecutor.from_path(resolved.path, "cpu", "float32", model_id=resolved.model_id)


def test_multilingual_model_detects_language_and_translates(whisper_base):
    clip = next(u for u in speech_utterances() if u.path.parent.name == "pocketsphinx")
    assert whisper_base.is_multilingual
    ranked = whisper_base.detect_language(clip.path)
    probs = [p for _, p in ranked]
    assert ranked[0][0] == "en" and ranked[0][1] > 0.5
    assert probs == sorted(probs, reverse=True) and sum(probs) == pytest.approx(1.0, abs=1e-3)
    assert len(ranked) == len(whisper_base.tokens.lang_to_id) > 50
    detected = whisper_base.transcribe(clip.path)
    assert detected.language == "en" and detected.language_probability == pytest.approx(ranked[0][1], abs=1e-3)
    assert corpus_wer([clip.reference], [detected.text]) <= 50.0
    german = whisper_base.transcribe(clip.path, TranscribeOptions(language="de", task="translate"))
    assert (german.language, german.task) == ("de", "translate") and german.text
    with pytest.raises(InvalidParameterError):
        whisper_base.transcribe(clip.path, TranscribeOptions(language="xx"))


def test_vad_filter_maps_segments_back_to_the_original_timeline(whisper_tiny):
    clip = _clips(8)[1]
    speech, _ = sf.read(str(clip.path), dtype="float32")
    lead = 12.0
    padded = np.concatenate([np.zeros(int(lead * SR), np.float32), speech, np.zeros(8 * SR, np.float32)])
    progress = []
    transcript = whisper_tiny.transcribe(padded, TranscribeOptions(vad_filter=True), on_progress=progress.append)
    speech_end = lead + len(speech) / SR
    assert transcript.segments and transcript.duration == pytest.approx(len(padded) / SR)
    for seg in transcript.segments:
        assert lead - 0.5 <= seg.start < seg.end <= speech_end + 0.5, seg
    assert corpus_wer([clip.reference], [transcript.text]) <= 20.0
    assert progress[-1].done == pytest.approx(transcript.duration)
    assert all(b.done >= a.done for a, b in itertools.pairwise(progress))
