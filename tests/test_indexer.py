"""Incremental indexing with the real bundled MiniLM: skips, updates, removals, cancel, formats."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from fixture_data import tiny_pdf

from executors.core.errors import Cancelled, InvalidParameterError, NotFoundError
from executors.core.types import CancelToken
from executors.search import (
    ChunkOptions,
    DocKind,
    SearchStore,
    TimedText,
    chunk_segments,
    chunk_text,
    index_paths,
    index_text,
    index_transcript,
    search_text,
)
from executors.search.extract import pdf_text
from executors.transcripts.exporters import write_transcript
from executors.transcripts.results import Segment, Transcript

NOTES = {
    "orbit.txt": "The probe entered a stable orbit around Mars after a seven month cruise.",
    "bread.md": "# Sourdough\n\nMix flour, water and salt; let the dough rise overnight before baking.",
    "garden.txt": "Tomatoes need full sun, regular watering and a stake to climb as they grow.",
}


@pytest.fixture()
def store(tmp_path):
    with SearchStore(tmp_path / "index.db") as s:
        yield s


def _write(folder: Path, files: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


def _references(speech_dir: Path, n: int) -> list[str]:
    lines = (speech_dir / "transcripts.tsv").read_text(encoding="utf-8").splitlines()[1:]
    assert len(lines) >= n, f"the test needs {n} references"
    return [line.split("\t", 1)[1].strip() for line in lines[:n]]


def _post_bodies(text_dir: Path, words: int) -> str:
    """Newsgroup post bodies, in file order, until about ``words`` words."""
    bodies, count = [], 0
    for line in (text_dir / "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines():
        body = json.loads(line)["body"]
        bodies.append(body)
        count += len(body.split())
        if count >= words:
            break
    return "\n\n".join(bodies)


def test_reindexing_embeds_only_what_changed(store, minilm, tmp_path):
    docs = tmp_path / "docs"
    _write(docs, NOTES)
    first = index_paths(store, minilm, [docs], collection="notes")
    assert (first.files_added, first.files_updated, first.files_skipped, first.files_removed) == (3, 0, 0, 0)
    assert first.chunks_embedded == 3 and not first.errors

    again = index_paths(store, minilm, [docs], collection="notes")
    assert (again.files_added, again.files_skipped, again.chunks_embedded) == (0, 3, 0)

    garden = docs / "garden.txt"
    os.utime(garden, (garden.stat().st_atime, garden.stat().st_mtime + 100))  # new mtime, same bytes
    touched = index_paths(store, minilm, [docs], collection="notes")
    assert (touched.files_skipped, touched.files_updated, touched.chunks_embedded) == (3, 0, 0)

    (docs / "orbit.txt").write_text("The rover drilled a rock sample in Jezero crater.", encoding="utf-8")
    (docs / "bread.md").unlink()
    _write(docs, {"telescope.txt": "A new telescope mirror was polished for the observatory."})
    changed = index_paths(store, minilm, [docs], collection="notes")
    assert (changed.files_added, changed.files_updated, changed.files_skipped, changed.files_removed) == (1, 1, 1, 1)
    assert changed.chunks_embedded == 2

    coll = store.collection("notes")
    assert [Path(d.source).name for d in store.documents(coll)] == ["garden.txt", "orbit.txt", "telescope.txt"]
    top = search_text(store, minilm, "baking bread with flour", collection="notes", k=3)
    assert "bread.md" not in {Path(h.source).name for h in top}
    assert search_text(store, minilm, "rover rock sample", collection="notes", k=1)[0].text.startswith("The rover")


def test_a_file_deleted_from_an_indexed_file_list_is_removed(store, minilm, tmp_path):
    _write(tmp_path, {"one.txt": NOTES["orbit.txt"]})
    index_paths(store, minilm, [tmp_path / "one.txt"], collection="c")
    (tmp_path / "one.txt").unlink()
    report = index_paths(store, minilm, [tmp_path / "one.txt"], collection="c")
    assert report.files_removed == 1 and store.documents(store.collection("c")) == []
    with pytest.raises(NotFoundError):
        index_paths(store, minilm, [tmp_path / "never-there.txt"], collection="c")


def test_cancel_mid_file_leaves_no_partial_document(store, minilm, tmp_path, speech_dir, text_dir):
    small = " ".join(_references(speech_dir, 3))
    long_text = _post_bodies(text_dir, 1400)
    _write(tmp_path / "docs", {"a_small.txt": small, "b_long.txt": long_text})
    options = ChunkOptions(max_tokens=40, overlap_tokens=8)  # many chunks: several embedding batches
    cancel = CancelToken()
    seen = []

    def on_progress(p):
        seen.append(p)
        if p.unit == "chunks" and "b_long" in p.message:
            cancel.cancel()  # after the first batch of the long file

    with pytest.raises(Cancelled) as info:
        index_paths(store, minilm, [tmp_path / "docs"], collection="c", on_progress=on_progress, cancel=cancel,
                    options=options)
    chunk_events = [p for p in seen if p.unit == "chunks" and "b_long" in p.message]
    assert len(chunk_events) == 1 and chunk_events[0].done < chunk_events[0].total
    assert info.value.partial.files_added == 1
    coll = store.collection("c")
    assert [Path(d.source).name for d in store.documents(coll)] == ["a_small.txt"]
    n_chunks = store.connection.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert n_chunks == store.document(coll, str(tmp_path / "docs" / "a_small.txt")).chunks
    only_long = next(w for w in long_text.lower().split() if w.isalpha() and len(w) > 5 and w not in small.lower())
    assert store.search(None, only_long, "c", k=5) == []  # nor any full-text row of the long file
    file_events = [p for p in seen if p.unit == "files"]
    assert [(p.done, p.total) for p in file_events] == [(1, 2)]


def test_chunks_fit_the_model_and_overlap(minilm, speech_dir):
    text = "\n".join(_references(speech_dir, 50))
    chunks = chunk_text(text, minilm, ChunkOptions(max_tokens=64, overlap_tokens=16))
    assert len(chunks) > 5
    for a, b in itertools.pairwise(chunks):
        assert a.char_start < b.char_start < a.char_end  # consecutive chunks overlap
    for c in chunks:
        assert text[c.char_start:c.char_end] == c.text
        assert minilm.count_tokens(c.text) <= 64
    default = chunk_text(text, minilm)
    assert all(minilm.count_tokens(c.text) <= minilm.max_seq_length for c in default)
    assert default[0].char_start == 0 and default[-1].char_end == len(text.rstrip())


def test_transcript_chunks_keep_times_and_segment_ids(minilm, speech_dir):
    refs = _references(speech_dir, 40)
    segments = [TimedText(i, i * 2.0, i * 2.0 + 1.5, t) for i, t in enumerate(refs)]
    full, chunks = chunk_segments(segments, minilm, ChunkOptions(max_tokens=60, overlap_tokens=10))
    assert len(chunks) > 3
    covered = set()
    for c in chunks:
        ids = c.segment_ids
        assert ids == list(range(ids[0], ids[-1] + 1))
        assert (c.start_time, c.end_time) == (segments[ids[0]].start, segments[ids[-1]].end)
        assert full[c.char_start:c.char_end] == c.text
        assert c.text in " ".join(r.strip() for r in refs[ids[0]:ids[-1] + 1])  # a long segment is split
        assert minilm.count_tokens(c.text) <= 60
        assert [time for _offset, time in c.segment_starts] == [segments[i].start for i in ids]
        if len(ids) > 1:  # whole segments: each begins where its offset says
            assert all(c.text[offset:].startswith(refs[i].strip()) for i, (offset, _t) in zip(ids, c.segment_starts))
        else:
            assert c.segment_starts[0][0] == 0
        covered.update(ids)
    assert covered == set(range(40))


def test_index_transcript_record_and_search_by_time(store, minilm, speech_dir):
    refs = _references(speech_dir, 30)
    transcript = Transcript("en", 1.0, 60.0, [Segment(i, i * 2.0, i * 2.0 + 1.8, " " + t) for i, t in enumerate(refs)])

    class Record:  # the fields of a history record that the indexer reads
        id, source, transcript = 7, "meeting.flac", None

    record = Record()
    record.transcript = transcript
    report = index_transcript(store, minilm, record)
    assert report.files_added == 1 and report.chunks_embedded >= 1
    assert index_transcript(store, minilm, record).files_skipped == 1
    target = next(i for i, t in enumerate(refs) if "agent" in t.lower())
    hit = search_text(store, minilm, refs[target], collection="transcripts", k=1, hybrid=True)[0]
    assert hit.source == "history:7" and hit.title == "meeting.flac" and hit.doc_kind is DocKind.TRANSCRIPT
    assert target in hit.segment_ids
    assert (hit.focus_segment_id, hit.focus_time) == (target, transcript.segments[target].start)  # where it is said
    assert hit.start_time == transcript.segments[hit.segment_ids[0]].start
    assert hit.end_time == transcript.segments[hit.segment_ids[-1]].end


def test_transcript_files_of_every_format_are_indexed_with_times(store, minilm, tmp_path, speech_dir):
    refs = _references(speech_dir, 6)
    transcript = Transcript("en", 1.0, 30.0, [Segment(i, i * 5.0, i * 5.0 + 4.0, " " + t) for i, t in enumerate(refs)])
    for fmt in ("srt", "vtt", "json"):
        write_transcript(transcript, fmt, tmp_path / f"talk.{fmt}")
    report = index_paths(store, minilm, [tmp_path], collection="t")
    assert report.files_added == 3 and not report.errors
    hits = search_text(store, minilm, refs[0], collection="t", k=3)
    assert {Path(h.source).suffix for h in hits} == {".srt", ".vtt", ".json"}
    for h in hits:
        assert h.doc_kind is DocKind.TRANSCRIPT and h.start_time == 0.0 and h.segment_ids[0] == 0


def test_index_text_replaces_by_source_and_skips_the_same_text(store, minilm):
    first = index_text(store, minilm, "Meeting notes: budget approved for the new lab.", source="paste:1")
    assert first.files_added == 1 and first.chunks_embedded == 1
    assert index_text(store, minilm, "Meeting notes: budget approved for the new lab.", source="paste:1").files_skipped == 1
    assert index_text(store, minilm, "Meeting notes: budget cut.", source="paste:1").files_updated == 1
    hits = search_text(store, minilm, "budget", k=5, hybrid=True)
    assert [h.text for h in hits] == ["Meeting notes: budget cut."] and hits[0].doc_kind is DocKind.TEXT


def test_collection_model_mismatch_raises(store, minilm, tmp_path):
    store.collection("other", model_id="some-other-model", dim=384)
    _write(tmp_path, {"a.txt": "text"})
    with pytest.raises(InvalidParameterError, match="some-other-model"):
        index_paths(store, minilm, [tmp_path], collection="other")
    with pytest.raises(InvalidParameterError):
        index_text(store, minilm, "hello", collection="other")


def test_pdf_text_is_extracted_and_indexed(store, minilm, tmp_path):
    pdf = tiny_pdf("Orbital mechanics lecture notes")
    assert pdf_text(pdf).strip() == "Orbital mechanics lecture notes"
    (tmp_path / "lecture.pdf").write_bytes(pdf)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    report = index_paths(store, minilm, [tmp_path], collection="pdf")
    assert report.files_added == 1 and [Path(p).name for p, _ in report.errors] == ["broken.pdf"]
    hit = search_text(store, minilm, "orbital mechanics", collection="pdf", k=1)[0]
    assert Path(hit.source).name == "lecture.pdf" and hit.text == "Orbital mechanics lecture notes"
