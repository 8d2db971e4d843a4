"""``GET /v1/models`` and the check that a request names a model this server has loaded."""

from __future__ import annotations

import time

from aiohttp import web

from executors.service.models import EMBEDDING, WHISPER

from .config import QUEUE
from .errors import ApiError, invalid

# OpenAI's names for the model kinds; clients written for OpenAI send these.
ALIASES = {WHISPER: ("whisper-1",), EMBEDDING: ()}
STARTED = int(time.time())


def model_id(executor) -> str:
    return str(getattr(executor, "model_id", "") or "")


async def checked_executor(request: web.Request, kind: str, requested: str | None):
    """The executor of ``kind`` when ``requested`` names it (its id or an alias); 404 otherwise."""
    if not requested:
        raise invalid("The 'model' field is required; GET /v1/models lists the models this server has",
                      param="model", code="missing_required_parameter")
    executor = await request.app[QUEUE].service.executor(kind)
    names = (model_id(executor), *ALIASES[kind])
    if requested not in names:
        raise ApiError(404, f"The model '{requested}' does not exist on this server; use one of: "
                       f"{', '.join(names)}", param="model", code="model_not_found")
    return executor


async def list_models(request: web.Request) -> web.Response:
    service = request.app[QUEUE].service
    data = []
    for kind in (WHISPER, EMBEDDING):
        executor = await service.executor(kind)
        data.append({"id": model_id(executor), "object": "model", "created": STARTED, "owned_by": "ferrum",
                     "ferrum_kind": kind, "aliases": list(ALIASES[kind])})
    return web.json_response({"object": "list", "data": data})
