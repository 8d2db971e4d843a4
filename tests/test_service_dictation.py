"""Regression (issue 12, bug 3): dictation sessions keep their own audio, unsaved audio goes away.

Saving after several sessions used to store every session's text against the last session's audio, and
every session's FLAC stayed on disk forever. Now each session records into the service's scratch folder;
saving stores each session as its own record with its own recording; a discarded session, or one still
unsaved when the service closes, deletes its recording.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import soundfile as sf

from tests.audio_fixtures import SPEECH_DIR, read_reference
from tests.speech_eval import corpus_wer

CLIPS = [SPEECH_DIR / "pocketsphinx" / "goforward.flac",
         SPEECH_DIR / "pocketsphinx" / "librivox_sense_and_sensibility_01_austen_64kb-0870.flac"]
GUARD_S = 300


def _dictate(engine, clip):
    from executors.dictation import FileSource

    return engine.dictation.start(FileSource(clip, speed=0)).result(GUARD_S)


def test_each_saved_session_keeps_its_own_audio_and_unsaved_audio_is_deleted(whisper_tiny_int8, tmp_path):
    from executors.service import EngineService, ServiceSettings

    settings = ServiceSettings(history_db=tmp_path / "history.db", auto_index_transcripts=False)
    engine = EngineService(settings, executors={"whisper": whisper_tiny_int8})
    try:
        first, second = (_dictate(engine, clip) for clip in CLIPS)
        assert first.audio_path != second.audio_path and first.audio_path.is_file() and second.audio_path.is_file()
        scratch = first.audio_path.parent

        saved = engine.dictation.save()
        assert len(saved) == 2 and engine.dictation.save() == []  # saved once only
        for record_id, session, clip in zip(saved, (first, second), CLIPS):
            record = engine.history.load(record_id)
            assert record.kind == "dictation"
            assert record.transcript.text.split() == session.text.split()
            assert corpus_wer([read_reference(clip)], [record.transcript.text]) <= 30.0, record.transcript.text
            audio = sf.info(record.audio_path)
            assert abs(audio.duration - sf.info(str(clip)).duration) < 0.1  # this session's recording
            assert scratch not in Path(record.audio_path).parents  # moved out of the scratch folder
        assert len({engine.history.load(r).audio_path for r in saved}) == 2

        discarded = _dictate(engine, CLIPS[0])
        assert discarded.audio_path.is_file()
        assert engine.dictation.discard([discarded.id]) == 1
        assert not discarded.audio_path.exists()

        left_unsaved = _dictate(engine, CLIPS[1])
        assert left_unsaved.audio_path.is_file()
    finally:
        engine.close()
    assert not left_unsaved.audio_path.exists() and not scratch.exists()
    from executors.transcripts.history import TranscriptHistory

    with TranscriptHistory(tmp_path / "history.db") as history:  # what was saved stays
        assert all(sf.info(history.load(record_id).audio_path).duration > 1.0 for record_id in saved)


def test_scratch_of_an_ended_process_is_swept(tmp_path):
    from executors.service.scratch import ScratchFolder

    root = tmp_path / "unsaved"
    ended = root / "12345-dead"
    ended.mkdir(parents=True)
    (ended / "dictation-1.flac").write_bytes(b"left over by a crash")
    (ended / ".lock").touch()
    old = time.time() - 3600
    os.utime(ended, (old, old))
    mine = ScratchFolder(root)
    alive = ScratchFolder(root)
    assert mine.path.is_dir() and not ended.exists()  # nobody held its lock
    assert alive.path.is_dir()
    os.utime(mine.path, (old, old))
    alive.sweep()
    assert mine.path.is_dir()  # its process (this one) still holds the lock
    mine.close()
    alive.close()
    assert not any(root.iterdir())
