"""Search panel on the real main window: index a folder of newsgroups posts with the real MiniLM,
search as you type, ranked results with highlights, and opening file and transcript results; the
relevance words agree with the order, and a transcript hit shows and opens where its words are."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from fixture_data import LONG_SPEECH, tiny_pdf

POSTS_PER_LABEL = 40
LABELS = ["Very relevant", "Relevant", "Somewhat relevant", "Loosely related"]
# Committee minutes that hold "space", "shuttle", "telescope" and "repair", each once, in sentences
# about other things: a long passage whose meaning is far from a query of those words.
MINUTES = ("Minutes of the facilities committee, spring term. Attendance: eleven members, two apologies. "
           "The minutes of the previous meeting were approved without changes. The car park resurfacing is "
           "finished and the contractor has been paid in full. The cafeteria will open longer during the "
           "examination weeks, and the vending machines on the second floor will be replaced in June. "
           "Heating in the east wing remains uneven; the engineer will balance the radiators before autumn. "
           "The porters asked for more storage space in the basement for the furniture from the old hall. "
           "The cleaning contract comes up for renewal and three firms have sent quotes. The shuttle bus to "
           "the railway station will run every twenty minutes from September. The student telescope club "
           "asked for a room on Thursday evenings and was offered the seminar room. The lift in the library "
           "is out of order again; the committee agreed to pay for its repair from the maintenance budget. "
           "The bicycle shelter by the north gate is full most mornings and a second shelter will be costed. "
           "The fire drill in March went well apart from the west stairwell, where the signs were missing. "
           "The next meeting is on the first Tuesday of the month; members are asked to send agenda items a "
           "week ahead and to keep reports to one page.")


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


def _type_query(panel, query: str, wait_until) -> None:
    from PySide6.QtTest import QTest

    shown: list[str] = []
    panel.resultsShown.connect(lambda q, _n: shown.append(q))
    panel.query.clear()
    QTest.keyClicks(panel.query, query)
    wait_until(lambda: query in shown and panel._debounce.remainingTime() < 0, timeout=120)


def _words_held(text: str, words: list[str]) -> int:
    return sum(bool(re.search(rf"\b{w}(s|es|ed|ing)?\b", text, re.IGNORECASE)) for w in words)


@pytest.mark.parametrize("query, words", [
    ("space shuttle telescope repair", ["space", "shuttle", "telescope", "repair"]),
    ("telescope repair in space", ["telescope", "repair", "space"]),
])
def test_relevance_words_follow_the_order_and_more_of_the_words_rank_higher(main_window, posts_dir, tmp_path,
                                                                           wait_until, query, words):
    folder, _labels = posts_dir
    (tmp_path / "minutes.pdf").write_bytes(tiny_pdf(MINUTES))
    panel = main_window.show_panel("search")
    outcomes: list[str] = []
    panel.indexingFinished.connect(outcomes.append)
    panel.add_sources([folder, tmp_path / "minutes.pdf"])
    wait_until(lambda: outcomes, timeout=600)
    assert outcomes == ["done"]
    panel.scope.setCurrentIndex(panel.scope.findData("default"))
    _type_query(panel, query, wait_until)

    rows = range(panel.results.count())
    names = [panel.results.source_text(i) for i in rows]
    levels = [LABELS.index(panel.results.relevance_text(i)) for i in rows]
    assert levels == sorted(levels), list(zip(names, levels))  # the words never contradict the order
    held = [_words_held(doc.best.text, words) for doc in panel.results.documents()]
    assert names[0] == "minutes.pdf" and held[0] == len(words)
    most = [i for i, n in enumerate(held) if n >= len(words) - 1]
    one = [i for i, n in enumerate(held) if n == 1]
    assert one and max(most) < min(one), list(zip(names, held))  # all but one of the words beats one word
    assert panel.results.relevance_text(0) in ("Very relevant", "Relevant")


@pytest.fixture
def prompts_record(host, run_async):
    """(record id, the segment to find) of a transcript in the history: the 14 telephone prompts of
    the long test recording with their times, one passage of the index; the 12th says "temporary
    message" at 0:47, and the first already says "pound key"."""
    from executors.transcripts.results import Segment, Transcript

    rows = [line.split("\t") for line in LONG_SPEECH.with_suffix(".tsv").read_text(encoding="utf-8").splitlines()[1:]]
    segments = [Segment(id=i, start=float(r[0]), end=float(r[1]), text=" " + r[3]) for i, r in enumerate(rows)]
    target = next(s for s in segments if "temporary message" in s.text)
    history = host.service.history
    record = history.begin(str(LONG_SPEECH), "whisper-tiny.en", None, audio_path=None)
    history.end(record, "done", Transcript("en", 1.0, segments[-1].end, segments))
    yield record, target
    run_async(host.delete_history(record))


def _search_transcripts(window, run_async, wait_until, query: str):
    panel = window.show_panel("search")
    run_async(panel.index_transcripts(), timeout=300)
    panel.scope.setCurrentIndex(panel.scope.findData("transcripts"))
    _type_query(panel, query, wait_until)
    return panel


def test_a_transcript_snippet_shows_the_sentence_that_matched(main_window, prompts_record, run_async, wait_until):
    record, target = prompts_record
    sentence = target.text.strip()
    panel = _search_transcripts(main_window, run_async, wait_until, sentence)  # as the reader remembers it
    assert panel.results.documents()[0].record_id == record
    assert panel.results.relevance_text(0) == "Very relevant"  # it holds the sentence word for word
    snippet = panel.results.snippet_html(0).split("&nbsp;&nbsp;", 1)[1]  # after the time
    assert sentence.rstrip(".") in re.sub(r"<[^>]+>", "", snippet)
    marked = re.findall(r"<span style=[^>]*>([^<]+)</span>", snippet)
    assert {"temporary", "message", "pound", "key"} <= {w.lower() for w in marked}


def test_a_transcript_hit_opens_at_the_segment_holding_its_words(main_window, prompts_record, run_async,
                                                                 wait_until):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    record, target = prompts_record
    panel = _search_transcripts(main_window, run_async, wait_until, target.text.strip())
    best = panel.results.documents()[0].best
    assert best.source == f"history:{record}" and best.start_time < 1.0  # the passage starts at 0:00
    time_link = re.match(r'<a href="0">([^<]*)</a>', panel.results.snippet_html(0)).group(1)
    assert time_link == "0:47"  # when the sentence is said

    panel.results.setFocus()
    QTest.keyClick(panel.results, Qt.Key.Key_Home)  # the first result
    QTest.keyClick(panel.results, Qt.Key.Key_Return)
    transcribe = main_window.panels["transcribe"]
    wait_until(lambda: transcribe.current_record_id() == record and transcribe.view.selected_segment())
    assert main_window.current_panel_key() == "transcribe"
    assert transcribe.view.selected_segment().id == target.id
