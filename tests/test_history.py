"""Transcript history (Qt-free): append/finish/load/edit/list, crash safety, dictation, delete."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from executors.core.errors import NotFoundError
from executors.transcripts.history import RecordStatus, TranscriptHistory
from executors.transcripts.results import Segment, Transcript, Word
from executors.whisper.options import TranscribeOptions


def _seg(i: int, text: str, words: bool = False) -> Segment:
    w = [Word(i * 2.0, i * 2.0 + 0.5, text.split()[0], 0.9)] if words else None
    return Segment(id=i, start=i * 2.0, end=i * 2.0 + 1.8, text=text, tokens=[50364 + i, 11],
                   avg_logprob=-0.25, no_speech_prob=0.01, words=w)


@pytest.fixture
def history(tmp_path):
    h = TranscriptHistory(tmp_path / "history.sqlite3")
    yield h
    h.close()


def test_append_finish_load_roundtrip(history):
    rid = history.begin("/audio/talk.wav", "whisper-tiny.en", TranscribeOptions(language="en", word_timestamps=True))
    history.append_segment(rid, _seg(0, " Hello there.", words=True))
    history.append_segment(rid, _seg(1, " Press one for sales."))
    assert history.load(rid).status is RecordStatus.RUNNING
    final = Transcript(language="en", language_probability=0.97, duration=4.2,
                       segments=[_seg(0, " Hello there.", words=True), _seg(1, " Press one for sales."),
                                 _seg(2, " Goodbye.")], model_id="whisper-tiny.en")
    history.finish(rid, final)

    rec = history.load(rid)
    assert rec.status is RecordStatus.DONE
    assert rec.source == "/audio/talk.wav" and rec.audio_path == "/audio/talk.wav"
    assert rec.options["word_timestamps"] is True and rec.options["language"] == "en"
    assert rec.transcript.text == "Hello there. Press one for sales. Goodbye."
    assert rec.transcript.duration == pytest.approx(4.2)
    assert rec.transcript.language == "en"
    assert [s.id for s in rec.transcript.segments] == [0, 1, 2]
    first = rec.transcript.segments[0]
    assert first.tokens == [50364, 11] and first.avg_logprob == pytest.approx(-0.25)
    assert first.words is not None and first.words[0].word == "Hello"
    assert rec.transcript.segments[1].words is None


def test_list_newest_first_with_metadata(history):
    a = history.begin("/a/first.flac", "m", {"language": "en"})
    history.finish(a, Transcript("en", 1.0, 3.0, [_seg(0, " one")]))
    b = history.begin("/b/second.mp4", "m", {})
    history.fail(b, "Could not decode /b/second.mp4")
    entries = history.list()
    assert [e.id for e in entries] == [b, a]
    assert entries[0].status is RecordStatus.FAILED and "decode" in entries[0].error
    assert entries[1].name == "first.flac" and entries[1].duration == pytest.approx(3.0)
    assert entries[1].language == "en" and entries[1].segment_count == 1
    assert [e.id for e in history.list(limit=1)] == [b]


def test_edit_is_kept_across_finish_and_reopen(tmp_path):
    path = tmp_path / "h.sqlite3"
    h = TranscriptHistory(path)
    rid = h.begin("clip.wav", "m", None)
    h.append_segment(rid, _seg(0, " helo wrld"))
    h.update_segment_text(rid, 0, " Hello world")
    h.finish(rid, Transcript("en", 1.0, 2.0, [_seg(0, " helo wrld"), _seg(1, " again")]))
    h.close()

    reopened = TranscriptHistory(path)
    rec = reopened.load(rid)
    assert rec.transcript.segments[0].text == " Hello world"
    assert rec.edited_segments == {0}
    assert rec.transcript.segments[1].text == " again"
    with pytest.raises(NotFoundError):
        reopened.update_segment_text(rid, 99, "x")
    reopened.close()


def test_cancel_keeps_partial_segments(history):
    rid = history.begin("long.wav", "m", None)
    history.append_segment(rid, _seg(0, " first"))
    history.cancel(rid, Transcript("en", 1.0, 120.0, [_seg(0, " first"), _seg(1, " second")]))
    rec = history.load(rid)
    assert rec.status is RecordStatus.CANCELLED
    assert [s.text for s in rec.transcript.segments] == [" first", " second"]


def test_crash_leaves_interrupted_record_with_segments(tmp_path):
    """A process that dies mid-transcription (no finish, no close) loses nothing already appended."""
    db = tmp_path / "crash.sqlite3"
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from executors.transcripts.history import TranscriptHistory
        from executors.transcripts.results import Segment
        h = TranscriptHistory({str(db)!r})
        rid = h.begin("meeting.wav", "whisper-tiny.en", {{"language": "en"}})
        for i in range(3):
            h.append_segment(rid, Segment(id=i, start=i * 5.0, end=i * 5.0 + 4.0, text=f" part {{i}}"))
        print(rid, flush=True)
        os._exit(9)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 9, proc.stderr
    rid = int(proc.stdout.strip())

    h = TranscriptHistory(db)
    [entry] = h.list()
    assert entry.id == rid and entry.status is RecordStatus.INTERRUPTED
    assert entry.segment_count == 3 and entry.duration == pytest.approx(14.0)
    rec = h.load(rid)
    assert rec.status is RecordStatus.INTERRUPTED
    assert [s.text for s in rec.transcript.segments] == [" part 0", " part 1", " part 2"]
    h.close()


def test_dictation_and_delete(history):
    rid = history.add_dictation("/rec/session.flac", Transcript("en", 1.0, 2.5, [_seg(0, " note to self")]))
    rec = history.load(rid)
    assert rec.kind == "dictation" and rec.audio_path == "/rec/session.flac"
    assert rec.status is RecordStatus.DONE and rec.transcript.text == "note to self"
    history.delete(rid)
    assert history.list() == []
    with pytest.raises(NotFoundError):
        history.load(rid)


def test_history_uses_wal_and_default_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FERRUM_DATA_DIR", str(tmp_path / "data"))
    h = TranscriptHistory()
    assert h.path == tmp_path / "data" / "history.sqlite3"
    h.begin("x.wav")
    import sqlite3
    mode = sqlite3.connect(h.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode.lower() == "wal"
    h.close()


def test_saving_the_same_dictation_twice_keeps_one_entry(history):
    first = history.add_dictation("/rec/session.flac", Transcript("en", 1.0, 2.5, [_seg(0, " note to self")]))
    corrected = Transcript("en", 1.0, 4.5, [_seg(0, " note to self"), _seg(1, " buy milk")])
    assert history.add_dictation("/rec/session.flac", corrected) == first
    assert [e.id for e in history.list()] == [first]
    assert history.load(first).transcript.text == "note to self buy milk"
    other = history.add_dictation("/rec/other.flac", corrected)
    assert other != first and len(history.list()) == 2


def test_reverting_an_edit_restores_the_decoded_text(history):
    rid = history.begin("a.wav")
    history.finish(rid, Transcript("en", 1.0, 4.0, [_seg(0, " Five."), _seg(1, " Six.")]))
    history.update_segment_text(rid, 0, " x")
    rec = history.load(rid)
    assert rec.edited_segments == {0} and rec.original_texts == {0: " Five."}
    assert rec.transcript.segments[0].text == " x"
    history.update_segment_text(rid, 0, "Five.")  # typing the decoded text back is no edit
    assert history.load(rid).edited_segments == set()
    history.update_segment_text(rid, 1, " Seven.")
    history.update_segment_text(rid, 1, None)  # revert
    rec = history.load(rid)
    assert rec.edited_segments == set() and rec.transcript.segments[1].text == " Six."


def test_speakers_and_their_names_are_kept(tmp_path):
    path = tmp_path / "history.sqlite3"
    seg_a, seg_b = _seg(0, " Hello there.", words=True), _seg(1, " Hi.", words=True)
    seg_a.speaker, seg_b.speaker = "SPEAKER_00", "SPEAKER_01"
    seg_a.words[0].speaker, seg_b.words[0].speaker = "SPEAKER_00", "SPEAKER_01"
    with TranscriptHistory(path) as h:
        rid = h.begin("talk.wav", "tiny")
        h.finish(rid, Transcript("en", 1.0, 4.0, [seg_a, seg_b]))
        h.rename_speaker(rid, "SPEAKER_01", "  Ada   Lovelace ")
    with TranscriptHistory(path) as h:  # reopened: nothing lives only in memory
        t = h.load(rid).transcript
        assert [s.speaker for s in t.segments] == ["SPEAKER_00", "SPEAKER_01"]
        assert t.segments[1].words[0].speaker == "SPEAKER_01"
        assert t.speaker_names == {"SPEAKER_01": "Ada Lovelace"}
        assert [t.speaker_name(s.speaker) for s in t.segments] == ["Speaker 1", "Ada Lovelace"]
        h.rename_speaker(rid, "SPEAKER_01", "")  # back to the default name
        assert h.load(rid).transcript.speaker_names == {}
        with pytest.raises(NotFoundError):
            h.rename_speaker(rid + 99, "SPEAKER_00", "x")
        h.delete(rid)
        assert h._read("SELECT * FROM speaker_names") == []
