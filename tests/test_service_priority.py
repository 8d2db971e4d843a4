"""Regression (issue 26): a search or an embedding request never waits behind a whole index job.

Queries, API embedding requests and index jobs share the one embedding worker. An index job of the 200
newsgroup posts of tests/data runs; a query and then an API embedding request (through the real server
and the official client) are asked while it runs. The assertions are structural, not timed: each answer
came while the job was still running, at most one embedding batch of the job finished while it waited,
and the worker reports that the job let it go first. The answers are the same as with the worker idle.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

import numpy as np
import pytest
from fixture_data import TEXT

from executors.search.indexer import EMBED_BATCH
from executors.service.events import JobProgress
from executors.service.settings import EMBEDDING

openai = pytest.importorskip("openai")

GUARD_S = 600  # hang guard, not a timing assertion
TOKEN = "priority-test-token-0123"
QUERY = "how do I upgrade the memory of my computer"


@pytest.fixture(scope="module")
def posts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("posts")
    for line in (TEXT / "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines():
        post = json.loads(line)
        (folder / f"post{post['id']:03d}.txt").write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
    return folder


@pytest.fixture()
def engine(make_engine, minilm):
    return make_engine(embedding=minilm)


class BatchClock:
    """When each embedding batch of index jobs finished (monotonic), from the service's progress events."""

    def __init__(self, engine):
        self.times: list[float] = []
        self.first = threading.Event()
        self._unsubscribe = engine.events.subscribe(self._on_event)

    def _on_event(self, event) -> None:
        if isinstance(event, JobProgress) and event.progress.unit == "chunks":
            self.times.append(time.monotonic())
            self.first.set()

    def between(self, start: float, end: float) -> int:
        return sum(start < t < end for t in self.times)


def _while_indexing(engine, posts, ask):
    """Start indexing ``posts``, call ``ask()`` after its first batch; (answer, batches the answer waited
    through, whether the job was still running when it came, batches in all)."""
    clock = BatchClock(engine)
    job = engine.search.index_paths([posts])
    assert clock.first.wait(GUARD_S), "the index job never embedded a batch"
    asked = time.monotonic()
    answer = ask()
    answered = time.monotonic()
    running = not job.future.done()
    report = job.result(GUARD_S)
    assert report.files_added == 200
    return answer, clock.between(asked, answered), running, len(clock.times)


def test_a_query_waits_for_at_most_one_batch_of_a_running_index_job(engine, posts):
    worker = engine.workers[EMBEDDING]
    hits, waited_through, running, batches = _while_indexing(
        engine, posts, lambda: engine.search.search(QUERY, k=5, collections=["default"]).result(GUARD_S))
    assert batches > 3, f"the job had {batches} batches: too few to interleave"
    assert running, "the query came back only after the whole index job"
    assert waited_through <= 1, f"the query waited while {waited_through} batches of {EMBED_BATCH} chunks finished"
    assert worker.served_early >= 1
    assert hits, "the query found nothing in what was indexed so far"
    assert all(h.source.startswith(str(posts)) for h in hits)


def test_an_api_embedding_request_waits_for_at_most_one_batch(engine, posts, minilm):
    from ferrum_api.server import ApiConfig, ApiServer

    server = ApiServer(engine, ApiConfig(port=0, token=TOKEN))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="priority-api-loop", daemon=True)
    thread.start()
    try:
        url = asyncio.run_coroutine_threadsafe(server.start(), loop).result(60)
        client = openai.OpenAI(base_url=url, api_key=TOKEN, max_retries=0, timeout=GUARD_S)
        texts = ["a new hard drive for my computer", "the game went to overtime"]

        def ask():
            return client.embeddings.create(model=minilm.model_id, input=texts)

        response, waited_through, running, _ = _while_indexing(engine, posts, ask)
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(60)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(60)
    assert running, "the embedding request came back only after the whole index job"
    assert waited_through <= 1, f"the request waited while {waited_through} batches finished"
    vectors = np.array([d.embedding for d in response.data], dtype=np.float32)
    np.testing.assert_allclose(vectors, minilm.embed(texts), atol=1e-5)
