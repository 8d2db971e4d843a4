"""``ferrum index`` and ``ferrum search`` end to end (the bundled MiniLM, a throw-away database)."""

from __future__ import annotations

import json

import pytest

from ferrum_cli.main import main

NOTES = {
    "mars.txt": "The probe entered a stable orbit around Mars after a seven month cruise.",
    "bread.md": "# Sourdough\n\nMix flour, water and salt; let the dough rise overnight before baking.",
    "garden.txt": "Tomatoes need full sun, regular watering and a stake to climb as they grow.",
}


@pytest.fixture()
def indexed(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in NOTES.items():
        (docs / name).write_text(text, encoding="utf-8")
    db = tmp_path / "index.db"
    assert main(["index", str(docs), "--db", str(db), "--collection", "notes", "--device", "cpu"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("3 added, 0 updated, 0 unchanged, 0 removed; 3 chunks embedded")
    assert "files" in out.err  # the tqdm progress bar
    return docs, db


def test_search_prints_json_hits(indexed, capsys):
    docs, db = indexed
    code = main(["search", "baking bread", "-k", "2", "--json", "--db", str(db), "--collection", "notes", "--hybrid",
                 "--device", "cpu"])
    assert code == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 2
    assert hits[0]["source"] == str(docs / "bread.md") and hits[0]["doc_kind"] == "file"
    assert hits[0]["matched_terms"] == ["baking"] and hits[0]["text"].startswith("# Sourdough")


def test_reindex_skips_unchanged_and_text_output_lists_hits(indexed, capsys):
    docs, db = indexed
    (docs / "garden.txt").unlink()
    assert main(["index", str(docs), "--db", str(db), "--collection", "notes", "-q", "--device", "cpu"]) == 0
    assert capsys.readouterr().out.startswith("0 added, 0 updated, 2 unchanged, 1 removed; 0 chunks embedded")
    assert main(["search", "planets and space probes", "-k", "5", "--db", str(db), "--collection", "notes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(" 1. ") and "mars.txt" in lines[0]
    assert sum(line[:3].strip().rstrip(".").isdigit() for line in lines) == 2  # garden.txt is gone


def test_search_of_a_missing_collection_fails_with_a_hint(tmp_path, capsys):
    assert main(["search", "anything", "--db", str(tmp_path / "empty.db"), "--collection", "nope"]) == 1
    assert "No search collection named 'nope'" in capsys.readouterr().err


def test_a_folder_without_indexable_files_says_why(tmp_path, capsys):
    data = tmp_path / "exports"
    data.mkdir()
    for i in range(3):
        (data / f"rows-{i}.jsonl").write_text('{"text": "hello"}\n', encoding="utf-8")
    (data / "table.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    assert main(["index", str(data), "--db", str(tmp_path / "index.db"), "-q", "--device", "cpu"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("0 added, 0 updated, 0 unchanged, 0 removed; 0 chunks embedded")
    assert "4 files skipped because their type cannot be indexed (.jsonl ×3, .csv)" in out.err
    assert ".txt" in out.err and "nothing to index" in out.err
