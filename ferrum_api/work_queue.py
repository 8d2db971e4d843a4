"""How API requests reach the executors: through the ``ModelService`` workers, one per executor.

Transcriptions queue on the Whisper worker (behind the GUI's own jobs when hosted there); a request
whose client goes away has its ``CancelToken`` set, so a queued job never starts and a running one
stops at its next check. Concurrent embedding requests are coalesced: while one ``embed`` call runs,
new requests gather and the next call embeds all of them at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from executors.core.errors import Cancelled
from executors.core.types import CancelToken
from executors.service.models import EMBEDDING, WHISPER, ModelService

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
    def __init__(self, service: ModelService):
        self.service = service
        self.stats = QueueStats()
        self._pending: list[_EmbedRequest] = []
        self._flusher: asyncio.Task | None = None

    # ---- transcription -------------------------------------------------------------------
    async def transcribe(self, audio: bytes, options, speakers=None):
        """The transcript of ``audio``; with ``speakers`` (DiarizationOptions), labelled by speaker."""
        executor = await self.service.executor(WHISPER)
        token = CancelToken()
        self.stats.waiting += 1
        started = [False]
        try:
            return await self.service.run(WHISPER, self._transcribe_job, executor, audio, options, token, started,
                                          speakers)
        except asyncio.CancelledError:
            token.cancel()  # the worker may already run it: stop it at its next check
            raise
        finally:
            if not started[0]:
                self.stats.waiting -= 1

    def _transcribe_job(self, executor, audio: bytes, options, token: CancelToken, started: list, speakers=None):
        # runs on the worker thread; counters are plain ints updated under the GIL
        started[0] = True
        self.stats.waiting -= 1
        self.stats.running += 1
        try:
            token.raise_if_cancelled("transcription request")
            transcript = executor.transcribe(audio, options, cancel=token)
            if speakers is not None:
                from executors.diarization import assign_speakers, diarize

                transcript = assign_speakers(transcript, diarize(audio, speakers, cancel=token))
        except Cancelled:
            self.stats.aborted += 1
            raise
        except Exception:
            self.stats.failed += 1
            raise
        finally:
            self.stats.running -= 1
        self.stats.completed += 1
        return transcript

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
            vectors, counts = await self.service.run(EMBEDDING, _embed_and_count, executor, texts)
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
