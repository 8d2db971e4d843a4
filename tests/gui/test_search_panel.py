"""Search panel on the real main window: index a folder of newsgroups posts with the real MiniLM,
search as you type, ranked results with highlights, and opening file and transcript results."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

POSTS_PER_LABEL = 40


@pytest.fixture(scope="module")
def posts_dir(tmp_path_factory, text_dir) -> tuple[Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("newsgroups")
    labels: dict[str, str] = {}
    counts: dict[str, int] = {}
    for line in (text_dir / "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines():
        post = json.loads(line)
        if counts.get(post["label"], 0) >= POSTS_PER_LABEL:
            continue
        counts[post["label"]] = counts.get(post["label"], 0) + 1
        name = f"post-{post['id']:03d}.txt"
        (folder / name).write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
        labels[name] = post["label"]
    return folder, labels


class _UrlCatcher:
    """Receives file URLs instead of the desktop's file opener (QDesktopServices.setUrlHandler)."""

    def __init__(self):
        from PySide6.QtCore import QObject, Slot

        class Receiver(QObject):
            def __init__(self):
                super().__init__()
                self.urls = []

            @Slot("QUrl")
            def open(self, url):
                self.urls.append(url)

        self.receiver = Receiver()


def test_index_folder_search_as_you_type_and_open(main_window, posts_dir, wait_until):
    from PySide6.QtGui import QDesktopServices
    from PySide6.QtTest import QTest

    folder, labels = posts_dir
    panel = main_window.show_panel("search")
    outcomes: list[str] = []
    shown: list[tuple[str, int]] = []
    panel.indexingFinished.connect(outcomes.append)
    panel.resultsShown.connect(lambda q, n: shown.append((q, n)))

    panel.add_sources([folder])
    assert str(folder) in panel.source_paths()
    wait_until(lambda: outcomes, timeout=600)
    assert outcomes == ["done"]
    assert f"{2 * POSTS_PER_LABEL} added" in panel.index_status.text()

    panel.scope.setCurrentIndex(panel.scope.findData("default"))
    query = "spacecraft orbit launch"
    panel.focus_search()
    QTest.keyClicks(panel.query, query)
    wait_until(lambda: shown, timeout=120)
    assert shown == [(query, 10)]  # one search for the whole burst of keystrokes (debounced)

    hits = panel.results.hits()
    names = [Path(h.source).name for h in hits]
    space = sum(labels[n] == "sci.space" for n in names)
    assert space >= 8, [(n, labels[n]) for n in names]
    assert len(set(names)) == len(names)  # one result per document
    assert panel.results.relevance_text(0) in ("Very relevant", "Relevant")
    assert panel.results.source_text(0) == names[0]
    assert panel.results.folder_text(0) == str(folder)

    highlighted = [re.findall(r"<span style=[^>]*>([^<]+)</span>", panel.results.snippet_html(i))
                   for i in range(len(hits))]
    marked = {w.lower() for words in highlighted for w in words}
    assert marked and all(w.startswith(("spacecraft", "orbit", "launch")) for w in marked), marked

    catcher = _UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher.receiver, "open")
    try:
        panel.results.activate_row(0)
        assert [u.toLocalFile() for u in catcher.receiver.urls] == [hits[0].source]
    finally:
        QDesktopServices.unsetUrlHandler("file")

    # A religion query, typed again in the same box, ranks the other newsgroup first.
    shown.clear()
    panel.query.clear()
    QTest.keyClicks(panel.query, "god religion belief atheism")
    wait_until(lambda: shown and shown[-1][0] == "god religion belief atheism", timeout=120)
    names = [Path(h.source).name for h in panel.results.hits()]
    assert sum(labels[n] == "alt.atheism" for n in names) >= 8


def test_transcript_results_open_in_the_transcribe_panel(main_window, host, speech_dir, tmp_path,
                                                         wait_until, run_async):
    audio, _ = sf.read(str(speech_dir / "pocketsphinx/forever_input_2.flac"), dtype="float32")
    clip = tmp_path / "forever.wav"
    sf.write(str(clip), np.concatenate([audio, np.zeros(8000, np.float32)]), 16000)
    run_async(host.transcribe(clip), timeout=300)

    panel = main_window.show_panel("search")
    outcomes: list[str] = []
    panel.indexingFinished.connect(outcomes.append)
    run_async(panel.index_transcripts(), timeout=300)
    assert outcomes == ["done"]
    assert "transcript(s) are searchable" in panel.index_status.text()

    opened: list[tuple[int, int]] = []
    panel.openTranscript.connect(lambda rid, sid: opened.append((rid, sid)))
    panel.scope.setCurrentIndex(panel.scope.findData("transcripts"))
    hits = run_async(panel.search("these days go on forever"))
    assert hits and hits[0].doc_kind.value == "transcript"
    record = next(e for e in run_async(host.list_history()) if e.source == str(clip))
    assert hits[0].source == f"history:{record.id}"
    assert panel.results.source_text(0).startswith("forever.wav")

    panel.scope.setCurrentIndex(0)  # "Everything": files and transcripts together
    assert panel.scope.currentData() is None
    assert f"history:{record.id}" in [h.source for h in run_async(panel.search("these days go on forever"))]

    panel.results.activate_row(0)
    assert opened and opened[0][0] == record.id
    transcribe = main_window.panels["transcribe"]
    wait_until(lambda: transcribe.current_record_id() == record.id)
    assert main_window.current_panel_key() == "transcribe"
    assert transcribe.view.selected_segment() is not None


def test_cancel_indexing_then_reindex_finishes(main_window, host, text_dir, tmp_path, wait_until, listen):
    folder = tmp_path / "more-posts"
    folder.mkdir()
    for line in (text_dir / "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines()[-60:]:
        post = json.loads(line)
        (folder / f"late-{post['id']:03d}.txt").write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
    panel = main_window.show_panel("search")
    outcomes: list[str] = []
    panel.indexingFinished.connect(outcomes.append)

    armed = [True]
    seen_running: list[bool] = []

    def cancel_on_first_progress(job_id, _progress):
        if armed[0] and job_id == panel._index_job and not panel._index_cancelled:
            seen_running.append(panel.index_progress.isVisible() and panel.cancel_action.isEnabled())
            panel.cancel_action.trigger()

    listen(host.jobProgress, cancel_on_first_progress)
    panel.add_sources([folder])
    wait_until(lambda: outcomes, timeout=300)
    assert seen_running == [True]
    assert outcomes == ["cancelled"]
    assert "cancelled" in panel.index_status.text().lower()
    assert not panel.index_progress.isVisible() and panel.reindex_action.isEnabled()

    armed[0] = False
    panel.reindex_action.trigger()
    wait_until(lambda: len(outcomes) == 2, timeout=300)
    assert outcomes[1] == "done"
    assert "added" in panel.index_status.text() and "transcript(s) are searchable" in panel.index_status.text()
    assert str(folder) in panel.source_paths()

    # Removing the source drops all of its documents from the index again.
    removed: list[int] = []
    panel.sourcesRemoved.connect(removed.append)
    panel.sources.setCurrentRow(panel.source_paths().index(str(folder)) + 1)  # row 0: the history
    panel.remove_action.trigger()
    assert str(folder) not in panel.source_paths()
    wait_until(lambda: removed, timeout=120)
    assert removed == [60]
