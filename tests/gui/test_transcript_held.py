"""Each file's work once, on the real main window with the real bundled Whisper model: a finished job's
transcript stays in the view without reading its record back from the history, and Export of a saved
record goes through the history by its id (the file ``ferrum history export`` writes, with the user's
renamed speaker and edited text in it).

Reads of a record are counted on the history's own SQLite connection (a trace callback); transcripts
are not indexed for search during these tests, since indexing reads the record too.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from dataclasses import replace

from audio_fixtures import joined_clips

from ferrum_cli.main import main as ferrum

_RECORD_READ = "FROM segments WHERE record_id"  # the query of TranscriptHistory.load, and only of it


@contextlib.contextmanager
def record_reads(host, run_async):
    """The SQL statements reading a record's segments while the block runs, and no indexing meanwhile."""
    service = host.service
    kept = service.settings
    service.apply(kept.with_changes(auto_index_transcripts=False))
    db = service.history._history()._db  # the connection every history read of the app goes through
    reads: list[str] = []
    run_async(host.run_on("io", db.set_trace_callback,
                          lambda sql: reads.append(sql) if _RECORD_READ in sql else None))
    try:
        yield reads
    finally:
        run_async(host.run_on("io", db.set_trace_callback, None))
        service.apply(kept)


def test_a_finished_job_shows_its_segments_without_reading_the_history(main_window, host, speech_dir, tmp_path,
                                                                       wait_until, run_async):
    clip = tmp_path / "cards.flac"
    shutil.copy(speech_dir / "pocketsphinx/cards_005.flac", clip)
    panel = main_window.show_panel("transcribe")
    shown: list[int] = []
    panel.recordShown.connect(shown.append)
    with record_reads(host, run_async) as reads:
        [job] = panel.enqueue([clip])
        wait_until(lambda: shown and panel.jobs.state(job).finished, timeout=300)
        wait_until(lambda: shown[0] in panel.history.record_ids())  # the history list refreshed meanwhile
        assert reads == [], "the finished transcript was read back from the history"
        assert panel.jobs.state(job).value == "done"
        segments = panel.queue.segments(job)
        assert segments and [panel.view.segment_text(r) for r in range(panel.view.rowCount())] == \
            [s.text.strip() for s in segments]
        assert panel.current_record_id() == shown[0] and panel.title.text() == "cards.flac"
        assert panel.current_transcript().language == "en"  # the job's own transcript, not rebuilt from rows

        panel.show_record(shown[0])  # opening a record from the history reads it, once
        wait_until(lambda: len(shown) == 2)
        assert len(reads) == 1


def test_export_of_a_saved_record_is_the_history_export_with_the_users_changes(main_window, host, tmp_path,
                                                                               wait_until, run_async):
    clip, _ = joined_clips(tmp_path / "austen-three.wav")
    transcript = run_async(host.transcribe(clip), timeout=300)
    assert len(transcript.segments) >= 2
    # Saved as a job that finds speakers saves it: every segment labelled (here two voices taking turns).
    history = host.service.history
    labelled = replace(transcript, segments=[replace(s, speaker=f"SPEAKER_0{i % 2}")
                                             for i, s in enumerate(transcript.segments)])
    record_id = history.begin(str(clip), transcript.model_id, None, audio_path=clip)
    history.end(record_id, "done", labelled)

    panel = main_window.show_panel("transcribe")
    shown: list[int] = []
    panel.recordShown.connect(shown.append)
    panel.show_record(record_id)
    wait_until(lambda: shown == [record_id])
    first = panel.view.segments()[0].id
    with record_reads(host, run_async) as reads:
        panel.view.rename_speaker("SPEAKER_01", "Elinor")   # as the rename dialog does
        panel.view.edit_segment_text(first, "Edited by hand")
        ours = run_async(panel.export(tmp_path / "panel.json"))  # at once: the changes are still being saved
        assert len(reads) == 1, "Export did not go through the history record"

    theirs = tmp_path / "cli.json"
    assert ferrum(["history", "export", str(record_id), "-o", str(theirs)]) == 0
    assert ours.read_text(encoding="utf-8") == theirs.read_text(encoding="utf-8")
    data = json.loads(ours.read_text(encoding="utf-8"))
    assert data["segments"][0]["text"].strip() == "Edited by hand"
    assert {s["name"] for s in data["speakers"]} == {"Speaker 1", "Elinor"}
    assert data["segments"][1]["speaker"] == "Elinor"
