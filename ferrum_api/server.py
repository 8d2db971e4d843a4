"""The aiohttp application and its runner, on whatever event loop is running (the GUI's qasync loop
or ``ferrum serve``'s own)."""

from __future__ import annotations

import asyncio
import collections
import logging
import time

from aiohttp import web

from executors.core.errors import InvalidParameterError
from executors.service import EngineService

from . import routes_audio, routes_embeddings, routes_models
from .auth import auth_middleware, load_or_create_token
from .config import CONFIG, METER, QUEUE, ApiConfig, is_loopback
from .errors import to_api_error
from .work_queue import WorkQueue

log = logging.getLogger("ferrum_api")

SAMPLE_PERIOD_S = 1.0


class RequestMeter:
    """Requests per second, latency and queue depth, reported through ``service.record``."""

    def __init__(self, service: EngineService, queue: WorkQueue):
        self.service, self.queue = service, queue
        self.finished = collections.deque()  # completion times of the last period
        self.total = 0

    def done(self, latency_s: float) -> None:
        self.total += 1
        self.finished.append(time.monotonic())
        self.service.record("api_latency_s", latency_s)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(SAMPLE_PERIOD_S)
            now = time.monotonic()
            while self.finished and self.finished[0] < now - SAMPLE_PERIOD_S:
                self.finished.popleft()
            self.service.record("api_requests_per_s", len(self.finished) / SAMPLE_PERIOD_S)
            self.service.record("api_queue_depth", float(self.queue.stats.depth))


def _error_middleware(meter: RequestMeter):
    @web.middleware
    async def envelope(request: web.Request, handler):
        start = time.perf_counter()
        try:
            response = await handler(request)
        except asyncio.CancelledError:
            raise  # the client went away: nobody to answer
        except Exception as exc:  # noqa: BLE001 - every failure leaves as an OpenAI error envelope
            error = to_api_error(exc, f"answering {request.method} {request.path}")
            if error.status >= 500:
                log.warning("%s %s failed: %s", request.method, request.path, error.message)
            response = error.response()
        meter.done(time.perf_counter() - start)
        return response

    return envelope


def create_app(service: EngineService, config: ApiConfig, token: str | None) -> web.Application:
    """The app for ``service``; ``token`` None disables authentication."""
    queue = WorkQueue(service)
    meter = RequestMeter(service, queue)
    # error middleware first so that auth failures get the envelope too
    app = web.Application(middlewares=[_error_middleware(meter), auth_middleware(token)],
                          client_max_size=config.max_upload_bytes)
    app[CONFIG] = config
    app[QUEUE] = queue
    app[METER] = meter
    app.router.add_get("/v1/models", routes_models.list_models)
    app.router.add_post("/v1/audio/transcriptions", routes_audio.transcriptions)
    app.router.add_post("/v1/audio/translations", routes_audio.translations)
    app.router.add_post("/v1/embeddings", routes_embeddings.embeddings)
    return app


class ApiServer:
    """Start and stop the API on the running event loop: ``await start()`` → the bound URL."""

    def __init__(self, service: EngineService, config: ApiConfig | None = None):
        self.service = service
        self.config = config or ApiConfig()
        if not is_loopback(self.config.host) and not self.config.allow_remote:
            raise InvalidParameterError(
                f"Refusing to listen on {self.config.host}: only loopback addresses are allowed by default",
                "use 127.0.0.1, or pass --allow-remote (anyone who can reach this address may use the models)")
        self.token = (self.config.token or load_or_create_token()) if self.config.auth else None
        self.app = create_app(service, self.config, self.token)
        self._runner: web.AppRunner | None = None
        self._sampler: asyncio.Task | None = None
        self.port: int | None = None

    @property
    def queue(self) -> WorkQueue:
        return self.app[QUEUE]

    @property
    def url(self) -> str:
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        return f"http://{host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._runner is not None

    async def start(self) -> str:
        # handler_cancellation: a client that disconnects cancels its handler, which cancels its job
        runner = web.AppRunner(self.app, handler_cancellation=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.config.host, self.config.port)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            from executors.core.errors import IOError_

            raise IOError_(f"Cannot listen on {self.config.host}:{self.config.port}: {exc.strerror or exc}",
                           "another program uses this port; pick another one") from exc
        self._runner = runner
        self.port = runner.addresses[0][1]
        self._sampler = asyncio.ensure_future(self.app[METER].run())
        return self.url

    async def stop(self) -> None:
        if self._sampler is not None:
            self._sampler.cancel()
            self._sampler = None
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
