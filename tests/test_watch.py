"""The watch folder: files dropped into a folder (one copied slowly in pieces) are transcribed into the
history and the search index exactly once, also after a restart; a changed file again; a removed
folder stops the watching."""

from __future__ import annotations

import shutil
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from audio_fixtures import SPEECH_DIR, copy_slowly

from executors.core.errors import NotFoundError
from executors.service.watch_folder import FolderWatcher
from executors.service.watch_ledger import WatchLedger
from executors.transcripts.exporters import parse_srt

GO_FORWARD = SPEECH_DIR / "pocketsphinx" / "goforward.flac"
ACTIVATED = SPEECH_DIR / "asterisk" / "activated.flac"
WELCOME = SPEECH_DIR / "asterisk" / "dir-welcome.flac"
DO_NOT_DISTURB = SPEECH_DIR / "asterisk" / "do-not-disturb.flac"
GUARD_S = 300


def wait_for(predicate, timeout: float = GUARD_S, what: str = "the watch folder") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_the_ledger_queues_each_version_of_a_file_once_and_takes_over_what_a_stopped_process_left(tmp_path):
    db = tmp_path / "watch.sqlite3"
    talk = tmp_path / "talk.flac"
    first = WatchLedger(db, owner="first run")
    assert first.claim(talk, 100, 1) and first.state(talk) == "queued"
    assert not first.claim(talk, 100, 1)  # queued already, by this process
    first.ended(talk, "done")
    assert not first.claim(talk, 100, 1) and first.state(talk) == "done"
    assert first.claim(talk, 120, 2)  # changed: queued again
    first.close()

    second = WatchLedger(db, owner="second run")
    assert second.claim(talk, 120, 2)  # the first run stopped before it ended: the second takes it up
    second.ended(talk, "failed")
    assert not second.claim(talk, 120, 2)  # a file that failed waits for a change
    second.close()


def test_settled_files_are_handed_on_once_and_a_removed_folder_stops_the_watching(tmp_path):
    folder = tmp_path / "inbox"
    (folder / "nested").mkdir(parents=True)
    (folder / ".hidden").mkdir()
    shutil.copy(GO_FORWARD, folder / "before.flac")  # there before watching starts
    ready: list[Path] = []
    lost = []
    lost_once = threading.Event()
    ledger = WatchLedger(tmp_path / "watch.sqlite3")
    watcher = FolderWatcher(folder, ledger, ready.append, lambda err: (lost.append(err), lost_once.set()),
                            settle_s=0.5)
    watcher.start()
    try:
        shutil.copy(ACTIVATED, folder / "nested" / "dropped.flac")
        copy_slowly(WELCOME, folder / "slow.flac")
        shutil.copy(WELCOME, folder / ".hidden" / "secret.flac")
        (folder / "notes.txt").write_text("not a recording")
        shutil.copy(ACTIVATED, folder / "partial.flac.part")
        (folder / "partial.flac.part").rename(folder / "renamed.flac")  # how downloads arrive
        expected = {folder / "before.flac", folder / "nested" / "dropped.flac", folder / "slow.flac",
                    folder / "renamed.flac"}
        wait_for(lambda: set(ready) == expected, 30)
        time.sleep(1.5)  # three settle times: nothing more comes
        assert sorted(ready) == sorted(expected)
        assert {ledger.state(path) for path in expected} == {"queued"}

        shutil.rmtree(folder)
        assert lost_once.wait(30)
        assert isinstance(lost[0], NotFoundError) and str(folder) in lost[0].message
        assert not watcher.running
    finally:
        watcher.stop()
        ledger.close()
    assert len(lost) == 1 and len(ready) == 4


def test_a_missing_folder_is_refused_with_a_hint(tmp_path):
    ledger = WatchLedger(tmp_path / "watch.sqlite3")
    watcher = FolderWatcher(tmp_path / "nowhere", ledger, lambda path: None)
    with pytest.raises(NotFoundError, match="does not exist") as caught:
        watcher.start()
    assert caught.value.hint
    ledger.close()


@pytest.fixture()
def open_engine(tmp_path, whisper_tiny_int8, minilm):
    """``open_engine()``: an engine on this test's databases (call again to "restart")."""
    from executors.service import EngineService, ServiceSettings

    settings = ServiceSettings(history_db=tmp_path / "history.db", search_db=tmp_path / "search.db")
    engines = []

    def start():
        engines.append(EngineService(settings, executors={"whisper": whisper_tiny_int8, "embedding": minilm}))
        return engines[-1]

    yield start
    for engine in engines:
        engine.close(finish_queued=True)


def test_dropped_files_are_transcribed_once_into_history_and_index_also_after_a_restart(tmp_path, open_engine):
    from executors.service import TRANSCRIPTS
    from executors.service.watch_transcribe import WatchOptions, WatchTranscriber

    folder = tmp_path / "recordings"
    folder.mkdir()
    shutil.copy(GO_FORWARD, folder / "before.flac")
    ledger_path = tmp_path / "watch.sqlite3"
    options = WatchOptions(output_format="srt", settle_s=1.0)
    told = []

    def run(engine, drop, until_done: set[Path]) -> None:
        watch = WatchTranscriber(engine, folder, options, told.append, WatchLedger(ledger_path))
        watch.start()
        try:
            drop()
            wait_for(lambda: until_done <= {f.path for f in told if f.state == "done"})
            time.sleep(3 * options.settle_s)  # the outputs written beside bring nothing more
        finally:
            watch.stop()

    def drop_two() -> None:
        shutil.copy(ACTIVATED, folder / "dropped.flac")
        copy_slowly(WELCOME, folder / "slow.flac", pieces=10, pause_s=0.25)  # longer than the settle time

    engine = open_engine()
    run(engine, drop_two, {folder / name for name in ("before.flac", "dropped.flac", "slow.flac")})
    assert all(f.error is None for f in told)
    sources = Counter(entry.source for entry in engine.history.list())
    assert sources == {str(folder / name): 1 for name in ("before.flac", "dropped.flac", "slow.flac")}
    assert {entry.status.value for entry in engine.history.list()} == {"done"}
    welcome = " ".join(text for _, _, text in parse_srt((folder / "slow.srt").read_text(encoding="utf-8")))
    assert "welcome" in welcome.lower()  # the whole file, though it arrived in pieces
    assert sorted(p.name for p in folder.iterdir()) == ["before.flac", "before.srt", "dropped.flac",
                                                         "dropped.srt", "slow.flac", "slow.srt"]

    def indexed() -> int:
        collections = {c.name: c for c in engine.search.collections().result(GUARD_S)}
        return collections[TRANSCRIPTS].documents if TRANSCRIPTS in collections else 0

    wait_for(lambda: indexed() == 3, what="the transcripts to be indexed")
    hits = engine.search.search("welcome to the directory", collections=[TRANSCRIPTS]).result(GUARD_S)
    assert hits[0].title == str(folder / "slow.flac")
    engine.close(finish_queued=True)

    # a restart: nothing is transcribed again; a file replaced by another recording is
    told.clear()
    engine = open_engine()
    run(engine, lambda: shutil.copy(DO_NOT_DISTURB, folder / "dropped.flac"), {folder / "dropped.flac"})
    assert [(f.path.name, f.state) for f in told] == [("dropped.flac", "queued"), ("dropped.flac", "done")]
    sources = Counter(entry.source for entry in engine.history.list())
    assert sources == {str(folder / "before.flac"): 1, str(folder / "dropped.flac"): 2, str(folder / "slow.flac"): 1}
    assert "disturb" in (folder / "dropped.srt").read_text(encoding="utf-8").lower()
