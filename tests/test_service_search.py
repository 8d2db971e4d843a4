"""Regression (issue 12, bug 1): "Everything" + Hybrid ranks the collections as one.

Each collection used to be ranked on its own and the reciprocal-rank scores sorted together, so the
best (irrelevant) file of the files collection scored exactly as the one relevant transcript, and the
tie went to the collection named ``default``. Now the candidates of all collections are ranked together
as one list: the relevant transcript keeps the place and the score it has when its collection is
searched alone, in the service (the app) and in ``ferrum search`` alike.
"""

from __future__ import annotations

import json

import pytest

from executors.transcripts.results import Segment, Transcript
from ferrum_cli.main import main

FILES = {  # the files collection: nothing here is about space
    "bread.md": "# Sourdough\n\nMix flour, water and salt; let the dough rise overnight before baking.",
    "garden.txt": "Tomatoes need full sun, regular watering and a stake to climb as they grow.",
    "tax.txt": "File the annual return before the deadline and keep the receipts for six years.",
    "choir.txt": "The choir rehearses on Thursdays; altos meet half an hour early for warm-ups.",
}
RELEVANT = "The probe entered a stable orbit around Mars after a seven month cruise."
OTHERS = ["We will meet at the station at nine and take the early train to the coast.",
          "Please send the invoice for last month before Friday so accounting can close the books."]
QUERY = "spacecraft circling the fourth world"  # no word in common with any document: meaning alone


@pytest.fixture()
def engine(tmp_path, make_engine, minilm):
    service = make_engine(embedding=minilm)
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in FILES.items():
        (docs / name).write_text(text, encoding="utf-8")
    service.search.index_paths([docs]).result(300)
    segments = [Segment(id=i, start=10.0 * i, end=10.0 * i + 8, text=" " + text)
                for i, text in enumerate([OTHERS[0], RELEVANT, OTHERS[1]])]
    transcript = Transcript("en", 1.0, 30.0, segments)
    record = service.history.begin("briefing.wav", "whisper-tiny.en", None, audio_path=None)
    service.history.end(record, "done", transcript)
    service.search.index_record(record).result(300)
    service.record_id = record
    return service


def _relevant(hits) -> list[int]:
    return [i for i, h in enumerate(hits) if RELEVANT in h.text]


def test_everything_ranks_the_only_relevant_transcript_as_its_own_collection_does(engine):
    alone = engine.search.search(QUERY, k=10, hybrid=True, collections=["transcripts"]).result(60)
    everything = engine.search.search(QUERY, k=10, hybrid=True).result(60)
    assert {h.source for h in everything} > {f"history:{engine.record_id}"}  # files were searched too
    assert _relevant(alone) == [0] and _relevant(everything) == [0]
    assert everything[0].score == alone[0].score
    assert everything[0].keyword_rank is None  # meaning alone put it first; no keyword helped it
    top_file = next(h for h in everything if h.doc_kind.value == "file")
    assert top_file.score < everything[0].score  # no tie with the best file left for the name to break


def test_ferrum_search_ranks_like_the_service(engine, tmp_path, capsys):
    service_hits = engine.search.search(QUERY, k=5, hybrid=True).result(60)
    engine.close()  # the CLI opens the same database on its own
    assert main(["search", QUERY, "-k", "5", "--hybrid", "--json", "--db", str(tmp_path / "search.db"),
                 "--device", "cpu"]) == 0
    cli_hits = json.loads(capsys.readouterr().out)
    assert [h["chunk_id"] for h in cli_hits] == [h.chunk_id for h in service_hits]
    # a cosine in the score: two loads of the model may differ in its last float32 bits
    assert [h["score"] for h in cli_hits] == pytest.approx([h.score for h in service_hits], abs=1e-6)
    assert RELEVANT in cli_hits[0]["text"]
