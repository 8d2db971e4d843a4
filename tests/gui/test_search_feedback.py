"""What the Search panel tells a user, on the real main window: a file transcribed twice is one
result, a deleted transcript is no longer found, results name their folder, a folder with nothing
indexable says why, and a result that cannot be opened says so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

CLIP = "pocketsphinx/forever_input_2.flac"
QUERY = "these days go on forever"


@pytest.fixture
def clip(speech_dir, tmp_path) -> Path:
    audio, _ = sf.read(str(speech_dir / CLIP), dtype="float32")
    path = tmp_path / "recordings" / "forever-again.wav"
    path.parent.mkdir()
    sf.write(str(path), np.concatenate([audio, np.zeros(8000, np.float32)]), 16000)
    return path


def _transcribe(window, path: Path, wait_until, listen, host) -> int:
    panel = window.show_panel("transcribe")
    indexed: list[int] = []
    listen(host.indexChanged, lambda: indexed.append(1))
    [job] = panel.enqueue([path])
    wait_until(lambda: panel.jobs.state(job).finished and indexed, timeout=300)  # auto-indexed
    assert panel.jobs.state(job).value == "done"
    return panel.queue.record_id(job)


def _search(window, wait_until, query: str = QUERY, scope: str | None = "transcripts"):
    panel = window.show_panel("search")
    panel.scope.setCurrentIndex(panel.scope.findData(scope))
    shown: list[int] = []
    panel.resultsShown.connect(lambda _q, n: shown.append(n))
    panel.query.clear()
    QTest.keyClicks(panel.query, query)
    wait_until(lambda: shown and panel._debounce.remainingTime() < 0, timeout=120)
    return panel


def test_a_retranscribed_file_is_one_result_and_a_deleted_one_is_gone(main_window, host, clip, wait_until,
                                                                      listen, run_async):
    first = _transcribe(main_window, clip, wait_until, listen, host)
    second = _transcribe(main_window, clip, wait_until, listen, host)
    assert second != first

    sources = [h.source for h in run_async(host.search(QUERY, k=50))]
    assert f"history:{second}" in sources and f"history:{first}" not in sources  # the older one left the index
    panel = _search(main_window, wait_until)
    ours = [d for d in panel.results.documents() if d.path == str(clip)]
    assert len(ours) == 1 and ours[0].record_id == second  # one result, the newest transcript
    row = panel.results.documents().index(ours[0])
    assert panel.results.source_text(row) == clip.name
    assert panel.results.folder_text(row) == str(clip.parent)

    # Delete the newest transcript from the history list (Del, then confirm): it is no longer found.
    transcribe = main_window.show_panel("transcribe")
    wait_until(lambda: second in transcribe.history.record_ids())
    transcribe.history.setCurrentItem(transcribe.history.topLevelItem(transcribe.history.record_ids().index(second)))
    transcribe.history.setFocus()
    QTest.keyClick(transcribe.history, Qt.Key.Key_Delete)
    dialog = transcribe.delete_dialog
    assert dialog is not None and dialog.isVisible() and clip.name in dialog.text()
    dialog.button(dialog.StandardButton.Yes).click()
    wait_until(lambda: second not in transcribe.history.record_ids(), timeout=30)
    assert all(h.source != f"history:{second}" for h in run_async(host.search(QUERY, k=50)))
    panel = _search(main_window, wait_until)
    assert all(d.record_id != second for d in panel.results.documents())


def test_a_folder_without_indexable_files_says_why(main_window, tmp_path, wait_until):
    folder = tmp_path / "exports"
    folder.mkdir()
    for i in range(3):
        (folder / f"rows-{i}.jsonl").write_text('{"text": "orbit"}\n', encoding="utf-8")
    panel = main_window.show_panel("search")
    outcomes: list[str] = []
    panel.indexingFinished.connect(outcomes.append)
    panel.add_sources([folder])
    wait_until(lambda: outcomes, timeout=120)
    status = panel.index_status.text()
    assert outcomes == ["done"]
    assert "Nothing to index" in status and "3 files skipped" in status and ".jsonl" in status, status
    assert ".txt" in status  # and what would be indexed


def test_opening_a_result_whose_file_is_gone_says_so(main_window, tmp_path, wait_until):
    folder = tmp_path / "notes"
    folder.mkdir()
    note = folder / "comet-notes.txt"
    note.write_text("The comet's tail points away from the sun as it swings through the inner solar system.",
                    encoding="utf-8")
    panel = main_window.show_panel("search")
    outcomes: list[str] = []
    panel.indexingFinished.connect(outcomes.append)
    panel.add_sources([folder])
    wait_until(lambda: outcomes, timeout=120)
    panel = _search(main_window, wait_until, "comet tail solar system", scope="default")
    row = [h.source for h in panel.results.hits()].index(str(note))
    note.unlink()
    main_window.notifications.clear()
    item = panel.results.item(row)
    panel.results.scrollToItem(item)
    point = panel.results.visualItemRect(item).center()
    for send in (QTest.mouseClick, QTest.mouseDClick):  # a double-click: a click, then the second press
        send(panel.results.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    wait_until(lambda: main_window.notifications.notifications(), timeout=10)
    card = main_window.notifications.notifications()[0]
    assert "comet-notes.txt" in card.message and "Re-index" in (card.hint or "")
