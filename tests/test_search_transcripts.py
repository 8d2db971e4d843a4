"""Transcript entries of the search index follow the history (real MiniLM, real SQLite stores):
a re-transcribed file is one result, deleted records leave the index, and hits are grouped per
document with their folder and a plain-language relevance."""

from __future__ import annotations

import pytest

from executors.search import (
    DocKind,
    SearchHit,
    SearchStore,
    group_hits,
    index_paths,
    index_transcript,
    prune_transcripts,
    relevance,
    remove_transcripts,
    search_text,
)
from executors.transcripts.history import (
    RecordStatus,
    TranscriptHistory,
    searchable_entries,
)
from executors.transcripts.results import Segment, Transcript

LINES = ["The probe entered a stable orbit around Mars after a long cruise.",
         "Engineers fired the thrusters to correct the trajectory.",
         "Sourdough needs flour, water, salt and a night to rise."]


def _transcript(lines=LINES) -> Transcript:
    segments = [Segment(id=i, start=2.0 * i, end=2.0 * i + 2.0, text=" " + t) for i, t in enumerate(lines)]
    return Transcript(language="en", language_probability=1.0, duration=2.0 * len(lines), segments=segments)


def _record(history: TranscriptHistory, audio: str, lines=LINES) -> int:
    rid = history.begin(audio, "whisper-tiny.en", None)
    history.finish(rid, _transcript(lines))
    return rid


@pytest.fixture()
def stores(tmp_path):
    with SearchStore(tmp_path / "index.db") as store, TranscriptHistory(tmp_path / "history.db") as history:
        yield store, history


def test_transcribing_a_file_again_replaces_its_index_entry(stores, minilm, tmp_path):
    store, history = stores
    audio = str(tmp_path / "talk.wav")
    first = _record(history, audio)
    index_transcript(store, minilm, history.load(first))
    second = _record(history, audio)
    report = index_transcript(store, minilm, history.load(second))
    assert report.files_added == 1 and report.files_removed == 1

    hits = search_text(store, minilm, "probe in orbit around Mars", "transcripts", k=10)
    assert {h.source for h in hits} == {f"history:{second}"}
    assert sum("orbit around Mars" in h.text for h in hits) == 1

    # Indexing the older record afterwards (e.g. "index all transcripts") keeps the newer one.
    again = index_transcript(store, minilm, history.load(first))
    assert again.files_skipped == 1 and again.chunks_embedded == 0
    assert {h.source for h in search_text(store, minilm, "orbit", "transcripts", k=10)} == {f"history:{second}"}


def test_dictations_are_never_merged(stores, minilm, tmp_path):
    store, history = stores
    a = history.add_dictation(tmp_path / "a.flac", _transcript())
    b = history.add_dictation(tmp_path / "b.flac", _transcript())
    for rid in (a, b):
        index_transcript(store, minilm, history.load(rid))
    assert {h.source for h in search_text(store, minilm, "orbit", "transcripts", k=10)} == {f"history:{a}",
                                                                                          f"history:{b}"}


def test_deleted_records_leave_the_index(stores, minilm, tmp_path):
    store, history = stores
    kept = _record(history, str(tmp_path / "kept.wav"))
    gone = _record(history, str(tmp_path / "gone.wav"))
    stale = _record(history, str(tmp_path / "stale.wav"))
    for rid in (kept, gone, stale):
        index_transcript(store, minilm, history.load(rid))

    history.delete(gone)
    assert remove_transcripts(store, [gone]) == 1
    assert remove_transcripts(store, [gone]) == 0
    history.delete(stale)  # deleted without telling the index: swept by prune
    assert prune_transcripts(store, [e.id for e in history.list()]) == 1
    assert {h.source for h in search_text(store, minilm, "orbit", "transcripts", k=10)} == {f"history:{kept}"}


def test_searchable_entries_pick_one_record_per_file(stores, tmp_path):
    _store, history = stores
    audio = str(tmp_path / "talk.wav")
    done = _record(history, audio)
    partial = history.begin(audio, "whisper-tiny.en", None)
    history.append_segment(partial, Segment(id=0, start=0.0, end=1.0, text=" half"))
    history.cancel(partial)
    other = _record(history, str(tmp_path / "other.wav"))
    empty = history.begin(str(tmp_path / "empty.wav"), "", None)
    history.fail(empty, "not audio")
    chosen = searchable_entries(history.list())
    assert [e.id for e in chosen] == [other, done]
    assert history.load(partial).status is RecordStatus.CANCELLED


def test_group_hits_per_document(stores, minilm, tmp_path):
    store, _history = stores
    folder = tmp_path / "notes" / "space"
    folder.mkdir(parents=True)
    long_text = " ".join(["The probe entered a stable orbit around Mars after a seven month cruise."] * 3
                         + ["Mission control confirmed the orbit insertion burn went as planned."] * 60)
    (folder / "mars.txt").write_text(long_text, encoding="utf-8")
    (folder / "bread.txt").write_text("Mix flour, water and salt; let the dough rise overnight.", encoding="utf-8")
    index_paths(store, minilm, [folder], collection="default")
    hits = search_text(store, minilm, "spacecraft orbit insertion around Mars", "default", k=10, hybrid=True)
    assert sum(h.source.endswith("mars.txt") for h in hits) >= 2  # several chunks of one file

    groups = group_hits(hits)
    assert groups[0].name == "mars.txt"
    assert len({g.source for g in groups}) == len(groups) == 2
    mars = groups[0]
    assert len(mars.hits) >= 2 and mars.hits[0].score >= mars.hits[-1].score
    assert mars.folder == str(folder) and mars.record_id is None
    assert mars.relevance.label in ("Very relevant", "Relevant")
    assert groups[1].relevance.level < mars.relevance.level
    assert "similarity" in mars.relevance.detail
    assert len(group_hits(hits, limit=1)) == 1


def test_legacy_duplicate_transcripts_collapse_to_the_newest():
    def hit(rid: int, score: float, text: str) -> SearchHit:
        return SearchHit(score=score, text=text, source=f"history:{rid}", doc_kind=DocKind.TRANSCRIPT,
                         title="/recordings/talk.wav", vector_score=0.5)

    hits = [hit(3, 0.9, "orbit"), hit(7, 0.8, "orbit"), hit(5, 0.7, "orbit"), hit(7, 0.2, "landing")]
    [group] = group_hits(hits)
    assert group.record_id == 7 and [h.text for h in group.hits] == ["orbit", "landing"]
    assert group.name == "talk.wav" and group.folder == "/recordings"


def test_relevance_in_words_follows_the_ordering_score():
    def hit(score: float, words: int = 0, **kw) -> SearchHit:
        return SearchHit(score=score, text="x", source="/a.txt", doc_kind=DocKind.FILE, vector_score=0.3,
                         words_total=words, **kw)

    labels = ["Very relevant", "Relevant", "Somewhat relevant", "Loosely related"]
    assert [relevance(hit(s)).label for s in (0.6, 0.4, 0.25, 0.05)] == labels  # meaning alone: the cosine
    assert [relevance(hit(s, 4)).label for s in (0.9, 0.6, 0.35, 0.2)] == labels  # meaning plus words
    for words in (0, 4):  # a lower score never reads as more relevant
        levels = [relevance(hit(s / 100, words)).level for s in range(150, -20, -1)]
        assert levels == sorted(levels, reverse=True) and levels[0] == 3 and levels[-1] == 0
    low = relevance(hit(0.05))
    assert low.level == 0 and 0 <= low.fraction < 0.1
    assert "holds 4 of your 4 words as one phrase" in relevance(hit(0.9, 4, words_matched=4, exact_phrase=True)).detail
    keyword = SearchHit(score=0.016, text="x", source="/a.txt", doc_kind=DocKind.FILE, keyword_rank=1,
                        matched_terms=["orbit"])
    assert relevance(keyword).label == "Matches your words"
