"""``ferrum search``'s quick path (ONNX query model, numpy search, no torch) against the engine service's
search on a real index: 50 newsgroup posts embedded by the bundled MiniLM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ferrum_cli.main import build_parser, main
from ferrum_cli.quick_search import quick_hits

ROOT = Path(__file__).resolve().parents[1]
QUERIES = {  # query -> the post it is about (its file name)
    "Hubble telescope servicing mission": "p004.txt",
    "gamma ray bursts": "p012.txt",
    "amateur rocket building": "p033.txt",
    "Jehovah's Witnesses visit": "p030.txt",
    "Kuiper belt object discovered": "p044.txt",
}


def _posts(count: int) -> list[dict]:
    lines = (ROOT / "tests" / "data" / "text" / "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:count]]


@pytest.fixture(scope="module")
def onnx_copy():
    """The ONNX copy of the bundled MiniLM in the tests' model cache (made once, then reused)."""
    from executors.bert.onnx_export import export_onnx

    return export_onnx("all-MiniLM-L6-v2").files


@pytest.fixture(scope="module")
def engine(tmp_path_factory, minilm, onnx_copy):
    """An engine service over an index of 50 posts: 35 in the files collection, 15 in 'notes'."""
    from executors.service import EngineService, ServiceSettings

    tmp = tmp_path_factory.mktemp("quick")
    for name in ("files", "notes"):
        (tmp / name).mkdir()
    for i, post in enumerate(_posts(50)):
        folder = tmp / ("files" if i < 35 else "notes")
        (folder / f"p{i:03d}.txt").write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
    settings = ServiceSettings(history_db=tmp / "history.db", search_db=tmp / "search.db", device="cpu",
                               auto_index_transcripts=False)
    with EngineService(settings, executors={"embedding": minilm}) as service:
        service.search.index_paths([tmp / "files"]).result(600)
        service.search.index_paths([tmp / "notes"], "notes").result(600)
        service.db = tmp / "search.db"
        yield service


def _args(*argv: str):
    return build_parser().parse_args(["search", *argv])


def _same(quick, served) -> None:
    assert [h.chunk_id for h in quick] == [h.chunk_id for h in served]
    assert [h.matched_terms for h in quick] == [h.matched_terms for h in served]
    assert [h.keyword_rank for h in quick] == [h.keyword_rank for h in served]
    np.testing.assert_allclose([h.score for h in quick], [h.score for h in served], rtol=0, atol=2e-6)


def test_the_onnx_query_vector_is_the_torch_models(minilm, onnx_copy):
    from executors.bert.onnx_model import OnnxEmbedder

    texts = [*QUERIES, *(f"{p['subject']}\n\n{p['body']}" for p in _posts(40))]  # long posts: truncated alike
    ours = np.concatenate([OnnxEmbedder(onnx_copy, threads=1).embed([t]) for t in texts])
    cosines = np.sum(ours * minilm.embed(texts, use_cache=False), axis=1)
    assert cosines.min() >= 0.9999, f"lowest cosine {cosines.min():.6f}"


@pytest.mark.parametrize("hybrid", [False, True])
def test_quick_hits_are_the_services(engine, hybrid):
    for query, post in QUERIES.items():
        for collections in (None, ["notes"]):
            argv = [query, "-k", "10", "--db", str(engine.db), "--threads", "1", *(["--hybrid"] if hybrid else [])]
            if collections:
                argv += ["--collection", collections[0]]
            quick = quick_hits(_args(*argv))
            served = engine.search.search(query, k=10, hybrid=hybrid, collections=collections).result(60)
            assert quick is not None, "the quick path did not serve the search"
            _same(quick, served)
        assert Path(quick_hits(_args(query, "--db", str(engine.db)))[0].source).name == post


def test_a_search_with_the_onnx_copy_never_imports_torch(engine):
    query = "gamma ray bursts"
    script = ("import json, sys\nfrom ferrum_cli.main import main\n"
              f"code = main(['search', {query!r}, '--db', {str(engine.db)!r}, '--json', '--threads', '1'])\n"
              "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers'))\n"
              "print(json.dumps(heavy), file=sys.stderr)\nsys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=os.environ)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.splitlines()[-1]) == []
    served = engine.search.search(query, k=10, hybrid=False).result(60)
    assert [h["chunk_id"] for h in json.loads(done.stdout)] == [h.chunk_id for h in served]


def test_without_an_onnx_copy_the_search_runs_on_torch_and_makes_one(engine, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FERRUM_CACHE_DIR", str(tmp_path / "cache"))  # an empty model cache
    argv = ["search", "amateur rocket building", "--db", str(engine.db), "--json", "--threads", "1"]
    assert quick_hits(build_parser().parse_args(argv)) is None
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "ferrum: searched through torch; made an ONNX copy of all-MiniLM-L6-v2 in" in out.err
    first = json.loads(out.out)
    assert list((tmp_path / "cache" / "models" / "onnx").glob("*/model.onnx"))
    assert main(argv) == 0  # now through the copy: the same hits, and nothing said
    out = capsys.readouterr()
    again = json.loads(out.out)
    assert out.err == ""
    floats = ("score", "vector_score")
    assert [{**h, **dict.fromkeys(floats)} for h in again] == [{**h, **dict.fromkeys(floats)} for h in first]
    np.testing.assert_allclose([h["score"] for h in again], [h["score"] for h in first], rtol=0, atol=2e-6)


def test_ferrum_index_leaves_the_saved_matrix_a_quick_search_reads(tmp_path, onnx_copy, capsys):
    from executors.search.query_store import QueryStore

    docs = tmp_path / "docs"
    docs.mkdir()
    for i, post in enumerate(_posts(6)):
        (docs / f"p{i:03d}.txt").write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
    db = tmp_path / "index.db"
    assert main(["index", str(docs), "--db", str(db), "-q", "--threads", "1"]) == 0
    assert "ONNX" not in capsys.readouterr().err  # the copy was there already
    with QueryStore(db) as store:
        assert store.matrix(store.collection("default"))._codes.dtype == np.int8  # current, not rebuilt
