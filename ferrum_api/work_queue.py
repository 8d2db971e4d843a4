"""How API requests reach the engine service.

Transcriptions are jobs on the service's Whisper queue (behind the app's own jobs when hosted there),
saved to the transcript history unless the server or the request says otherwise; a request whose
client goes away cancels its job, so a queued one never starts and a running one stops at its next
check. Concurrent embedding requests are coalesced: while one ``embed`` call runs on the embedding
worker, new requests gather and the next call embeds all of them at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from executors.core.errors import Cancelled
from executors.service import EMBEDDING, EngineService, wait

MAX_BATCH_TEXTS = 1024  # texts per coalesced embed call (bounds the padded batch's memory)


@dataclass
class QueueStats:
    waiting: int = 0        # accepted, not started on a worker yet
    running: int = 0
    completed: int = 0
    failed: int = 0
    aborted: int = 0        # stopped by their CancelToken (client disconnected)
    embed_calls: int = 0    # embed() calls made on the executor (< requests when coalesced)
    embed_requests: int = 0

    @property
    def depth(self) -> int:
        return self.waiting + self.running


@dataclass
class _EmbedRequest:
    texts: list[str]
    future: asyncio.Future
    tokens: list[int] = field(default_factory=list)


def _embed_and_count(executor, texts: list[str]) -> tuple[np.ndarray, list[int]]:
    return executor.embed(texts), [executor.count_tokens(t) for t in texts]


class WorkQueue:
    def __init__(self, service: EngineService):
        self.service = service
        self.stats = QueueStats()
        self._pending: list[_EmbedRequest] = []
        self._flusher: asyncio.Task | None = None

    # ---- transcription -------------------------------------------------------------------
    async def transcribe(self, audio: bytes, options, *, title: str = "API request", save: bool = True,
                         speakers=None):
        """The Transcript of ``audio``; a transcription job on the service (in the history with ``save``);
        with ``speakers`` (DiarizationOptions), labelled by speaker."""
        self.stats.waiting += 1
        started = [False]

        def on_start(_info) -> None:  # on the worker; counters are plain ints updated under the GIL
            started[0] = True
            self.stats.waiting -= 1
            self.stats.running += 1

        def settle(future) -> None:  # counted when the job really ends, not when its client left
            if started[0]:
                self.stats.running -= 1
            else:
                self.stats.waiting -= 1
            error = future.exception()
            if error is None:
                self.stats.completed += 1
            elif isinstance(error, Cancelled):
                self.stats.aborted += 1
            else:
                self.stats.failed += 1

        job = self.service.transcribe(audio, options, title=title, save=save, on_start=on_start, speakers=speakers)
        job.future.add_done_callback(settle)
        return (await wait(job)).transcript

    # ---- embeddings ----------------------------------------------------------------------
    async def embed(self, texts: list[str]) -> tuple[np.ndarray, list[int]]:
        """Vectors [len(texts), dim] and each text's token count, in input order."""
        await self.service.executor(EMBEDDING)
        request = _EmbedRequest(texts, asyncio.get_running_loop().create_future())
        self._pending.append(request)
        self.stats.waiting += 1
        self.stats.embed_requests += 1
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush())
        return await request.future  # a cancelled request is skipped when its batch is built

    async def _flush(self) -> None:
        while self._pending:
            batch, count = [], 0
            while self._pending and (not batch or count + len(self._pending[0].texts) <= MAX_BATCH_TEXTS):
                request = self._pending.pop(0)
                self.stats.waiting -= 1
                if not request.future.done():
                    batch.append(request)
                    count += len(request.texts)
            if batch:
                await self._run_batch(batch)

    async def _run_batch(self, batch: list[_EmbedRequest]) -> None:
        texts = [t for r in batch for t in r.texts]
        self.stats.running += len(batch)
        self.stats.embed_calls += 1
        try:
            executor = await self.service.executor(EMBEDDING)
            vectors, counts = await self.service.run(EMBEDDING, _embed_and_count, executor, texts, urgent=True)
        except Exception as exc:  # noqa: BLE001 - every request of the batch gets the error
            self.stats.failed += len(batch)
            for r in batch:
                if not r.future.done():
                    r.future.set_exception(exc)
            return
        finally:
            self.stats.running -= len(batch)
        start = 0
        for r in batch:
            end = start + len(r.texts)
            if not r.future.done():
                r.future.set_result((vectors[start:end], counts[start:end]))
            start = end
        self.stats.completed += len(batch)
