"""Speech the transcript heard (issue 27): Whisper's words as speech evidence, and a speaker for every word.

Real voices joined from tests/data clips, the real segmentation network, CAM++ and Whisper tiny.en.
"""

from __future__ import annotations

import json

import numpy as np
from fixture_data import conversation

from executors.diarization import Diarization, SpeakerTurn, assign_speakers, diarize, transcript_speech
from executors.transcripts.results import Segment, Transcript, Word

QUIET_TURN = 2  # asterisk, 9.3-11.5 s, between two librivox turns


def _whisper_words(audio, tmp_path) -> Transcript:
    import soundfile as sf

    from executors.models.store import resolve_model
    from executors.whisper import WhisperModelExecutor
    from executors.whisper.options import TranscribeOptions

    path = tmp_path / "clear.wav"
    sf.write(path, audio, 16000)
    whisper = WhisperModelExecutor.from_path(resolve_model("whisper-tiny.en").path, device="cpu", threads=2)
    return whisper.transcribe(path, TranscribeOptions(language="en", word_timestamps=True))


def _attenuated(audio: np.ndarray, start: float, end: float, db: float) -> np.ndarray:
    out = audio.copy()
    out[int(start * 16000):int(end * 16000)] *= np.float32(10 ** (db / 20))
    return out


def _cover(turns: list[SpeakerTurn], start: float, end: float) -> dict[str, float]:
    """Seconds of [start, end] each speaker's turns cover."""
    out: dict[str, float] = {}
    for t in turns:
        overlap = min(end, t.end) - max(start, t.start)
        if overlap > 0:
            out[t.speaker] = out.get(t.speaker, 0.0) + overlap
    return out


def test_a_turn_only_the_words_hold_goes_to_its_voice(tmp_path):
    """One turn 50 dB down: Silero VAD and the segmentation network drop it (so does Whisper there: its words
    are those of the same conversation at full level). With the words, it is speech, and the voice print of
    the stretch gives it to its own voice, not to the neighbours in time (the other voice, on both sides)."""
    conv = conversation(["asterisk", "librivox"], n_turns=6, seed=3)
    start, end, voice = conv.turns[QUIET_TURN]
    assert voice == "asterisk" and {conv.turns[QUIET_TURN - 1][2], conv.turns[QUIET_TURN + 1][2]} == {"librivox"}
    transcript = _whisper_words(conv.audio, tmp_path)
    quiet = _attenuated(conv.audio, start, end, -50)

    without = diarize(quiet)
    assert sum(_cover([SpeakerTurn(s, e, "") for s, e in without.speech], start, end).values()) < 0.1 * (end - start)

    words = transcript_speech(transcript)
    inside = [(s, e) for s, e in words if start - 0.2 <= s and e <= end + 0.2]
    assert len(inside) >= 4  # "The echo test has been completed."
    d = diarize(quiet, heard=words)
    own = max((c := _cover(d.turns, *conv.turns[0][:2])), key=c.get)  # asterisk's first turn, heard loud
    heard_there = _cover(d.turns, inside[0][0], inside[-1][1])
    assert heard_there.get(own, 0.0) >= 0.8 * (inside[-1][1] - inside[0][0]), (own, heard_there)
    assert len(d.speakers) == 2

    labelled = assign_speakers(transcript, d)
    all_words = [w for seg in labelled.segments for w in seg.words or []]
    assert all_words and all(w.speaker is not None for w in all_words)
    assert {w.speaker for w in all_words if start <= (w.start + w.end) / 2 <= end} == {own}


def test_every_word_gets_a_speaker_however_far_from_the_turns():
    words = [Word(0.0, 0.4, " Hi.", 0.9), Word(5.0, 5.4, " Far", 0.9), Word(5.4, 5.8, " away.", 0.9)]
    transcript = Transcript("en", 1.0, 12.0, [Segment(0, 0.0, 0.4, " Hi.", words=words[:1]),
                                              Segment(1, 5.0, 5.8, " Far away.", words=words[1:]),
                                              Segment(2, 11.0, 11.5, " Bye.")])
    turns = [SpeakerTurn(0.0, 0.5, "SPEAKER_00"), SpeakerTurn(8.0, 9.0, "SPEAKER_01")]
    out = assign_speakers(transcript, Diarization(turns, 12.0))
    assert [w.speaker for s in out.segments for w in s.words or []] == ["SPEAKER_00", "SPEAKER_01", "SPEAKER_01"]
    assert [s.speaker for s in out.segments] == ["SPEAKER_00", "SPEAKER_01", "SPEAKER_01"]
    nobody = assign_speakers(transcript, Diarization([], 12.0))  # someone said what was transcribed
    assert {w.speaker for s in nobody.segments for w in s.words or []} | {s.speaker for s in nobody.segments} \
        == {"SPEAKER_00"}


def test_speech_heard_where_no_voice_talks_anywhere_gets_one_speaker():
    from executors.diarization.turns import fill_heard_speech

    heard = np.zeros(10, bool)
    heard[2:6] = True
    filled = fill_heard_speech(np.zeros((10, 0), bool), heard)
    assert filled.shape == (10, 1) and filled[:, 0].tolist() == heard.tolist()


def test_span_frames_marks_frames_starting_inside_any_span():
    from executors.diarization.activity import frame_start
    from executors.diarization.turns import span_frames

    starts = frame_start(np.arange(200))
    spans = [(1.0, 1.5), (0.2, 0.3), (1.4, 2.0), (3.0, 2.9)]  # unsorted, overlapping, one empty
    expected = np.zeros(200, bool)
    for s, e in spans:
        expected |= (starts >= s) & (starts < e)
    assert span_frames(spans, 200).tolist() == expected.tolist() and span_frames([], 200).sum() == 0


def _transcribe_json(tmp_path, capsys, *options: str) -> dict:
    """``ferrum transcribe tmp_path/talk.wav --format json *options`` through the real CLI; its JSON."""
    from ferrum_cli.main import main

    code = main(["transcribe", str(tmp_path / "talk.wav"), *options, "--format", "json", "--output-dir",
                 str(tmp_path), "--threads", "2", "--quiet", "--no-history"])
    assert code == 0, capsys.readouterr().err
    return json.loads((tmp_path / "talk.json").read_text(encoding="utf-8"))


def test_transcribe_diarize_json_gives_every_word_a_speaker(tmp_path, capsys):
    """``ferrum transcribe --diarize --format json`` on two real voices, one turn 35 dB down (the network drops
    it, Whisper does not): every word has a speaker, and the quiet turn's words have their own voice's."""
    import soundfile as sf

    conv = conversation(["asterisk", "librivox"], n_turns=6, seed=3)
    start, end, _ = conv.turns[QUIET_TURN]
    sf.write(tmp_path / "talk.wav", _attenuated(conv.audio, start, end, -35), 16000)
    data = _transcribe_json(tmp_path, capsys, "--diarize")
    assert data["words"] and all(w["speaker"] for w in data["words"])
    assert all(s["speaker"] for s in data["segments"])
    first_turn = {w["speaker"] for w in data["words"] if w["end"] <= conv.turns[0][1] + 0.2}
    quiet_words = [w for w in data["words"] if start <= (w["start"] + w["end"]) / 2 <= end]
    assert len(first_turn) == 1 and quiet_words
    assert {w["speaker"] for w in quiet_words} == first_turn



def test_fast_long_files_give_every_word_and_segment_a_speaker(tmp_path, capsys):
    """``--fast-long-files --diarize`` (issue 25): a window joins both voices' turns into one segment, which
    the speaker turns split; every word and segment has a speaker, segments stay in order, and each voice's
    words go to a speaker of their own."""
    import soundfile as sf

    conv = conversation(["asterisk", "librivox"], n_turns=6, seed=3)
    sf.write(tmp_path / "talk.wav", conv.audio, 16000)
    data = _transcribe_json(tmp_path, capsys, "--fast-long-files", "--diarize")
    segments, words = data["segments"], data["words"]
    assert words and all(w["speaker"] for w in words) and all(s["speaker"] for s in segments)
    assert all(a["end"] <= b["start"] for a, b in zip(segments, segments[1:]))
    heard: dict[str, list[str]] = {}
    for start, end, voice in conv.turns:
        inside = [w["speaker"] for w in words if start + 0.3 <= (w["start"] + w["end"]) / 2 <= end - 0.3]
        heard.setdefault(voice, []).extend(inside)
    majority = {voice: max(set(labels), key=labels.count) for voice, labels in heard.items() if labels}
    assert len(majority) == 2 and len(set(majority.values())) == 2, heard
