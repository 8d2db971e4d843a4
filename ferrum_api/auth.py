"""Bearer-token authentication: the token is generated on first start and kept under ``data_dir()``."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from aiohttp import web

from executors.core.errors import IOError_
from executors.core.paths import data_dir

from .errors import ApiError

TOKEN_FILE = "api_token"


def token_path() -> Path:
    return data_dir() / TOKEN_FILE


def load_or_create_token(path: Path | None = None) -> str:
    """The saved token, or a new random one written (owner-only) on first use."""
    path = path or token_path()
    try:
        if path.is_file():
            token = path.read_text(encoding="utf-8").strip()
            if token:
                return token
        token = "fk-" + secrets.token_urlsafe(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fp:
            fp.write(token + "\n")
        return token
    except OSError as exc:
        raise IOError_(f"Cannot read or write the API token file {path}: {exc.strerror or exc}",
                       "check that the data folder is writable, or pass --token") from exc


def auth_middleware(token: str | None):
    """Reject requests without ``Authorization: Bearer <token>`` (None = authentication off)."""
    expected = token.encode() if token else None

    @web.middleware
    async def check(request: web.Request, handler):
        if expected is not None:
            header = request.headers.get("Authorization", "")
            scheme, _, given = header.partition(" ")
            if not header:
                raise ApiError(401, "Missing bearer token: send 'Authorization: Bearer <token>' (the token is shown "
                               "in Ferrum's settings and printed by 'ferrum serve')", code="invalid_api_key")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected):
                raise ApiError(401, "Incorrect API token provided; copy the token from Ferrum's settings "
                               "(API server) or from the output of 'ferrum serve'", code="invalid_api_key")
        return await handler(request)

    return check
