"""The host's I/O and embedding work: transcript history, export, search and playback.

Mixed into ``ExecutorHost``; it relies on the host's ``_run``, ``_report``, ``ready`` and signals.
History lives on the I/O worker; the search store on the embedding worker (its SQLite connection
stays in one thread, and every search needs the embedder anyway).
"""

from __future__ import annotations

import asyncio
import functools
import time
from pathlib import Path

from . import host_jobs as jobs
from .host_jobs import EMBEDDING

IO = "io"


class HostServices:
    """History, export, embeddings, search and playback methods of ``ExecutorHost``."""

    # ---- history (I/O worker) ------------------------------------------------------------
    def _history_store(self):
        if self._history is None:
            from executors.transcripts.history import TranscriptHistory

            self._history = TranscriptHistory()
        return self._history

    async def _io(self, fn):
        """Run ``fn(history)`` in the I/O worker."""
        try:
            return await self._run(IO, lambda: fn(self._history_store()))
        except Exception as exc:  # noqa: BLE001
            raise self._report(exc, "reading or writing the transcript history") from exc

    async def list_history(self):
        return await self._io(lambda h: h.list())

    async def load_history(self, record_id):
        return await self._io(lambda h: h.load(record_id))

    async def update_segment_text(self, record_id, segment_id: int, text: str) -> None:
        """Save an edited segment; the transcript's search entry is rebuilt in the background."""
        await self._io(lambda h: h.update_segment_text(record_id, segment_id, text))
        self.historyChanged.emit()
        if self._settings.auto_index_transcripts:
            self._background(self.index_transcript(record_id), "re-indexing the edited transcript")

    async def delete_history(self, record_id) -> None:
        await self._io(lambda h: h.delete(record_id))
        self.historyChanged.emit()
        await self.forget_transcripts([record_id])  # (issue 17) a deleted transcript is no longer found

    async def export(self, transcript, path, fmt: str) -> Path:
        from executors.transcripts.exporters import write_transcript

        try:
            await self._run(IO, write_transcript, transcript, fmt, Path(path))
        except Exception as exc:  # noqa: BLE001
            raise self._report(exc, f"exporting to {path}") from exc
        return Path(path)

    # ---- embeddings and search (embedding worker) ----------------------------------------
    def _search_store(self):
        if self._store is None:
            from executors.search import SearchStore

            self._store = SearchStore()
        return self._store

    async def _embedding_job(self, doing: str, fn):
        """Run ``fn(embedder, store)`` in the embedding worker."""
        try:
            embedder = await self.ready(EMBEDDING)
            return await self._run(EMBEDDING, lambda: fn(embedder, self._search_store()))
        except Exception as exc:  # noqa: BLE001
            raise self._report(exc, doing) from exc

    async def embed(self, texts: list[str]):
        start = time.perf_counter()
        vectors = await self._embedding_job("embedding texts", lambda e, _s: e.embed(list(texts)))
        self.sample.emit("texts_per_s", len(texts) / max(time.perf_counter() - start, 1e-6))
        return vectors

    async def search(self, query: str, k: int = 10, hybrid: bool = True, collection: str | None = None):
        from executors.search import search_text

        # (E2 edit) collection=None searches every collection of the loaded embedding model (files and
        # transcripts); a collection nothing was indexed into yet has no hits rather than an error.
        def run(embedder, store):
            existing = {c.name: c for c in store.collections()}
            if collection is not None:
                names = [collection] if collection in existing else []
            else:
                names = [name for name, c in existing.items() if c.model_id == embedder.model_id]
            if len(names) <= 1:
                return [h for name in names for h in search_text(store, embedder, query, name, k=k, hybrid=hybrid)]
            vec = embedder.embed([query])[0]
            hits = [h for name in names for h in store.search(vec, query, name, k=k, hybrid=hybrid)]
            return sorted(hits, key=lambda h: h.score, reverse=True)[:k]
        return await self._embedding_job(f"searching for '{query}'", run)

    async def index_paths(self, paths, collection: str = "default", job_id: str | None = None):
        from executors.search import index_paths

        paths = [Path(p) for p in paths]
        title = paths[0].name if len(paths) == 1 else f"{len(paths)} files"
        info, token = self._begin_job("index", title, ";".join(map(str, paths)), job_id)
        info.started = time.time()
        self.jobStarted.emit(info.job_id, info)
        on_progress = self._threadsafe(functools.partial(self.jobProgress.emit, info.job_id))
        start = time.perf_counter()
        try:
            report = await self._embedding_job(
                f"indexing {title}", lambda e, s: index_paths(s, e, paths, collection=collection,
                                                              on_progress=on_progress, cancel=token))
        except (Exception, asyncio.CancelledError) as exc:
            token.cancel()
            err = self._report(exc, f"indexing {title}")
            self._jobs.pop(info.job_id, None)
            self.jobFailed.emit(info.job_id, err)
            raise err from exc
        self._jobs.pop(info.job_id, None)
        if report.chunks_embedded:
            self.sample.emit("texts_per_s", report.chunks_embedded / max(time.perf_counter() - start, 1e-6))
        self.jobFinished.emit(info.job_id, report)
        self.indexChanged.emit()
        return report

    async def remove_sources(self, paths, collection: str = "default") -> int:
        """(E2 addition) Drop the indexed documents of files or folders; returns how many went."""
        roots = [str(Path(p).expanduser().absolute()) for p in paths]  # as index_paths records them

        def run(_embedder, store):
            if collection not in {c.name for c in store.collections()}:
                return 0
            coll = store.collection(collection)
            gone = [d.source for d in store.documents(coll)
                    if any(d.source == r or d.source.startswith(r.rstrip("/") + "/") for r in roots)]
            return sum(bool(store.remove_document(coll, source)) for source in gone)
        removed = await self._embedding_job("removing sources from the search index", run)
        if removed:
            self.indexChanged.emit()
        return removed

    async def index_transcript(self, record_id):
        from executors.search import index_transcript

        record = await self.load_history(record_id)
        result = await self._embedding_job("indexing a transcript",
                                           lambda e, s: index_transcript(s, e, record, collection="transcripts"))
        self.indexChanged.emit()
        return result

    # ---- (issue 17) keeping the index's transcripts in step with the history -------------
    async def forget_transcripts(self, record_ids, keep_only: bool = False) -> int:
        """Drop the search entries of these history records (``keep_only``: of every record but these)."""
        from executors.search import prune_transcripts, remove_transcripts

        ids = list(record_ids)
        try:
            removed = await self._run(EMBEDDING, lambda: (prune_transcripts if keep_only else remove_transcripts)(
                self._search_store(), ids))
        except Exception as exc:
            raise self._report(exc, "removing transcripts from the search index") from exc
        if removed:
            self.indexChanged.emit()
        return removed

    # ---- playback ------------------------------------------------------------------------
    def play(self, audio_path: str, start: float = 0.0, end: float | None = None) -> asyncio.Future:
        return self._background(self._run(IO, jobs.play_audio, str(audio_path), start, end), "playing audio")

    def stop_playback(self) -> None:
        jobs.stop_audio()
