"""Speaker diarization on real voices: conversations joined from tests/data clips, the GE2E encoder, assignment."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from fixture_data import conversation, single_voice  # puts the repository root on sys.path for bench.*

from bench.diarize import der
from executors.core.errors import Cancelled, InvalidParameterError
from executors.core.types import CancelToken
from executors.diarization import (Diarization, DiarizationOptions, SpeakerCountError, SpeakerTurn,
                                   assign_speakers, diarize)
from executors.diarization.encoder import SpeakerEncoder, checkpoint_path, weights_path


@pytest.fixture(scope="module")
def three_voices():
    return conversation(["asterisk", "librivox", "cards"], n_turns=12, seed=1)


def _hyp(d: Diarization):
    return [(t.start, t.end, t.speaker) for t in d.turns]


def test_three_voice_conversation_gets_three_speakers_and_low_der(three_voices):
    d = diarize(three_voices.audio)
    assert len(d.speakers) == 3
    score = der(three_voices.turns, _hyp(d), three_voices.duration)
    assert score["diarization error rate"] <= 0.10, score
    assert d.turns == sorted(d.turns, key=lambda t: t.start)
    assert all(0 <= t.start < t.end <= d.duration + 1e-6 for t in d.turns)


def test_two_voice_conversation_with_the_count_given():
    conv = conversation(["asterisk", "librivox"], n_turns=8, seed=1)
    d = diarize(conv.audio, DiarizationOptions(num_speakers=2))
    assert d.speakers == ["SPEAKER_00", "SPEAKER_01"]
    assert der(conv.turns, _hyp(d), conv.duration)["diarization error rate"] <= 0.10


def test_single_speaker_file_gets_one_speaker():
    conv = single_voice("asterisk", n_clips=8, seed=2)
    d = diarize(conv.audio)
    assert d.speakers == ["SPEAKER_00"]
    assert sum(d.speaker_time().values()) > 0.8 * sum(e - s for s, e, _ in conv.turns)


def test_silent_file_gets_no_speakers_and_no_error():
    d = diarize(np.zeros(16000 * 5, np.float32))
    assert d.turns == [] and d.speakers == [] and d.duration == pytest.approx(5.0)


def test_max_speakers_caps_the_count(three_voices):
    d = diarize(three_voices.audio, DiarizationOptions(max_speakers=2))
    assert len(d.speakers) == 2


@pytest.mark.parametrize("kwargs", [dict(num_speakers=0), dict(min_speakers=3, max_speakers=2),
                                    dict(num_speakers=5, max_speakers=3), dict(min_speakers=0)])
def test_impossible_speaker_counts_are_refused_with_a_hint(kwargs):
    with pytest.raises(SpeakerCountError) as err:
        DiarizationOptions(**kwargs).validate()
    assert isinstance(err.value, InvalidParameterError) and "--num-speakers" in err.value.hint


def test_cancel_stops_diarization(three_voices):
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        diarize(three_voices.audio, cancel=token)


def test_progress_reaches_the_end(three_voices):
    seen = []
    diarize(three_voices.audio, on_progress=seen.append)
    fractions = [p.fraction for p in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


def test_encoder_weights_are_converted_once_to_safetensors():
    path = weights_path()
    assert path.suffix == ".safetensors" and path.is_file()
    assert path.stat().st_mtime == weights_path().stat().st_mtime  # second call reuses it
    assert checkpoint_path().name == "pretrained.pt"


def test_encoder_matches_resemblyzer(speech_dir, monkeypatch):
    """Our mel frames and embeddings against Resemblyzer's own code on the same audio."""
    import torch

    monkeypatch.setitem(sys.modules, "webrtcvad", types.ModuleType("webrtcvad"))  # only its VAD needs it
    from resemblyzer import VoiceEncoder
    from resemblyzer.audio import normalize_volume, wav_to_mel_spectrogram

    from executors.audio.decode import load_audio

    wav = normalize_volume(load_audio(speech_dir / "pocketsphinx" / "goforward.flac"), -30, increase_only=True)
    wav = wav.astype(np.float32)
    ours = SpeakerEncoder.shared()
    mel, ref_mel = ours.mel_frames(wav), wav_to_mel_spectrogram(wav)
    np.testing.assert_allclose(mel[:len(ref_mel)], ref_mel, rtol=1e-4, atol=1e-5)
    windows = np.stack([ref_mel[i:i + 160] for i in range(0, len(ref_mel) - 160, 40)])
    with torch.no_grad():
        expected = VoiceEncoder("cpu", verbose=False)(torch.from_numpy(windows)).numpy()
    np.testing.assert_allclose((ours.embed(windows) * expected).sum(1), 1.0, atol=1e-4)


def test_assign_speakers_splits_a_segment_at_the_change_of_voice():
    from executors.transcripts.results import Segment, Transcript, Word

    words = [Word(0.0, 0.5, " Hello", 0.9), Word(0.5, 1.0, " there.", 0.9), Word(1.2, 1.6, " Hi", 0.9),
             Word(1.6, 2.2, " back.", 0.9)]
    transcript = Transcript("en", 1.0, 3.0, [Segment(0, 0.0, 2.2, " Hello there. Hi back.", words=words),
                                             Segment(1, 2.5, 3.0, " Bye.")])
    diarization = Diarization([SpeakerTurn(0.0, 1.1, "SPEAKER_00"), SpeakerTurn(1.1, 3.0, "SPEAKER_01")], 3.0)
    out = assign_speakers(transcript, diarization)
    assert [(s.id, s.text, s.speaker) for s in out.segments] == [
        (0, " Hello there.", "SPEAKER_00"), (1, " Hi back.", "SPEAKER_01"), (2, " Bye.", "SPEAKER_01")]
    assert [w.speaker for w in out.segments[1].words] == ["SPEAKER_01", "SPEAKER_01"]
    assert transcript.segments[0].speaker is None  # the input is left alone


def test_transcript_of_a_real_conversation_gets_each_voice_its_words(tmp_path):
    """Whisper (word timestamps) + diarization on a joined two-voice conversation."""
    import soundfile as sf

    from executors.models.store import resolve_model
    from executors.whisper import WhisperModelExecutor
    from executors.whisper.options import TranscribeOptions

    conv = conversation(["asterisk", "librivox"], n_turns=4, seed=3)
    path = tmp_path / "conv.wav"
    sf.write(path, conv.audio, 16000)
    whisper = WhisperModelExecutor.from_path(resolve_model("whisper-tiny.en").path, device="cpu", threads=2)
    transcript = whisper.transcribe(path, TranscribeOptions(language="en", word_timestamps=True))
    out = assign_speakers(transcript, diarize(path))
    assert len(out.speakers) == 2
    for seg in out.segments:  # each segment lies (mostly) inside a reference turn of its speaker's voice
        mid = (seg.start + seg.end) / 2
        voice = next((v for s, e, v in conv.turns if s - 0.3 <= mid <= e + 0.3), None)
        assert voice is not None and seg.speaker is not None
    by_voice: dict[str, set[str]] = {}
    for seg in out.segments:
        mid = (seg.start + seg.end) / 2
        voice = next(v for s, e, v in conv.turns if s - 0.3 <= mid <= e + 0.3)
        by_voice.setdefault(voice, set()).add(seg.speaker)
    assert all(len(labels) == 1 for labels in by_voice.values()), by_voice
    assert by_voice["asterisk"] != by_voice["librivox"]


def test_ferrum_diarize_writes_rttm_and_json(tmp_path, capsys):
    import json

    import soundfile as sf

    from executors.transcripts.rttm import parse_rttm
    from ferrum_cli.main import main

    conv = conversation(["asterisk", "librivox"], n_turns=4, seed=3)
    sf.write(tmp_path / "talk.wav", conv.audio, 16000)
    (tmp_path / "broken.wav").write_text("not audio")
    out = tmp_path / "out"
    code = main(["diarize", str(tmp_path / "talk.wav"), str(tmp_path / "broken.wav"), "-o", str(out), "-q",
                 "--num-speakers", "2"])
    assert code == 1 and "broken.wav" in capsys.readouterr().err  # one bad input does not stop the rest
    turns = parse_rttm((out / "talk.rttm").read_text())["talk"]
    assert {t[2] for t in turns} == {"SPEAKER_00", "SPEAKER_01"}
    assert main(["diarize", str(tmp_path / "talk.wav"), "-f", "json", "-o", str(out), "-q"]) == 0
    data = json.loads((out / "talk.json").read_text())
    assert data["file"] == "talk" and data["speakers"] == ["SPEAKER_00", "SPEAKER_01"]
    assert main(["diarize", str(tmp_path / "talk.wav"), "--min-speakers", "3", "--max-speakers", "2"]) == 1
