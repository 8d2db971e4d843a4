"""Regression (issue 12, bug 2): a dictation pass never waits behind a whole file job.

A long file transcribes on the engine service's Whisper worker while a live dictation session (a dev
clip played in real time) runs on the same model. The scheduler hands the model to each waiting pass
at the file's next 30 s window, so the assertions are structural: while any pass waited, the file job
finished at most the one window it was in; the pass got the model as that window ended; while the
file's windows took less time than the capture ring holds, the ring never overflowed; both texts are
what each would be alone.
"""

from __future__ import annotations

import bisect
import threading
import time

import numpy as np
import pytest
import soundfile as sf

from executors.core.turns import Urgency
from tests.audio_fixtures import DEV_CLIP, SPEECH_DIR, read_reference
from tests.speech_eval import corpus_wer

FILE_SECONDS = 300.0   # ten 30 s windows: the file job must outlast a 7 s dictation
HANDOVER_SLACK_S = 1.0  # from the end of the window in progress to the pass's turn: a loop check, no work
GUARD_S = 900           # hang guard, not a timing assertion


@pytest.fixture(scope="module")
def long_file(tmp_path_factory):
    clips = [sf.read(str(p), dtype="float32")[0] for p in sorted((SPEECH_DIR / "pocketsphinx").glob("*.flac"))]
    gap = np.zeros(8000, np.float32)
    audio = np.concatenate([piece for clip in clips for piece in (clip, gap)])
    audio = np.tile(audio, int(np.ceil(FILE_SECONDS * 16000 / len(audio))))[: int(FILE_SECONDS * 16000)]
    path = tmp_path_factory.mktemp("long") / "long.wav"
    sf.write(str(path), audio, 16000)
    return path


@pytest.mark.timeout(GUARD_S)
def test_dictation_pass_waits_at_most_one_window_of_a_running_file(whisper_tiny_int8, long_file, tmp_path):
    from executors.dictation import DictationOptions, FileSource, Overrun, UtteranceEnd
    from executors.service import EngineService, ServiceSettings

    alone = whisper_tiny_int8.transcribe(long_file).text
    turns = whisper_tiny_int8.turns
    turns.waits.clear()
    handovers_before = turns.handovers
    settings = ServiceSettings(history_db=tmp_path / "history.db", search_db=tmp_path / "search.db",
                               auto_index_transcripts=False)
    windows: list[float] = []   # when each file window ended (monotonic)
    first_window = threading.Event()

    def on_progress(_progress) -> None:
        windows.append(time.monotonic())
        if len(windows) >= 2:  # the 0 s mark, then the first window
            first_window.set()

    with EngineService(settings, executors={"whisper": whisper_tiny_int8}) as engine:
        job = engine.transcribe(long_file, on_progress=on_progress)
        assert first_window.wait(GUARD_S), "the file job never started"
        events: list = []
        session = engine.dictation.start(FileSource(DEV_CLIP, speed=1.0), DictationOptions(), events.append,
                                         record=False).result(GUARD_S)
        dictation_ended = time.monotonic()
        result = job.result(GUARD_S)

    file_ended = windows[-1]
    assert dictation_ended < file_ended, "the file finished before the dictation: nothing was interleaved"
    live = [w for w in turns.waits if w.urgency is Urgency.LIVE]
    assert live and turns.handovers > handovers_before, "no pass ever had to wait for the file job"
    for wait in live:
        during = [t for t in windows if wait.requested < t < wait.granted]
        assert len(during) <= 1, f"a pass waited while the file job finished {len(during)} windows"
        window_end = windows[bisect.bisect_left(windows, wait.requested)] if wait.requested < file_ended else 0.0
        assert wait.granted <= window_end + HANDOVER_SLACK_S, "a pass waited past the end of the window in progress"
    longest_window = max(b - a for a, b in zip(windows, windows[1:]))
    if longest_window < DictationOptions().ring_seconds:  # (a machine so busy that one window outlasts the ring
        assert not [e for e in events if isinstance(e, Overrun)], "the capture ring overflowed"  # drops anyway)
    assert [e for e in events if isinstance(e, UtteranceEnd)]
    assert corpus_wer([read_reference()], [session.text]) <= 25.0, session.text
    assert result.transcript.text == alone  # the passes in between changed nothing of the file's decoding
