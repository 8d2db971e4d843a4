"""``SearchService``: embeddings, indexing (files and transcripts) and search, on the embedding worker.

The search store lives on that worker too: every search and every indexing run needs the embedder,
and one thread keeps SQLite's writes in order. Searching several collections ranks them as one
(``executors.search.query.search``), so a hit's place does not depend on which others were searched.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from pathlib import Path

from ..core.errors import Cancelled, FerrumError, wrap_unexpected
from ..core.types import Progress
from .events import EventHub, Failure, IndexChanged, JobProgress
from .history import HistoryService
from .jobs import Job, JobBoard
from .models import ModelSlots
from .settings import EMBEDDING
from .workers import Worker, YieldingEmbedder

FILES = "default"            # the collection files and folders are indexed into
TRANSCRIPTS = "transcripts"  # the collection of the transcript history


class SearchService:
    def __init__(self, db_path: Path | None, models: ModelSlots, worker: Worker, jobs: JobBoard,
                 events: EventHub, history: HistoryService):
        self._db_path = db_path
        self._models = models
        self._worker = worker
        self._jobs = jobs
        self._events = events
        self._history = history
        self._store = None

    @property
    def store(self):
        """The ``SearchStore`` (opened on first use; use it on the embedding worker)."""
        if self._store is None:
            from ..search import SearchStore

            self._store = SearchStore(self._db_path)
        return self._store

    def _embedder(self):
        return self._models.require(EMBEDDING).executor

    def _indexing_embedder(self):
        """The embedder for indexing: a query or an embedding request waiting goes before its next batch."""
        return YieldingEmbedder(self._embedder(), self._worker)

    def _on_worker(self, fn, *args) -> Future:
        return self._worker.submit(fn, *args)

    def _interactive(self, fn, *args) -> Future:
        """Someone waits for the answer: before any queued job, and between two batches of a running one."""
        return self._worker.submit_urgent(fn, *args)

    # -- embeddings and search ----------------------------------------------------------------
    def embed(self, texts: list[str]) -> Future:
        """Float32 vectors [len(texts), dim], L2-normalised, in input order."""
        def run():
            start = time.perf_counter()
            vectors = self._embedder().embed(list(texts))
            self._events.sample("texts_per_s", len(texts) / max(time.perf_counter() - start, 1e-6))
            return vectors
        return self._interactive(run)

    def collections(self) -> Future:
        """Every collection of the index (``Collection`` with counts); needs no model."""
        return self._interactive(lambda: self.store.collections())

    def search(self, query: str, k: int = 10, hybrid: bool = True, collections: list[str] | None = None,
               missing_ok: bool = False) -> Future:
        """``SearchHit``s for ``query``: over ``collections`` ranked as one, or (None) over every collection
        of the loaded embedding model. A named collection that does not exist raises ``NotFoundError``,
        or is skipped with ``missing_ok`` (a collection nothing was indexed into yet)."""
        from ..search import search_index

        def run():
            return search_index(self.store, self._embedder(), query, collections, k=k, hybrid=hybrid,
                                missing_ok=missing_ok)
        return self._interactive(run)

    # -- indexing -------------------------------------------------------------------------------
    def index_paths(self, paths, collection: str = FILES, job_id: str | None = None) -> Job:
        """Bring ``collection`` up to date with files and folders (a job; its result an ``IndexReport``)."""
        from ..search import index_paths

        paths = [Path(p) for p in paths]
        title = paths[0].name if len(paths) == 1 else f"{len(paths)} files"
        job = self._jobs.create("index", title, ";".join(map(str, paths)), job_id)

        def body(job: Job):
            embedder = self._indexing_embedder()
            self._jobs.started(job)
            start = time.perf_counter()
            report = index_paths(self.store, embedder, paths, collection=collection,
                                 on_progress=self._progress(job), cancel=job.token)
            if report.chunks_embedded:
                self._events.sample("texts_per_s", report.chunks_embedded / max(time.perf_counter() - start, 1e-6))
            self._events.emit(IndexChanged(collection))
            return report
        return self._jobs.run(job, self._worker, body, f"indexing {title}")

    def index_record(self, record_id: int) -> Future:
        """Index (or re-index) one history record into the transcripts collection."""
        from ..search import index_transcript

        def run():
            report = index_transcript(self.store, self._indexing_embedder(), self._history.load(record_id),
                                      collection=TRANSCRIPTS)
            self._events.emit(IndexChanged(TRANSCRIPTS))
            return report
        return self._on_worker(run)

    def index_record_soon(self, record_id: int) -> None:
        """``index_record`` in the background; a failure goes to the ``Failure`` event."""
        self._background(self.index_record(record_id), "indexing the transcript")

    def index_transcripts(self, job_id: str | None = None) -> Job:
        """Make every transcript in the history searchable (a job; unchanged ones are skipped): one
        per recording, its newest; entries of deleted or superseded records leave the index first."""
        from ..search import IndexReport, index_transcript, prune_transcripts
        from ..transcripts.history import searchable_entries

        job = self._jobs.create("index", "Transcripts", "history", job_id)

        def body(job: Job):
            embedder = self._indexing_embedder()
            entries = searchable_entries(self._history.list())
            self._jobs.started(job)
            total = IndexReport(files_removed=prune_transcripts(self.store, [e.id for e in entries], TRANSCRIPTS))
            progress = self._progress(job)
            try:
                for done, entry in enumerate(entries):
                    job.token.raise_if_cancelled("indexing of the transcripts")
                    progress(Progress(done, len(entries), "transcripts", entry.name))
                    try:
                        one = index_transcript(self.store, embedder, self._history.load(entry.id), TRANSCRIPTS)
                    except FerrumError as exc:
                        total.errors.append((entry.name, str(exc)))
                        continue
                    for name in ("files_added", "files_updated", "files_skipped", "chunks_embedded"):
                        setattr(total, name, getattr(total, name) + getattr(one, name))
            except Cancelled as exc:
                exc.partial = total
                raise
            finally:
                self._events.emit(IndexChanged(TRANSCRIPTS))
            progress(Progress(len(entries), len(entries), "transcripts", ""))
            return total
        return self._jobs.run(job, self._worker, body, "indexing the transcripts")

    def load_matrices(self, collections: list[str]) -> Future:
        """Bring the search matrices of ``collections`` up to date now, so that closing the service saves
        them beside the database, where a process that only searches (``ferrum search``) reads them."""
        def run():
            for collection in self.store.collections():
                if collection.name in collections:
                    self.store.matrix(collection)
        return self._on_worker(run)

    def remove_sources(self, paths, collection: str = FILES) -> Future:
        """Drop the documents of files or folders; the future's result is how many went."""
        from ..search import remove_paths

        def run():
            removed = remove_paths(self.store, collection, paths)
            if removed:
                self._events.emit(IndexChanged(collection))
            return removed
        return self._on_worker(run)

    def follow_record(self, record_id: int, deleted: bool, reindex: bool) -> None:
        """Keep the transcripts collection in step with an edited or deleted history record."""
        if deleted:
            def drop():
                if TRANSCRIPTS in {c.name for c in self.store.collections()}:
                    if self.store.remove_document(self.store.collection(TRANSCRIPTS), f"history:{record_id}"):
                        self._events.emit(IndexChanged(TRANSCRIPTS))
            self._background(self._on_worker(drop), "removing the transcript from the search index")
        elif reindex:
            self.index_record_soon(record_id)

    # -- helpers ----------------------------------------------------------------------------------
    def _progress(self, job: Job):
        return lambda progress: self._events.emit(JobProgress(job.job_id, progress))

    def _background(self, future: Future, doing: str) -> None:
        def settle(done: Future) -> None:
            exc = done.exception()
            if exc is not None and not isinstance(exc, Cancelled):
                self._events.emit(Failure(wrap_unexpected(exc, doing)))
        future.add_done_callback(settle)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
