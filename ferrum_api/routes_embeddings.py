"""``POST /v1/embeddings``: input as a string, a list of strings, token ids or lists of token ids."""

from __future__ import annotations

import base64
import json

import numpy as np
from aiohttp import web

from executors.service.models import EMBEDDING

from .config import CONFIG, QUEUE
from .errors import invalid
from .routes_models import checked_executor
from .upload import too_large

MAX_INPUTS = 2048  # OpenAI's limit on the number of inputs per request


def _is_token_list(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(t, int) and not isinstance(t, bool)
                                                            for t in value)


def _texts(raw, executor) -> list[str]:
    """Normalise ``input`` to texts; token ids are this model's tokenizer ids, decoded back to text."""
    if isinstance(raw, str) or _is_token_list(raw):
        items = [raw]
    elif isinstance(raw, list) and raw and all(isinstance(x, str) or _is_token_list(x) for x in raw):
        items = raw
    else:
        raise invalid("'input' must be a string, a list of strings, a list of token ids or a list of such "
                      "lists, and must not be empty", param="input")
    if len(items) > MAX_INPUTS:
        raise invalid(f"'input' has {len(items)} items; at most {MAX_INPUTS} per request", param="input")
    texts = []
    vocab = len(executor.tokenizer)
    for item in items:
        if isinstance(item, str):
            if not item:
                raise invalid("'input' contains an empty string; embed at least one character", param="input")
            texts.append(item)
            continue
        if any(not 0 <= t < vocab for t in item):
            raise invalid(f"'input' has token ids outside this model's vocabulary (0..{vocab - 1}); token "
                          f"arrays must use {executor.model_id}'s tokenizer", param="input")
        texts.append(executor.tokenizer.decode(item, skip_special_tokens=True))
    return texts


def _encode(vector: np.ndarray, fmt: str):
    if fmt == "base64":
        return base64.b64encode(np.ascontiguousarray(vector, dtype="<f4").tobytes()).decode("ascii")
    return vector.astype(np.float32).tolist()


async def embeddings(request: web.Request) -> web.Response:
    limit = request.app[CONFIG].max_upload_bytes
    if request.content_length is not None and request.content_length > limit:
        raise too_large(limit)
    try:
        body = json.loads(await request.text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise invalid(f"The body is not valid JSON: {exc}", code="invalid_json") from exc
    if not isinstance(body, dict):
        raise invalid("The body must be a JSON object with 'model' and 'input'", code="invalid_json")
    if body.get("dimensions") is not None:
        raise invalid("'dimensions' is not supported: this server's embedding models have a fixed size "
                      "(see GET /v1/models); leave it out", param="dimensions", code="unsupported_parameter")
    fmt = body.get("encoding_format") or "float"
    if fmt not in ("float", "base64"):
        raise invalid(f"Unknown encoding_format '{fmt}'; use 'float' or 'base64'", param="encoding_format")
    executor = await checked_executor(request, EMBEDDING, body.get("model"))
    if "input" not in body:
        raise invalid("The 'input' field is required", param="input", code="missing_required_parameter")
    texts = _texts(body["input"], executor)
    vectors, tokens = await request.app[QUEUE].embed(texts)
    used = int(sum(tokens))
    return web.json_response({
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": _encode(v, fmt)} for i, v in enumerate(vectors)],
        "model": executor.model_id,
        "usage": {"prompt_tokens": used, "total_tokens": used},
    })
