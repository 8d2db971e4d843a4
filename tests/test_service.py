"""The engine service: one loader and one model name, transcription into the history, the job queue."""

from __future__ import annotations

import threading

import pytest

from executors.core.errors import Cancelled, NotFoundError
from executors.transcripts.history import RecordStatus
from tests.audio_fixtures import DEV_CLIP, SPEECH_DIR, read_reference
from tests.speech_eval import corpus_wer

SHORT = SPEECH_DIR / "pocketsphinx" / "goforward.flac"
GUARD_S = 300


@pytest.fixture()
def engine(make_engine, whisper_tiny_int8):
    return make_engine(whisper=whisper_tiny_int8)


def test_the_one_loader_names_models_by_their_store_name():
    from executors.service import ServiceSettings, load_model

    model = load_model("whisper", ServiceSettings(device="cpu", threads=1))
    assert model.model_id == model.executor.model_id == "whisper-tiny.en"  # not its cache folder's name
    assert model.source == "bundled" and model.multilingual is False
    with pytest.raises(NotFoundError, match="no-such-model"):
        load_model("embedding", ServiceSettings(embedding_model="no-such-model"))


def test_transcription_lands_in_the_history_with_events(engine):
    from executors.service import HistoryChanged, JobFinished, JobStarted, SegmentProduced

    events = []
    engine.subscribe(events.append)
    result = engine.transcribe(DEV_CLIP).result(GUARD_S)
    assert corpus_wer([read_reference()], [result.transcript.text]) < 20.0
    record = engine.history.load(result.record_id)
    assert record.status is RecordStatus.DONE and record.source == str(DEV_CLIP)
    assert record.model_id == "whisper-tiny.en" and record.audio_path == str(DEV_CLIP)
    assert [s.text for s in record.transcript.segments] == [s.text for s in result.transcript.segments]
    kinds = [type(e) for e in events if not isinstance(e, HistoryChanged)]
    started, finished = kinds.index(JobStarted), kinds.index(JobFinished)
    assert started < kinds.index(SegmentProduced) < finished and JobFinished not in kinds[:started]
    assert any(isinstance(e, HistoryChanged) and e.record_id == result.record_id for e in events)
    assert engine.history.export(result.record_id, fmt="srt").startswith("1\n00:00:00")

    unsaved = engine.transcribe(SHORT, save=False).result(GUARD_S)
    assert unsaved.record_id is None and "forward" in unsaved.transcript.text.lower()
    assert [e.id for e in engine.history.list()] == [result.record_id]


def test_queued_job_cancels_at_once_and_running_job_keeps_its_part(engine, tmp_path):
    import numpy as np
    import soundfile as sf

    # the 13 different LibriVox sentences, ~100 s (one sentence tiled would be a repetition loop to the decoder)
    long = tmp_path / "long.wav"
    clips = [sf.read(str(p), dtype="float32")[0] for p in sorted((SPEECH_DIR / "pocketsphinx").glob("*.flac"))]
    sf.write(str(long), np.concatenate([part for clip in clips for part in (clip, np.zeros(8000, np.float32))]), 16000)
    started = threading.Event()
    running = engine.transcribe(long, on_segment=lambda _s: started.set())
    queued = engine.transcribe(SHORT)
    assert started.wait(GUARD_S)
    assert queued.cancel()
    with pytest.raises(Cancelled, match="before it started"):
        queued.result(0)  # settled at once, not when the running job ends
    assert not running.done()
    running.cancel()
    with pytest.raises(Cancelled) as info:
        running.result(GUARD_S)
    assert info.value.partial.segments
    [entry] = engine.history.list()  # the queued job never made a record
    assert entry.source == str(long) and entry.status is RecordStatus.CANCELLED and entry.segment_count >= 1
    assert engine.jobs.active() == [] and not engine.cancel(running.job_id)
