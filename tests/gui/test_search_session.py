"""A scripted search session on the real main window, as a user drives it: with a full, scrolled
result list on screen, type a new query, toggle Hybrid, re-index and add files, twenty times over.
Nothing may raise, every search must end with its result count (never stuck on "Searching…"),
and the list must show every result it was given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

QUERIES = ["spacecraft orbit launch", "god religion belief atheism", "moon landing shuttle",
           "bible morality", "satellite telescope mission"]
CYCLES = 20


@pytest.fixture(scope="module")
def posts(tmp_path_factory, text_dir) -> tuple[Path, list[dict]]:
    folder = tmp_path_factory.mktemp("session-posts")
    lines = (text_dir / "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    for post in rows[:50]:
        (folder / f"post-{post['id']:03d}.txt").write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
    return folder, rows[50:50 + CYCLES]


def _scroll_through(results) -> None:
    bar = results.verticalScrollBar()
    for value in (bar.maximum(), bar.maximum() // 2, 0):
        bar.setValue(value)
        results.viewport().repaint()


@pytest.mark.slow  # twenty rounds; test_search_panel.py drives each step once in the quick tier
def test_query_toggle_reindex_add_files_twenty_times(main_window, host, posts, tmp_path, wait_until, listen):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    folder, extra = posts
    panel = main_window.show_panel("search")
    main_window.resize(1100, 700)
    failures: list = []
    listen(host.failure, failures.append)
    outcomes: list[str] = []
    shown: list[tuple[str, int]] = []
    panel.indexingFinished.connect(outcomes.append)
    panel.resultsShown.connect(lambda q, n: shown.append((q, n)))

    panel.add_sources([folder])
    wait_until(lambda: outcomes, timeout=600)
    assert outcomes == ["done"], failures
    panel.top_k.setValue(12)

    def settled(query: str) -> None:
        """Wait until the search for ``query`` has shown its results, then check the screen."""
        wait_until(lambda: (shown and shown[-1][0] == query and panel._debounce.remainingTime() < 0
                            and "Searching" not in panel.result_status.text()) or failures, timeout=120)
        assert not failures, [str(f) for f in failures]
        assert "result" in panel.result_status.text(), panel.result_status.text()
        assert shown[-1][1] >= 10  # a full list: these queries all have plenty of matches
        assert panel.results.count() == shown[-1][1]  # every result is on screen
        _scroll_through(panel.results)

    extra_dir = tmp_path / "added"
    extra_dir.mkdir()
    for cycle in range(CYCLES):
        query = QUERIES[cycle % len(QUERIES)]
        panel.query.selectAll()
        QTest.keyClicks(panel.query, query)               # a new query over the full list
        settled(query)

        before = len(shown)
        QTest.mouseClick(panel.hybrid, Qt.MouseButton.LeftButton)  # toggle Hybrid
        wait_until(lambda before=before: len(shown) > before or failures, timeout=120)
        settled(query)

        done = len(outcomes)
        panel.reindex_action.trigger()                    # re-index everything
        wait_until(lambda done=done: len(outcomes) > done or failures, timeout=300)
        settled(query)

        post = extra[cycle]
        path = extra_dir / f"extra-{post['id']:03d}.txt"
        path.write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
        done = len(outcomes)
        panel.add_sources([path])                         # add files while results are shown
        wait_until(lambda done=done: len(outcomes) > done or failures, timeout=300)
        settled(query)
        assert outcomes[-1] == "done"
    assert not failures
