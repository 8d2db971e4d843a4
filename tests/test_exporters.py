"""Transcript exporters: exact timestamp formats, round trips through SRT/VTT/JSON, OpenAI's shape."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from executors.core.errors import InvalidFormatError, InvalidParameterError
from executors.transcripts.exporters import (
    EXPORT_FORMATS,
    format_timestamp,
    parse_srt,
    parse_vtt,
    render_transcript,
    to_verbose_json,
    transcript_from_json,
    write_transcript,
)
from executors.transcripts.results import Segment, Transcript, Word


def _transcript(words: bool = False) -> Transcript:
    segs = [
        Segment(0, 0.0, 2.4996, " Hello there.", tokens=[50364, 2425, 456, 13], avg_logprob=-0.21,
                compression_ratio=1.1, no_speech_prob=0.01),
        Segment(1, 2.5, 62.345, " Second line --> with an arrow", tokens=[1, 2], temperature=0.2),
        Segment(2, 3725.0004, 3730.9999, " An hour later.\n\nStill here."),
    ]
    if words:
        segs[0].words = [Word(0.0, 0.6, " Hello", 0.9), Word(0.6, 2.4, " there.", 0.8)]
        segs[1].words = [Word(2.5, 3.0, " Second", 0.7)]
    return Transcript(language="en", language_probability=0.98, duration=3731.0, segments=segs,
                      model_id="whisper-tiny.en")


@pytest.mark.parametrize(("seconds", "srt", "vtt"), [
    (0.0, "00:00:00,000", "00:00:00.000"),
    (62.345, "00:01:02,345", "00:01:02.345"),
    (59.9996, "00:01:00,000", "00:01:00.000"),     # never 00:00:59,1000
    (3599.9995, "01:00:00,000", "01:00:00.000"),
    (3725.0004, "01:02:05,000", "01:02:05.000"),
    (1.0005, "00:00:01,000", "00:00:01.000"),      # 1.0005 * 1000 is just under 1000.5 in binary
    (1.2344, "00:00:01,234", "00:00:01.234"),
    (-0.2, "00:00:00,000", "00:00:00.000"),
    (360000.0, "100:00:00,000", "100:00:00.000"),
])
def test_timestamp_formats(seconds, srt, vtt):
    assert format_timestamp(seconds, "srt") == srt
    assert format_timestamp(seconds, "vtt") == vtt


def test_srt_layout_and_round_trip():
    t = _transcript()
    text = render_transcript(t, "srt")
    assert text.startswith("1\n00:00:00,000 --> 00:00:02,500\nHello there.\n\n2\n00:00:02,500 --> 00:01:02,345\n")
    cues = parse_srt(text)
    assert [c[2] for c in cues] == ["Hello there.", "Second line -> with an arrow", "An hour later.\nStill here."]
    for (start, end, _), seg in zip(cues, t.segments):
        assert start == pytest.approx(seg.start, abs=0.0005) and end == pytest.approx(seg.end, abs=0.0005)


def test_vtt_layout_and_round_trip():
    t = _transcript()
    text = render_transcript(t, "vtt")
    assert text.startswith("WEBVTT\n\n00:00:00.000 --> 00:00:02.500\nHello there.\n\n")
    assert "01:02:05.000 --> 01:02:11.000" in text
    cues = parse_vtt(text)
    assert [(round(s, 3), round(e, 3)) for s, e, _ in cues] == [(0.0, 2.5), (2.5, 62.345), (3725.0, 3731.0)]


def test_parsers_accept_real_world_variants():
    vtt = ("\ufeffWEBVTT - made elsewhere\r\n\r\nNOTE a comment\r\n\r\ncue-1\r\n"
           "01:02.500 --> 01:04.000 align:start position:10%\r\nShort hours\r\n\r\n")
    assert parse_vtt(vtt) == [(62.5, 64.0, "Short hours")]
    srt = ("1\r\n00:00:01,5 --> 00:00:02,25\r\nfirst\r\nline two\r\n\r\n\r\n"
           "2\r\n00:00:03,000 --> 00:00:04,000\r\nsecond\r\n")
    assert parse_srt(srt) == [(1.5, 2.25, "first\nline two"), (3.0, 4.0, "second")]
    with pytest.raises(InvalidFormatError):
        parse_vtt("1\n00:00:01,000 --> 00:00:02,000\nnot vtt\n")
    with pytest.raises(InvalidFormatError):
        parse_srt("1\n00:00:01 --> soon\ntext\n")


def test_verbose_json_has_openai_shape():
    data = to_verbose_json(_transcript(words=True))
    assert data["task"] == "transcribe" and data["language"] == "english"
    assert data["duration"] == 3731.0
    assert data["text"] == _transcript().text
    seg = data["segments"][0]
    assert set(seg) == {"id", "seek", "start", "end", "text", "tokens", "temperature", "avg_logprob",
                        "compression_ratio", "no_speech_prob"}
    assert seg["tokens"] == [50364, 2425, 456, 13] and seg["avg_logprob"] == -0.21
    assert [w["word"] for w in data["words"]] == [" Hello", " there.", " Second"]
    assert set(data["words"][0]) >= {"word", "start", "end"}
    assert "words" not in to_verbose_json(_transcript(words=False))
    json.dumps(data)  # plain JSON types only


def test_json_round_trip_restores_the_transcript():
    original = _transcript(words=True)
    restored = transcript_from_json(render_transcript(original, "json"))
    assert restored.language == "en" and restored.duration == original.duration
    assert [s.text for s in restored.segments] == [s.text for s in original.segments]
    assert [s.tokens for s in restored.segments] == [s.tokens for s in original.segments]
    assert restored.segments[0].words == original.segments[0].words
    assert restored.segments[1].words == original.segments[1].words
    assert restored.segments[2].words is None
    assert transcript_from_json(original.to_dict()).segments[0].words == original.segments[0].words
    with pytest.raises(InvalidFormatError):
        transcript_from_json('{"segments": [{"start": 1}]}')


def test_txt_is_one_line_per_segment():
    text = render_transcript(_transcript(), "txt")
    assert text.splitlines()[0] == "Hello there."
    assert text.endswith("Still here.\n")


def test_write_to_path_and_file_object(tmp_path):
    t = _transcript()
    for fmt in EXPORT_FORMATS:
        path = write_transcript(t, fmt, tmp_path / "sub" / f"out.{fmt}")
        assert path.read_text(encoding="utf-8") == render_transcript(t, fmt)
    buf = io.StringIO()
    assert write_transcript(t, "srt", buf) is None
    assert parse_srt(buf.getvalue())[1][1] == pytest.approx(62.345)
    with pytest.raises(InvalidParameterError, match="docx"):
        write_transcript(t, "docx", tmp_path / "x.docx")


def test_empty_transcript_exports_cleanly():
    empty = Transcript(language="en", language_probability=1.0, duration=0.0)
    assert parse_srt(render_transcript(empty, "srt")) == []
    assert parse_vtt(render_transcript(empty, "vtt")) == []
    assert transcript_from_json(render_transcript(empty, "json")).segments == []


def test_the_typed_extension_decides_the_export_format():
    from executors.transcripts.exporters import export_target

    assert export_target("notes.vtt", "srt") == (Path("notes.vtt"), "vtt")
    assert export_target("/x/notes.TXT", "json") == (Path("/x/notes.TXT"), "txt")
    assert export_target("notes", "srt") == (Path("notes.srt"), "srt")
    assert export_target("notes.final", "json") == (Path("notes.final.json"), "json")
    assert export_target("notes") == (Path("notes.txt"), "txt")
    with pytest.raises(InvalidParameterError):
        export_target("notes", "docx")


def _diarized() -> Transcript:
    from executors.transcripts.results import Word as W

    a = Segment(0, 0.0, 1.0, " Hello there.", words=[W(0.0, 0.4, " Hello", 0.9, "SPEAKER_00"),
                                                     W(0.4, 1.0, " there.", 0.9, "SPEAKER_00")], speaker="SPEAKER_00")
    b = Segment(1, 1.2, 2.0, " Hi <you>.", speaker="SPEAKER_01")
    c = Segment(2, 2.1, 3.0, " How are you?", speaker="SPEAKER_01")
    return Transcript("en", 1.0, 3.0, [a, b, c], speaker_names={"SPEAKER_01": "Ada & Bo"})


def test_speakers_appear_by_name_in_every_format():
    from executors.transcripts.exporters import render_transcript
    from executors.transcripts.rttm import parse_rttm

    t = _diarized()
    assert render_transcript(t, "txt") == "Speaker 1: Hello there.\nAda & Bo: Hi <you>. How are you?\n"
    assert "[Speaker 1] Hello there." in render_transcript(t, "srt")
    assert [c[2] for c in parse_srt(render_transcript(t, "srt"))][1] == "[Ada & Bo] Hi <you>."
    assert "<v Ada &amp; Bo>Hi <you>." in render_transcript(t, "vtt")
    data = json.loads(render_transcript(t, "json"))
    assert data["speakers"] == [{"id": "SPEAKER_00", "name": "Speaker 1"}, {"id": "SPEAKER_01", "name": "Ada & Bo"}]
    assert [s["speaker"] for s in data["segments"]] == ["Speaker 1", "Ada & Bo", "Ada & Bo"]
    assert [w["speaker"] for w in data["words"]] == ["Speaker 1", "Speaker 1"]
    turns = parse_rttm(render_transcript(t, "rttm", file_id="my talk"))["my_talk"]
    assert turns == [(0.0, 1.0, "Speaker_1"), (1.2, 3.0, "Ada_&_Bo")]


def test_diarized_json_reads_back_with_labels_and_names():
    from executors.transcripts.exporters import render_transcript

    back = transcript_from_json(render_transcript(_diarized(), "json"))
    assert [s.speaker for s in back.segments] == ["SPEAKER_00", "SPEAKER_01", "SPEAKER_01"]
    assert back.speaker_names == {"SPEAKER_01": "Ada & Bo"}
    assert back.segments[0].words[0].speaker == "SPEAKER_00"


def test_rttm_needs_speakers():
    from executors.transcripts.exporters import render_transcript

    with pytest.raises(InvalidParameterError):
        render_transcript(Transcript("en", 1.0, 1.0, [Segment(0, 0.0, 1.0, " Hi.")]), "rttm")


@pytest.mark.parametrize("code, name", [("de", "german"), ("yue", "cantonese"), ("haw", "hawaiian")])
def test_every_language_reads_back_from_its_json_name(code, name):
    from dataclasses import replace

    exported = render_transcript(replace(_transcript(), language=code), "json")
    assert json.loads(exported)["language"] == name
    assert transcript_from_json(exported).language == code


def test_json_export_does_not_import_transformers():
    import subprocess
    import sys

    probe = ("import sys\n"
             "from executors.transcripts.exporters import render_transcript\n"
             "from executors.transcripts.results import Segment, Transcript\n"
             "render_transcript(Transcript(language='fr', language_probability=1.0, duration=1.0, segments=[Segment(0, 0.0, 1.0, ' Oui.')]),"
             " 'json')\n"
             "print('transformers' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
