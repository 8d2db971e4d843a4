"""Retrieval quality on real text: 200 newsgroup posts (alt.atheism / sci.space) as files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from executors.search import SearchStore, index_paths, search_text

pytestmark = pytest.mark.slow   # embeds all 200 posts

SPACE_QUERY = "spaceflight: rockets launching spacecraft into orbit"
RELIGION_QUERY = "arguments about religion and whether God exists"


@pytest.fixture(scope="module")
def newsgroups(minilm, text_dir, tmp_path_factory):
    """(store, label of each indexed path) with every post written as a .txt file and indexed."""
    folder = tmp_path_factory.mktemp("newsgroups")
    labels = {}
    for line in (text_dir / "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines():
        post = json.loads(line)
        path = folder / "posts" / f"{post['id']:03d}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
        labels[str(path)] = post["label"]
    store = SearchStore(folder / "index.db")
    report = index_paths(store, minilm, [folder / "posts"], collection="news")
    assert report.files_added == 200 and not report.errors
    yield store, labels
    store.close()


@pytest.mark.parametrize("hybrid", [False, True], ids=["vector", "hybrid"])
@pytest.mark.parametrize("query, label", [(SPACE_QUERY, "sci.space"), (RELIGION_QUERY, "alt.atheism")],
                         ids=["space", "religion"])
def test_topic_queries_rank_their_newsgroup_first(newsgroups, minilm, query, label, hybrid):
    store, labels = newsgroups
    hits = search_text(store, minilm, query, collection="news", k=10, hybrid=hybrid)
    assert len(hits) == 10
    on_topic = sum(labels[h.source] == label for h in hits)
    assert on_topic >= 9, [(labels[h.source], h.text[:60]) for h in hits]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_keyword_hits_carry_the_matched_terms(newsgroups, minilm):
    store, _ = newsgroups
    hits = search_text(store, minilm, "shuttle launch", collection="news", k=10, hybrid=True)
    keyword_hits = [h for h in hits if h.keyword_rank is not None]
    assert len(keyword_hits) >= 5
    for hit in keyword_hits:
        assert hit.matched_terms
        for term in hit.matched_terms:
            assert term in hit.text and term.lower().startswith(("shuttle", "launch"))


def test_index_is_incremental_on_the_real_set(newsgroups, minilm):
    store, labels = newsgroups
    folder = Path(next(iter(labels))).parent
    report = index_paths(store, minilm, [folder], collection="news")
    assert (report.files_skipped, report.chunks_embedded) == (200, 0)
